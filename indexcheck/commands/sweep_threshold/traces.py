"""sweep-threshold --observed's traces read ahead of the sweep, so their warnings come
before it and a trace without scores is refused (exit 2) before any other work."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from ...inputs.answers import DEFAULT_CITATION_PATTERN, AnswerRow, read_answers
from ...inputs.corpus import Corpus
from ...inputs.given import corpus_of
from ...safety.textsafe import visible
from .observed import refuse_absent_scores, refuse_filter


@dataclass(frozen=True)
class ObservedTraces(Sequence[AnswerRow]):
    """The rows of a trace export (or answers file), a sequence of AnswerRow, with the file
    and format the manifest names and the export's warnings (escaped for a terminal)."""

    rows: list[AnswerRow]
    file: str
    format: str
    warnings: list[str] = field(default_factory=list)

    @overload
    def __getitem__(self, i: int) -> AnswerRow: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[AnswerRow]: ...
    def __getitem__(self, i: int | slice) -> AnswerRow | Sequence[AnswerRow]:
        return self.rows[i]

    def __len__(self) -> int:
        return len(self.rows)


def observed_traces(
    path: str | Path,
    answers_format: str | None = None,
    *,
    chunks: str | Path | Corpus | None = None,
    filter: Any = None,
) -> ObservedTraces:
    """A trace export (or answers file) read ahead of ``sweep_threshold(observed=...)``, as
    ``answers_format`` (None: sniffed; ``chunks`` pairs documents without ids by content
    hash). A ``filter`` is refused first, a document without a score next (InputError, the
    one error line, before any warning)."""
    refuse_filter(filter)
    read = read_answers(
        path, DEFAULT_CITATION_PATTERN, fmt=answers_format, chunks=corpus_of(chunks)
    )
    refuse_absent_scores(read.rows, str(path))
    warnings = [visible(w) for w in (read.source or {}).get("warnings", [])]
    return ObservedTraces(read.rows, str(path), read.format, warnings)


def unlabelled_warning(facts: dict[str, Any]) -> list[str]:
    """The warning (escaped) naming the traces the question set does not label, if any."""
    unlabelled = facts["unlabelled"]
    if not unlabelled:
        return []
    some = ", ".join(unlabelled[:3])
    return [
        f"{len(unlabelled)} of {facts['traces']} traces are left out: their question is not "
        f"labelled in --questions ({visible(some)}{', ...' if len(unlabelled) > 3 else ''})"
    ]


__all__ = ["ObservedTraces", "observed_traces", "unlabelled_warning"]
