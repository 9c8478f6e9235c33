"""The row-file refusals that chunks, questions and answers share (rowfiles.utf8_text,
rowfiles.parse_rows): the same words for the same fault, one line each, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from indexcheck.errors import DataFileError
from indexcheck.inputs.corpus import load_chunks
from indexcheck.inputs.questions import load_questions


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _q(qid: str) -> dict[str, object]:
    return {"id": qid, "question": "what?", "expected": ["c1"]}


def _refusal(call: object) -> DataFileError:
    with pytest.raises(DataFileError) as info:
        call()  # type: ignore[operator]
    assert info.value.exit_code == 2
    return info.value


def test_a_question_set_with_no_row_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "q.jsonl"
    p.write_text("\n\n", encoding="utf-8")
    assert str(_refusal(lambda: load_questions(p))) == f"{p} holds no questions"


def test_a_question_id_met_twice_is_refused_naming_it(tmp_path: Path) -> None:
    p = _jsonl(tmp_path / "q.jsonl", [_q("q1"), _q("q2"), _q("q1")])
    assert str(_refusal(lambda: load_questions(p))) == "q.jsonl: question id 'q1' appears twice"


def test_a_lone_surrogate_in_a_chunk_id_names_its_column(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    p.write_text('{"id": "a\\ud800", "text": "t"}\n', encoding="utf-8")
    said = str(_refusal(lambda: load_chunks(p)))
    assert said == (
        f"{p.name} line 1: column 'id' holds a lone surrogate, which is not valid UTF-8 text; "
        "fix the escape sequence in the file"
    )


def test_a_lone_surrogate_in_a_question_names_its_column(tmp_path: Path) -> None:
    p = tmp_path / "q.jsonl"
    p.write_text('{"id": "q1", "question": "a\\ud800", "expected": ["c1"]}\n', encoding="utf-8")
    assert "column 'question' holds a lone surrogate" in str(_refusal(lambda: load_questions(p)))
