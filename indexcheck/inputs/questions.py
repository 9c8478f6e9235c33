"""Question sets: JSONL or CSV rows with ``id``, ``question`` and either ``expected`` chunk
ids or ``in_scope: false``; optional ``topic``, ``refusal_expected``, ``grades`` and
``filter`` (a portable metadata filter, :mod:`indexcheck.filters`: a JSON object, or in
CSV its JSON text; checked when the set is read).

``expected`` is a JSON list, or in CSV a ``|``-separated string. ``grades`` (optional) maps
chunk id -> graded relevance (numbers) for nDCG. A bad row raises DataFileError with its
line number.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DataFileError
from .corpus import chunk_id, chunk_text
from .files import loads_json
from .rowfiles import iter_rows, parse_rows

_TRUE = {"1", "true", "yes", "y", "t"}
_FALSE = {"0", "false", "no", "n", "f"}


@dataclass
class Question:
    """One question; ``expected`` is empty for an out-of-scope question."""

    id: str
    question: str
    expected: list[str] = field(default_factory=list)
    in_scope: bool = True
    topic: str | None = None
    refusal_expected: bool = False
    grades: dict[str, float] = field(default_factory=dict)
    #: the metadata filter the application searches this question with (canonical JSON
    #: object), None when it searches the whole index
    filter: dict[str, Any] | None = None


def _bool(value: Any, where: str, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE or text == "":
        return False
    raise DataFileError(f"{where}: '{name}' must be true or false, got {value!r}")


def _row_to_question(row: dict[str, Any], where: str, require_labels: bool = True) -> Question:
    qid, text = row.get("id"), row.get("question")
    if qid in (None, "") or not isinstance(text, str) or not text.strip():
        raise DataFileError(f"{where}: each question needs a non-empty 'id' and 'question'")
    qid = chunk_id(qid, where, "id")
    text = chunk_text(text, where, "question")
    raw_expected = row.get("expected")
    if isinstance(raw_expected, str):
        expected = [e.strip() for e in raw_expected.split("|") if e.strip()]
    elif isinstance(raw_expected, list):
        expected = [chunk_id(e, where, "expected") for e in raw_expected]
    elif raw_expected is None:
        expected = []
    else:
        raise DataFileError(f"{where}: 'expected' must be a list of chunk ids")
    in_scope_raw = row.get("in_scope")
    in_scope = True if in_scope_raw in (None, "") else _bool(in_scope_raw, where, "in_scope")
    if in_scope and not expected and require_labels:
        raise DataFileError(
            f"{where}: question '{qid}' has no 'expected' chunk ids; give them, "
            'or mark it "in_scope": false'
        )
    if not in_scope and expected:
        raise DataFileError(f"{where}: question '{qid}' is out of scope but lists 'expected'")
    grades_raw = row.get("grades") or {}
    if isinstance(grades_raw, str):
        try:
            grades_raw = loads_json(grades_raw, f"{where}: 'grades'")
        except json.JSONDecodeError:
            raise DataFileError(f"{where}: 'grades' must be a JSON object") from None
    if not isinstance(grades_raw, dict):
        raise DataFileError(f"{where}: 'grades' must map chunk ids to numbers")
    try:
        grades = {str(k): float(v) for k, v in grades_raw.items()}
    except (TypeError, ValueError):
        raise DataFileError(f"{where}: 'grades' values must be numbers") from None
    topic = row.get("topic")
    filter_ = _filter(row.get("filter"), where)
    return Question(
        id=str(qid),
        question=text,
        expected=expected,
        in_scope=in_scope,
        topic=str(topic) if topic not in (None, "") else None,
        refusal_expected=_bool(row.get("refusal_expected", False), where, "refusal_expected"),
        grades=grades,
        filter=filter_,
    )


def _filter(raw: Any, where: str) -> dict[str, Any] | None:
    """The question's filter as its canonical object; a bad one names the row."""
    if raw in (None, ""):
        return None
    from ..errors import FilterError
    from ..filters import parse_filter, to_obj

    try:
        return to_obj(parse_filter(raw if isinstance(raw, str | dict) else json.dumps(raw)))
    except FilterError as err:
        raise DataFileError(f"{where}: 'filter' is not a valid filter: {err}") from None


def load_questions(path: str | Path, require_labels: bool = True) -> list[Question]:
    """Read a question set; raises DataFileError naming the file and line of a bad row.

    ``require_labels=False`` accepts questions without ``expected`` (for compare-ann, which
    only needs the question texts).
    """
    p = Path(path)
    if not p.is_file():
        raise DataFileError(f"questions file {p} does not exist; check --questions")
    rows = list(iter_rows(p))
    return parse_rows(p, rows, "question", lambda w, row: _row_to_question(row, w, require_labels))
