"""The judge's report: claims tables coloured by final verdict, spans highlighted in their
passages, data escaped; rendered by headless Chromium."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from indexcheck.cli.app import cli
from tests.browser_support import needs_browser, screenshot

ROOT = Path(__file__).resolve().parents[3]
ANSWERS = ROOT / "fixtures" / "judge" / "answers.jsonl"


def judge_report(tmp_path: Path, answers: Path = ANSWERS) -> list[Path]:
    out = tmp_path / "j.json"
    r = CliRunner(env={"INDEXCHECK_QUIET": "1"}).invoke(
        cli, ["judge", "--answers", str(answers), "--judge", "py:tests.judge_hook:fixture_judge",
              "--json", str(out), "--report", str(tmp_path / "rep")])  # fmt: skip
    assert r.exit_code == 1, r.output
    return [Path(p) for p in json.loads(out.read_text())["report"]]


def test_report_has_claims_tables_with_highlighted_spans(tmp_path: Path) -> None:
    page, md = judge_report(tmp_path)[:2]
    text = page.read_text()
    assert page.name == "judge.html" and md.name == "judge.md"
    assert text.count('<tr class="c-SUPPORTED">') == 7
    assert text.count('<tr class="c-UNSUPPORTED">') == 3
    assert "<mark>can get a free visitor card valid for 3 months</mark>" in text
    assert "not proven true" in text and "Verdict: FAIL" in text
    assert "**can get a free visitor card valid for 3 months**" in md.read_text()
    assert "judge: claims against their context" in md.read_text()


def test_report_escapes_data(tmp_path: Path) -> None:
    rows = [json.loads(x) for x in ANSWERS.read_text().splitlines()]
    rows[0]["id"] = "<script>alert(1)</script>"
    path = tmp_path / "evil.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in rows))
    page = judge_report(tmp_path, path)[0]
    text = page.read_text()
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text


@needs_browser
def test_claims_table_renders_in_headless_chromium(tmp_path: Path) -> None:
    page = judge_report(tmp_path)[0]
    px = screenshot(page, (1280, 2400), tmp_path).reshape(-1, 3)
    near = lambda c: int((np.abs(px - np.asarray(c)).sum(axis=1) < 30).sum())  # noqa: E731
    assert near((0xDA, 0xFB, 0xE1)) > 20_000  # green rows: SUPPORTED claims
    assert near((0xFF, 0xEB, 0xE9)) > 10_000  # red rows and the FAIL banner
    assert near((0xFF, 0xF8, 0xC5)) > 2_000  # the PARTIALLY_SUPPORTED row
    assert near((0xFF, 0xD3, 0x3D)) > 1_000  # spans highlighted inside their passages
