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
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...errors import OutputError
from ...inputs.answers import (
    DEFAULT_ANSWER_REFUSAL_PATTERN,
    DEFAULT_CITATION_PATTERN,
    AnswerRow,
    compile_pattern,
    is_refusal,
)
from ...inputs.questions import Question
from ...output.notebook import Notebook
from ...safety.textsafe import visible


@dataclass(frozen=True)
class TraceRefusalsSettings:
    """Every option of ``traces refusals`` as :func:`indexcheck.api.trace_refusals` takes it."""

    #: a trace export or an answers file
    answers: str | Path
    refusal_pattern: str = DEFAULT_ANSWER_REFUSAL_PATTERN
    #: the export's format (None: sniffed)
    answers_format: str | None = None
    #: a chunks file (``id_column``/``text_column``) or a Corpus: pairs documents without ids
    chunks: Any = None
    id_column: str = "id"
    text_column: str = "text"
    #: a labelled question set (a path or loaded questions) the refusals take labels from
    questions: str | Path | Sequence[Question] | None = None
    #: where to write the refusals as a question set (JSONL); None: not written
    out: str | Path | None = None


@dataclass
class Refusal:
    """One answer that refused: its id (the trace id), question, answer and the ids of the
    documents it was given, in rank order."""

    id: str
    question: str
    answer: str
    retrieved: list[str]


@dataclass
class RefusalsResult(Notebook):
    """The refusals among ``answers`` answers of ``source``."""

    frames = ("refusals",)

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

    def lines(self) -> list[str]:
        """The terminal summary, every id, text and path escaped: each refusal, the count,
        and what was written (or not) with the diagnose command to run next."""
        out = []
        for r in self.refusals:
            ids = ", ".join(r.retrieved) or "nothing"
            out.append(
                f"{visible(r.id)}: {visible(r.question)}\n  answer: {visible(r.answer)}\n"
                f"  retrieved: {visible(ids)}"
            )
        rate = f" ({self.rate:.1%})" if self.rate is not None else ""
        fmt = (self.answers_source or {}).get("format")
        out.append(f"{len(self.refusals)} of {self.answers} answers refused{rate} [format {fmt}]")
        if self.written is not None:
            guessed = self.labelled_from_retrieved
            note = (
                f"; {guessed} take as 'expected' the chunks their trace retrieved: replace them "
                "with the chunk that should have answered"
                if guessed
                else ""
            )
            written = self.labelled_from_questions + self.labelled_from_retrieved
            out.append(
                f"wrote {written} questions to {visible(self.written)}{note}; then run diagnose "
                f"--questions {visible(self.written)} --answers {visible(self.source)}"
            )
        if self.not_written:
            out.append(
                f"not written ({len(self.not_written)} retrieved nothing, so they have no "
                "label): " + visible(", ".join(self.not_written))
            )
        return out


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


def warning_lines(source: Mapping[str, Any] | None) -> list[str]:
    """``warning: ...`` for each warning an answers file's ``source`` recorded, escaped."""
    return [f"warning: {visible(w)}" for w in (source or {}).get("warnings", [])]


def trace_refusals(settings: TraceRefusalsSettings) -> RefusalsResult:
    """``traces refusals``: the refusal pattern checked, the labelled questions, chunks and
    answers read (in that order), the refusals found and, with ``out``, written."""
    from ...inputs.answers import read_answers
    from ...inputs.given import corpus_of

    s = settings
    compile_pattern(s.refusal_pattern, "--refusal-pattern")
    labelled = None
    if s.questions is not None:
        from ...inputs.questions import load_questions

        given = s.questions
        labelled = (
            load_questions(given, require_labels=False)
            if isinstance(given, str | Path)
            else list(given)
        )
    corpus = corpus_of(s.chunks, s.id_column, s.text_column)
    read = read_answers(s.answers, DEFAULT_CITATION_PATTERN, fmt=s.answers_format, chunks=corpus)
    result = find_refusals(read.rows, s.refusal_pattern, str(s.answers))
    result.answers_source = read.source or {"format": read.format}
    if s.out is not None:
        write_questions(result, Path(s.out), labelled)
    return result
