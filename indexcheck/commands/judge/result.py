"""What judge returns: each claim's and answer's result, and the run's result."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ...output.notebook import Notebook
from ...output.result_json import json_form
from .claims import CitationStatus, ClaimVerdict


class AnswerStatus(StrEnum):
    """What became of one answer, in this order."""

    JUDGED = "JUDGED"
    REFUSAL = "REFUSAL"
    UNJUDGED = "UNJUDGED"


@dataclass
class ClaimResult:
    """One claim with the judge's verdict, indexcheck's checks and the final verdict.

    ``evidence``: where the span sits, ``{passage, version, rank, start, end}`` (character
    offsets in the passage text) plus ``excerpt`` (the passage from ``excerpt_start``, up to
    300 characters either side of the span), or None; ``numbers_not_in_answer``: numbers the
    judge put
    in the claim that the answer never states.
    """

    claim: str
    judge_verdict: ClaimVerdict
    verdict: ClaimVerdict
    evidence_span: str
    span_found: bool | None
    supported_by: list[str]
    numbers_unsupported: list[str]
    numbers_not_in_answer: list[str]
    cited: list[str]
    citation_status: CitationStatus
    rationale: str
    missing: str | None = None
    evidence: dict[str, Any] | None = None


@dataclass
class AnswerResult:
    """One answer: status, groundedness (SUPPORTED / claims, None without claims), claims."""

    id: str
    status: AnswerStatus
    groundedness: float | None
    claims: list[ClaimResult] = field(default_factory=list)
    raw_reply: str | None = None
    problem: str | None = None
    cached: bool = False


@dataclass
class JudgeResult(Notebook):
    """The run: answers, counts per verdict and status, the supported rate with its interval."""

    frames = ("claims", "answers")

    ok: bool
    judge: str
    prompt_version: str
    answers: list[AnswerResult]
    counts: dict[str, int]
    judge_counts: dict[str, int]
    statuses: dict[str, int]
    citations: dict[str, int]
    supported_rate: dict[str, Any]
    unjudged: list[str]
    allow_unjudged: bool
    calibration: dict[str, Any] | None = None
    sheet: dict[str, Any] | None = None
    """``{"run_id", "files"}`` when the run was appended to an evidence sheet."""
    manifest: dict[str, Any] = field(default_factory=dict)
    answer_checks: dict[str, Any] | None = None
    """The no-model checks of :mod:`.answer_checks` over the judged answers (the CLI always
    runs them: against the context, and the knowledge base with --chunks); absent from the
    JSON when not run. They never change ``ok``."""

    def to_dict(self) -> dict[str, Any]:
        return json_form(self, "answer_checks")

    def frame_rows(self, rows: str) -> list[dict[str, Any]]:
        """``claims``: one row per claim, led by its answer's id and status; else the
        JSON rows."""
        if rows != "claims":
            return super().frame_rows(rows)
        return [
            {"answer_id": a["id"], "answer_status": a["status"], **c}
            for a in self.to_dict()["answers"]
            for c in a["claims"]
        ]
