"""``indexcheck ci``: run the checks of ``[ci]`` in indexcheck.toml and gate a merge on them.

Exit codes: 0 every gate PASSed; 1 a gate is BLOCK or INSUFFICIENT_EVIDENCE (never a silent
pass); 2 bad config or input; 3 could not finish. ``--junit`` writes one testsuite with a
testcase per gate; BLOCK and INSUFFICIENT_EVIDENCE are both ``<failure>`` (with ``type``
set to the verdict), so a CI dashboard shows red whenever the exit code is 1.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import click

from .. import api
from ..commands.ci import PASS, CiConfig, CiResult, load_baseline
from ..errors import OutputError
from ..inputs.files import require_file
from ..output.files import write_atomic
from ..safety.redact import scrub
from ..safety.textsafe import xml_safe
from .command import Command
from .finish import finish, stamp
from .guard import ci_paths
from .options import input_file, output_file, output_options
from .progress import progress
from .session import warn_spec


@click.command("ci", cls=Command, more_paths=True)
@input_file(
    "--config",
    "ci_config",
    "Config file with the [ci] table (default: the group's --config, else ./indexcheck.toml).",
    dir_okay=False,
)
@input_file(
    "--baseline",
    "baseline_path",
    "JSON of an accepted earlier run (indexcheck ci --json) to compare with, "
    "question by question, under non-inferiority margins.",
    dir_okay=False,
)
@output_file("--junit", "junit_path", "Write a JUnit XML file: one testcase per gate.")
@click.option(
    "--baseline-any-store",
    is_flag=True,
    help="Compare with a baseline measured on another store or embedder (reported).",
)
@output_options
@click.pass_context
def ci_cmd(
    ctx: click.Context,
    ci_config: Path | None,
    baseline_path: Path | None,
    junit_path: Path | None,
    baseline_any_store: bool,
    json_path: str | None,
    report_dir: Path | None,
) -> None:
    """Run the configured checks and gate on declared limits and on a baseline.

    Exit 0 when every gate passes, 1 when one blocks or lacks evidence, 2 for bad config.
    """
    parent = ctx.parent.params.get("config") if ctx.parent is not None else None
    path = ci_config or parent or Path("indexcheck.toml")
    require_file(path, "config file", "pass --config PATH (see examples/indexcheck.toml)")
    config = CiConfig.from_toml(path)
    baseline_path = baseline_path or config.baseline_path
    ci_paths(ctx, config, path, baseline_path)  # no output over an input of [ci]
    baseline = load_baseline(baseline_path) if baseline_path is not None else None
    warn_spec(config.store)
    with progress() as say:
        result = api.run_ci(config, baseline, say, baseline_any_store=baseline_any_store)
    stamp(ctx, result)  # the JUnit file carries the manifest too
    if junit_path is not None:
        try:  # atomically: a failed write leaves the old file whole, never half a file
            write_atomic(junit_path, junit_xml(result))
        except OSError as exc:
            raise OutputError(
                f"could not write --junit {junit_path}: {exc.strerror or exc}"
            ) from None
    ctx.exit(finish(ctx, result, report=_report))


def _report(result: CiResult, folder: Path) -> list[Path]:
    from ..output.render.html import write_report

    return write_report([result], folder, title="indexcheck ci")


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
