"""What sweep-threshold returns: each question's record and the sweep's result."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ...output.notebook import Notebook

Score = dict[str, float | None]


@dataclass
class QuestionRecord:
    """What retrieval returned for one question (scores on both scales)."""

    id: str
    in_scope: bool
    topic: str | None
    top_id: str | None
    top_score: Score
    top_is_refusal: bool
    expected_id: str | None = None
    expected_rank: int | None = None
    expected_score: Score | None = None
    #: the metadata filter the question was searched with (canonical JSON), or None
    filter: str | None = None


@dataclass
class SweepResult(Notebook):
    """The sweep: per-question records, one table row per threshold, and the verdict."""

    frames = ("table", "questions")

    ok: bool
    k: int
    fetch: int
    in_scope: int
    out_of_scope: int
    scale: dict[str, Any]
    rule: str
    recall_target: float
    min_in_scope_best: Score | None
    max_out_of_scope_top: Score | None
    separable: bool | None
    recommended_threshold: Score | None
    recommended_row: dict[str, Any] | None
    overlap: dict[str, list[str]]
    not_retrieved: list[str]
    handled_by_content: list[str]
    table: list[dict[str, Any]]
    questions: list[QuestionRecord]
    verdict: str
    plots: list[str] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)
    #: under filters: per distinct filter, its questions and separability (sweep_filters)
    by_filter: list[dict[str, Any]] | None = None
    #: warnings for stderr (escaped), e.g. traces the question set does not label; not in JSON
    warnings: list[str] = field(default_factory=list, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("warnings")
        if self.by_filter is None:  # an unfiltered run reads as before filters existed
            out.pop("by_filter")
            for q in out["questions"]:
                q.pop("filter", None)
        return out
