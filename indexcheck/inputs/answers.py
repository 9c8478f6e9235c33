"""Answers to judge: JSONL, CSV or Parquet rows of ``id``, ``question``, ``answer``, ``contexts``.

``contexts`` is a list of ``{id, text, version?, rank?, score?}`` in the order retrieval
returned them (a JSON string in CSV). Optional: ``context`` (the exact text the model received,
when it differs from the passages joined), ``citations`` (passage ids displayed with the
answer), ``expected`` and ``in_scope`` as in question sets, ``refused`` (true/false). Citation
markers in the answer text (``--citation-pattern``, default ``\\[([^\\]]+)\\]``) are attached to
the sentence they stand in; a marker that is a number n names the n-th passage. A bad row
raises DataFileError with its line number.

Production trace exports (OpenInference/Phoenix, OTLP, Langfuse, LangSmith) are read into
the same rows by :mod:`indexcheck.inputs.formats.traces` (:func:`read_answers`).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DataFileError
from ..safety.textsafe import visible
from .files import loads_json
from .rowfiles import iter_rows, parse_rows, utf8_text

DEFAULT_CITATION_PATTERN = r"\[([^\]]+)\]"
#: answers that decline to answer, in the words assistants use
DEFAULT_ANSWER_REFUSAL_PATTERN = (
    r"(?i)\b(i (?:do not|don't|cannot|can't) (?:know|answer|find|help)|"
    r"(?:the|my) (?:sources|documents|context) (?:do not|don't) (?:say|cover|mention)|"
    r"no information (?:about|on))"
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_TRUE = {"1", "true", "yes", "y", "t"}
_FALSE = {"0", "false", "no", "n", "f", ""}


@dataclass(frozen=True)
class Passage:
    """One retrieved passage as the application received it (rank is 1-based)."""

    id: str
    text: str
    version: str | None = None
    rank: int | None = None
    score: float | None = None


@dataclass(frozen=True)
class Sentence:
    """One sentence of the answer, without its citation markers, and the ids it cites."""

    text: str
    cited: tuple[str, ...]


@dataclass
class AnswerRow:
    """One answered question with the context it was given."""

    id: str
    question: str
    answer: str
    contexts: list[Passage]
    context: str | None = None
    citations: list[str] | None = None
    expected: list[str] = field(default_factory=list)
    in_scope: bool = True
    refused: bool | None = None
    sentences: list[Sentence] = field(default_factory=list)

    @property
    def context_sent(self) -> str:
        """The exact text the model received: ``context``, else the passages joined."""
        if self.context is not None:
            return self.context
        return "\n\n".join(p.text for p in self.contexts)


def _id(value: Any, where: str, name: str) -> str:
    """An id as text: a string or an integer (never a bool, float, object or list)."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        kind = type(value).__name__
        raise DataFileError(f"{where}: {name} must be a string, not a {kind}")
    return utf8_text(str(value), where, name)


def _bool(value: Any, where: str, name: str) -> bool | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return None if text == "" else False
    raise DataFileError(f"{where}: '{name}' must be true or false, got {visible(repr(value))}")


def _list(value: Any, where: str, name: str) -> list[Any] | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = loads_json(text, f"{where}: '{name}'")
            except json.JSONDecodeError:
                raise DataFileError(f"{where}: '{name}' is not a valid JSON list") from None
        else:
            return [v.strip() for v in text.split("|") if v.strip()]
    if hasattr(value, "tolist"):
        value = value.tolist()
    if not isinstance(value, list):
        raise DataFileError(f"{where}: '{name}' must be a list")
    return value


def _passage(item: Any, where: str, i: int) -> Passage:
    if not isinstance(item, dict) or not isinstance(item.get("text"), str):
        raise DataFileError(f"{where}: contexts[{i}] must be an object with 'id' and 'text'")
    pid = item.get("id")
    if pid in (None, ""):
        raise DataFileError(f"{where}: contexts[{i}] has no 'id'")
    rank, score = item.get("rank"), item.get("score")
    try:
        if isinstance(rank, bool) or isinstance(score, bool):
            raise TypeError
        rank = int(rank) if rank is not None else i + 1
        score = float(score) if score is not None else None
        if rank < 1 or (score is not None and not math.isfinite(score)):
            raise ValueError
    except (TypeError, ValueError, OverflowError):
        raise DataFileError(
            f"{where}: contexts[{i}] 'rank'/'score' must be numbers (rank 1 or more, score finite)"
        ) from None
    version = item.get("version")
    return Passage(
        _id(pid, where, f"contexts[{i}] 'id'"),
        utf8_text(item["text"], where, f"contexts[{i}] 'text'"),
        None if version is None else utf8_text(str(version), where, f"contexts[{i}] 'version'"),
        rank,
        score,
    )


def split_sentences(
    answer: str, pattern: re.Pattern[str], passages: list[Passage]
) -> list[Sentence]:
    """Sentences of the answer with the ids their markers cite; a marker standing after a
    sentence's full stop belongs to that sentence."""
    ids = [p.id for p in passages]
    out: list[Sentence] = []
    for part in _SENTENCE_END.split(answer.strip()):
        cited: list[str] = []
        for m in pattern.finditer(part):
            body = m.group(1) if m.groups() else m.group(0)
            for ref in re.split(r"\s*[,;]\s*", body.strip()):
                if ref.isdigit() and ref not in ids and 1 <= int(ref) <= len(ids):
                    ref = ids[int(ref) - 1]
                if ref and ref not in cited:
                    cited.append(ref)
        text = " ".join(pattern.sub(" ", part).split())
        if not text.strip(" .!?") and out:  # markers alone: they cite the previous sentence
            prev = out[-1]
            out[-1] = Sentence(prev.text, tuple(dict.fromkeys((*prev.cited, *cited))))
            continue
        out.append(Sentence(text, tuple(cited)))
    return out


