"""ci's ``--junit`` file: one testcase per gate row and per baseline comparison; BLOCK and
INSUFFICIENT_EVIDENCE are both ``<failure>`` (``type`` the verdict), so a CI dashboard is red
whenever the exit code is 1."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from ...errors import OutputError
from ...output.files import write_atomic
from ...safety.redact import scrub
from ...safety.textsafe import xml_safe
from .config import PASS
from .result import CiResult


def write_junit(result: CiResult, path: str | Path) -> None:
    """Write :func:`junit_xml` of ``result`` to ``path`` atomically (a failed write leaves
    the old file whole, never half a file); OutputError when it cannot be written."""
    try:
        write_atomic(Path(path), junit_xml(result))
    except OSError as exc:
        raise OutputError(f"could not write --junit {path}: {exc.strerror or exc}") from None


def _value(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def _cases(result: CiResult) -> list[dict[str, str]]:
    """One JUnit testcase per gate row and per baseline comparison."""
    cases = [
        {
            "classname": f"indexcheck.ci.{g.check}",
            "name": f"{g.metric} {g.op} {_value(g.limit)}",
            "verdict": g.verdict,
            "detail": g.detail,
            "out": f"measured {_value(g.value)}",
        }
        for g in result.gates
    ]
    for r in (result.baseline or {}).get("rows", []):
        cases.append(
            {
                "classname": "indexcheck.ci.baseline",
                "name": f"{r['label']} non-inferior to baseline (margin {r['margin']:g})",
                "verdict": r["verdict"],
                "detail": r["detail"],
                "out": f"{r['method']}; baseline {_value(r['baseline'])}, "
                f"current {_value(r['current'])}",
            }
        )
    return cases


def junit_xml(result: CiResult) -> bytes:
    """JUnit XML: ``<testsuites>`` holding one ``<testsuite name="indexcheck ci">``; a
    BLOCK or INSUFFICIENT_EVIDENCE gate is a ``<failure type="VERDICT">``."""
    cases = _cases(result)
    m = result.manifest
    failures = sum(1 for c in cases if c["verdict"] != PASS)
    counts = {"tests": str(len(cases)), "failures": str(failures), "errors": "0"}
    seconds = str(m.get("wall_seconds", 0))
    root = ET.Element("testsuites", {"name": "indexcheck", "time": seconds, **counts})
    suite = ET.SubElement(
        root,
        "testsuite",
        {
            "name": "indexcheck ci",
            **counts,
            "skipped": "0",
            "time": seconds,
            "timestamp": str(m.get("started_at", "")),
        },
    )
    props = ET.SubElement(suite, "properties")
    for key, value in (
        ("verdict", result.verdict),
        ("indexcheck._version", m.get("version")),
        ("store", (m.get("store") or {}).get("spec")),
        ("index_fingerprint", m.get("index_fingerprint")),
        ("seed", m.get("seed")),
        ("config", m.get("config")),
        ("baseline", m.get("baseline")),
    ):
        if value is not None:
            ET.SubElement(props, "property", name=key, value=str(value))
    for c in cases:
        tc = ET.SubElement(suite, "testcase", classname=c["classname"], name=c["name"], time="0")
        if c["verdict"] != PASS:
            failure = ET.SubElement(
                tc, "failure", type=c["verdict"], message=f"{c['verdict']}: {c['detail']}"
            )
            failure.text = f"{c['verdict']}: {c['detail']} ({c['out']})"
        ET.SubElement(tc, "system-out").text = c["out"]
    ET.SubElement(suite, "system-out").text = result.summary
    for el in root.iter():  # store paths, ids and messages may hold what XML 1.0 forbids
        if el.text:
            el.text = xml_safe(scrub(el.text))
        for name, value in el.attrib.items():
            el.attrib[name] = xml_safe(scrub(value))
    ET.indent(root)
    return bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True)) + b"\n"
