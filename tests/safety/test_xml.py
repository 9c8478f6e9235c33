"""XML and HTML outputs hold no character XML 1.0 forbids, whatever a store path, an id or a
message held: JUnit parses with xml.etree, the HTML report holds the characters as visible
escapes."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.commands.ci import PASS, CiResult
from indexcheck.commands.ci.junit import junit_xml
from indexcheck.safety.textsafe import visible, xml_safe
from tests.commands.ci.test_gates import make_kb

FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
HOSTILE = "kb\x01\x1b[31mred\x0bvt"


def test_junit_and_html_with_control_characters_in_the_store_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("INDEXCHECK_QUIET", "1")
    if True:
        kb = make_kb(tmp_path / HOSTILE)
        store = "faiss:" + str(kb["good"])
        cfg = tmp_path / "ci.toml"
        cfg.write_text(
            f"[ci]\nstore = {json.dumps(store)}\n"
            'embedder = "py:indexcheck.testing:HASH32"\n'
            f"chunks = {json.dumps(str(kb['chunks']))}\n\n"
            '[ci.check-index]\nsample = 20\n\n[ci.probe-scale]\nexpect = "dot"\n'
        )
        junit, report = tmp_path / "junit.xml", tmp_path / "report"
        r = CliRunner().invoke(
            cli, ["ci", "--config", str(cfg), "--junit", str(junit), "--report", str(report)]
        )
    assert r.exit_code == 0, r.output
    raw = junit.read_text(encoding="utf-8")
    assert not FORBIDDEN.search(raw)
    root = ET.fromstring(junit.read_bytes())  # parses: no character XML 1.0 forbids
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["store"] == visible(store)  # shown as \x01 \x1b, not dropped
    assert "\\x01\\x1b[31mred\\x0bvt" in props["store"]
    page = (report / "report.html").read_text(encoding="utf-8")
    assert not FORBIDDEN.search(page) and "\\x01\\x1b" in page


def test_junit_of_a_result_holding_every_forbidden_kind() -> None:
    """Lone surrogates (an undecodable file name), U+FFFE/U+FFFF and C0 controls in the
    manifest and the summary: the document still parses, tab/LF/CR kept."""
    nasty = "a\x00b\x08c\x0cd\x1fe\udcfff\ufffeg\uffffh\ti\nj"
    result = CiResult(
        verdict=PASS,
        checks={},
        gates=[],
        baseline=None,
        per_question=None,
        results={},
        config={},
        summary=f"summary {nasty}",
        manifest={"store": {"spec": f"faiss:{nasty}"}, "config": nasty, "seed": 0},
    )
    data = junit_xml(result)
    root = ET.fromstring(data)
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["config"] == xml_safe(nasty)
    assert "\\udcff" in props["config"] and "\\x00" in props["config"]
    out = root.find("testsuite/system-out")
    assert out is not None and out.text is not None and "\t" in out.text


def test_xml_safe_keeps_what_xml_allows() -> None:
    allowed = "tab\tlf\ncr\r é ✓ \u2028 \x85 \x7f"
    assert xml_safe(allowed) == allowed
    assert xml_safe("\x01\ud800\uffff") == "\\x01\\ud800\\uffff"