def row_to_answer(row: dict[str, Any], where: str, pattern: re.Pattern[str]) -> AnswerRow:
    """One answer from a parsed row; raises DataFileError naming ``where``."""
    aid, question, answer = row.get("id"), row.get("question"), row.get("answer")
    if aid in (None, "") or not isinstance(question, str) or not question.strip():
        raise DataFileError(f"{where}: each answer needs a non-empty 'id' and 'question'")
    if not isinstance(answer, str):
        raise DataFileError(f"{where}: 'answer' must be a string (use \"\" for no answer)")
    aid = _id(aid, where, "'id'")
    utf8_text(question, where, "'question'")
    utf8_text(answer, where, "'answer'")
    raw_contexts = _list(row.get("contexts"), where, "contexts")
    if raw_contexts is None:
        raise DataFileError(
            f"{where}: answer '{visible(aid)}' has no 'contexts'; give the passages the model "
            "received as a list of {{id, text}} (an empty list when there were none)"
        )
    contexts = [_passage(item, where, i) for i, item in enumerate(raw_contexts)]
    context = row.get("context")
    if context is not None and not isinstance(context, str):
        raise DataFileError(f"{where}: 'context' must be a string")
    if context is not None:
        utf8_text(context, where, "'context'")
    citations = _list(row.get("citations"), where, "citations")
    expected = _list(row.get("expected"), where, "expected") or []
    in_scope = _bool(row.get("in_scope"), where, "in_scope")
    out = AnswerRow(
        id=aid,
        question=question,
        answer=answer,
        contexts=contexts,
        context=context or None,
        citations=None if citations is None else [_id(c, where, "'citations'") for c in citations],
        expected=[_id(e, where, "'expected'") for e in expected],
        in_scope=True if in_scope is None else in_scope,
        refused=_bool(row.get("refused"), where, "refused"),
    )
    sentences = split_sentences(answer, pattern, contexts)
    if out.citations is not None:  # displayed with the answer as a whole: every sentence
        sentences = [Sentence(s.text, tuple(out.citations)) for s in sentences]
    out.sentences = sentences
    return out


def compile_pattern(pattern: str, option: str, *, ids: bool = False) -> re.Pattern[str]:
    """A user's regex, or InputError naming the option. A pattern that matches an empty
    text would match every answer (every answer a refusal: nothing judged, a silent pass);
    a citation pattern (``ids=True``) must capture the ids in group 1."""
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise DataFileError(f"{option} '{visible(pattern)}' is not a valid regex: {exc}") from None
    if compiled.search("") is not None:
        raise DataFileError(
            f"{option} '{visible(pattern)}' matches an empty text, so it matches every answer; "
            "write a pattern that needs at least one character"
        )
    if ids and compiled.groups < 1:
        raise DataFileError(
            f"{option} '{visible(pattern)}' has no group: group 1 must capture the cited ids, "
            r"e.g. \[([^\]]+)\]"
        )
    return compiled


@dataclass
class AnswersRead:
    """The answers of an ``--answers`` file, its format and, for a trace export, what the
    export said about itself (traces, documents, ``scores`` present/absent, documents
    paired by content hash, warnings): ``source`` is None for indexcheck's own format."""

    rows: list[AnswerRow]
    format: str = "own"
    source: dict[str, Any] | None = None


def read_answers(
    path: str | Path,
    citation_pattern: str = DEFAULT_CITATION_PATTERN,
    *,
    fmt: str | None = None,
    chunks: Any = None,
) -> AnswersRead:
    """Read an answers file or a trace export (``fmt``: own, openinference, otlp, langfuse,
    langsmith; None sniffs it); ``chunks`` (a Corpus) pairs documents without ids by
    content hash. Raises DataFileError naming the file and line (or span) of a bad row."""
    p = Path(path)
    if not p.is_file():
        raise DataFileError(f"answers file {p} does not exist; check --answers")
    pattern = compile_pattern(citation_pattern, "--citation-pattern", ids=True)
    from .formats.traces import check_named, read_traces, sniff_format

    if fmt is None:
        fmt = sniff_format(p)
    else:
        check_named(p, fmt)
    source = None
    if fmt == "own":
        rows = list(iter_rows(p))
    else:
        traces = read_traces(p, fmt, chunks)
        rows, source = traces.rows, traces.summary()
    answers = parse_rows(p, rows, "answer", lambda w, row: row_to_answer(row, w, pattern), visible)
    return AnswersRead(answers, fmt, source)


def load_answers(
    path: str | Path,
    citation_pattern: str = DEFAULT_CITATION_PATTERN,
    *,
    fmt: str | None = None,
    chunks: Any = None,
) -> list[AnswerRow]:
    """Read an answers file (or a trace export, see :func:`read_answers`); raises
    DataFileError naming the file and line of a bad row."""
    return read_answers(path, citation_pattern, fmt=fmt, chunks=chunks).rows


def is_refusal(row: AnswerRow, pattern: re.Pattern[str]) -> bool:
    """The row's ``refused`` flag when given, else whether the answer matches the pattern."""
    if row.refused is not None:
        return row.refused
    return not row.answer.strip() or bool(pattern.search(row.answer))
