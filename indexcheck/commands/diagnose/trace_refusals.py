"""Production answers that refused, as a question set for ``diagnose``.

A refusal is an answer :func:`~indexcheck.inputs.answers.is_refusal` marks (the ``refused``
flag, an empty answer, or the refusal pattern). Each becomes a question-set row whose id is
the answer's (the trace id), so ``diagnose --questions OUT --answers TRACES`` pairs them.
A production trace does not know which chunk should have answered. When a labelled question
set is given, a refusal whose question is in it (same text, case and outer whitespace aside)
takes its labels (``expected_from: "questions"``; an out-of-scope one stays out of scope).
Otherwise ``expected`` is filled with the chunks the application retrieved
(``expected_from: "retrieved"``), a starting label to replace with the chunk that holds the
answer before trusting a retrieval label. A refusal that neither has is listed but not
written (it has no label at all).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...errors import OutputError
from ...inputs.answers import AnswerRow, compile_pattern, is_refusal
from ...inputs.questions import Question


@dataclass
class Refusal:
    """One answer that refused: its id (the trace id), question, answer and the ids of the
    documents it was given, in rank order."""

    id: str
    question: str
    answer: str
    retrieved: list[str]


@dataclass
class RefusalsResult:
    """The refusals among ``answers`` answers of ``source``."""

    source: str
    answers: int
    refusals: list[Refusal]
    refusal_pattern: str
    answers_source: dict[str, Any] | None = None
    written: str | None = None
    not_written: list[str] = field(default_factory=list)
    labelled_from_questions: int = 0  # rows whose labels came from a question set
    labelled_from_retrieved: int = 0  # rows whose 'expected' is what the trace retrieved

    @property
    def rate(self) -> float | None:
        return len(self.refusals) / self.answers if self.answers else None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "rate": self.rate}


def find_refusals(rows: list[AnswerRow], refusal_pattern: str, source: str = "") -> RefusalsResult:
    """The rows that refused, in file order."""
    pattern = compile_pattern(refusal_pattern, "--refusal-pattern")
    refusals = [
        Refusal(r.id, r.question, r.answer, [p.id for p in r.contexts])
        for r in rows
        if is_refusal(r, pattern)
    ]
    return RefusalsResult(source, len(rows), refusals, refusal_pattern)


def _key(question: str) -> str:
    return " ".join(question.split()).casefold()


def question_rows(
    result: RefusalsResult, labelled: list[Question] | None = None
) -> list[dict[str, Any]]:
    """Question-set rows (``id``, ``question``, ``expected`` or ``in_scope: false``) for
    the refusals with a label (see the module doc); the others' ids go to
    ``result.not_written``."""
    labels = {_key(q.question): q for q in labelled or []}
    out = []
    result.not_written = []
    result.labelled_from_questions = result.labelled_from_retrieved = 0
    for r in result.refusals:
        row: dict[str, Any] = {"id": r.id, "question": r.question}
        known = labels.get(_key(r.question))
        if known is not None and (known.expected or not known.in_scope):
            if known.in_scope:
                row["expected"] = list(known.expected)
            else:
                row["in_scope"] = False
            row["expected_from"] = f"questions:{known.id}"
            result.labelled_from_questions += 1
        elif r.retrieved:
            row |= {"expected": r.retrieved, "expected_from": "retrieved"}
            result.labelled_from_retrieved += 1
        else:
            result.not_written.append(r.id)
            continue
        out.append(row | {"refused_answer": r.answer})
    return out


def write_questions(
    result: RefusalsResult, path: Path, labelled: list[Question] | None = None
) -> int:
    """Write the question set (JSONL) to ``path``; the number of rows written."""
    rows = question_rows(result, labelled)
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"could not write --out {path}: {exc.strerror or exc}") from None
    result.written = str(path)
    return len(rows)
