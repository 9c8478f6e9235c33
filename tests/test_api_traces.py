"""The face functions behind ``traces refusals`` and the shared ``--answers`` reader:
``api.trace_refusals``, ``api.read_answers``, ``api.answers_warnings``."""

from __future__ import annotations

import json
from pathlib import Path

from indexcheck import api


def _answers(tmp_path: Path) -> Path:
    rows = [
        {"id": "a1", "question": "Opening hours?", "answer": "9 to 5 [c1]",
         "contexts": [{"id": "c1", "text": "Open 9 to 5."}]},
        {"id": "a2", "question": "Late fees\x1b[31m?", "answer": "I don't know.",
         "contexts": [{"id": "c2", "text": "Fees are $1 a day."}]},
    ]  # fmt: skip
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_trace_refusals_finds_writes_and_escapes(tmp_path: Path) -> None:
    out = tmp_path / "refused.jsonl"
    result = api.trace_refusals(_answers(tmp_path), out=out)
    assert [r.id for r in result.refusals] == ["a2"] and result.answers == 2
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert written[0]["expected"] == ["c2"] and written[0]["expected_from"] == "retrieved"
    lines = result.lines()
    assert "\x1b" not in "".join(lines)  # a control character is shown, not sent
    assert lines[1] == "1 of 2 answers refused (50.0%) [format own]"
    assert lines[2].startswith(f"wrote 1 questions to {out}; 1 take as 'expected'")


def test_read_answers_and_its_warnings(tmp_path: Path) -> None:
    read = api.read_answers(_answers(tmp_path))
    assert read.format == "own" and [a.id for a in read.rows] == ["a1", "a2"]
    assert api.answers_warnings(read.source) == []
    warned = api.answers_warnings({"warnings": ["scores are absent\x07"]})
    assert warned[0].startswith("warning: scores are absent") and "\x07" not in warned[0]
