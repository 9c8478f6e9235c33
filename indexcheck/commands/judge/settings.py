"""judge's and check-answers' options as the face receives them: one frozen object each,
built once by :func:`indexcheck.api.judge` / :func:`indexcheck.api.check_answers` and
passed down unchanged (field names and defaults are the api keywords')."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ...inputs.answers import DEFAULT_ANSWER_REFUSAL_PATTERN
from ..kit.settings import RETRIES, SEED, Settings

if TYPE_CHECKING:
    from ...inputs.answers import AnswerRow
    from ...inputs.corpus import Corpus
    from ...judges.base import Judge
    from ...stores.base import VectorStore


@dataclass(frozen=True)
class JudgeSettings(Settings):
    """Every option of ``indexcheck judge`` / :func:`indexcheck.api.judge`."""

    #: an answers file or trace export, or loaded rows
    answers: str | Path | Sequence[AnswerRow]
    #: a judge spec (``mistral:MODEL``, ``py:module:fn``) or an opened judge
    judge: str | Judge
    #: a prompt file; None: the shipped one
    prompt: str | Path | None = None
    #: a SQLite file of verdicts
    cache: str | Path | None = None
    retries: int = field(default=2, metadata=RETRIES)
    #: regex marking refused answers; None: none
    refusal_pattern: str | None = DEFAULT_ANSWER_REFUSAL_PATTERN
    allow_unjudged: bool = False
    #: where the contexts came from (a spec or a store): its fingerprint goes in the manifest
    store: str | VectorStore | None = None
    #: a chunks file or corpus: pairs a trace's documents without ids, and is the
    #: knowledge base of the answer checks
    chunks: str | Path | Corpus | None = None
    #: a trace export's format; None: sniffed
    answers_format: str | None = None
    #: regex of citation markers in the answers (group 1: the ids); None: the default
    citation_pattern: str | None = None
    #: run the no-model answer checks (URLs, references, numbers) too
    answer_checks: bool = False
    #: human verdicts (JSONL) to measure the judge's agreement with
    labels: str | Path | None = None
    #: the calibration's resampling seed (and the manifest's)
    seed: int = field(default=0, metadata=SEED)
    #: an evidence sheet folder to append this run's rows to (signed with
    #: INDEXCHECK_SHEET_KEY when set)
    sheet: str | Path | None = None
    #: store question and answer hashes in the sheet instead of their texts
    sheet_hashes_only: bool = False
    sheet_format: str = "jsonl"
    #: who ran this judgement, and a note (both go into the sheet)
    reviewer: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class CheckAnswersSettings(Settings):
    """Every option of ``indexcheck check-answers`` / :func:`indexcheck.api.check_answers`."""

    #: an answers file or trace export, or loaded rows
    answers: str | Path | Sequence[AnswerRow]
    #: a chunks file (``id_column``/``text_column``) or a corpus
    chunks: str | Path | Corpus
    #: regex of citation markers to drop from the answers; None: the default
    citation_pattern: str | None = None
    id_column: str = "id"
    text_column: str = "text"
    #: a trace export's format; None: sniffed
    answers_format: str | None = None


__all__ = ["CheckAnswersSettings", "JudgeSettings"]
