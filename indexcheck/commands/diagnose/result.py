"""What diagnose returns: one diagnosis per question and the run's result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...output.notebook import Notebook
from ...output.result_json import json_form
from ..kit.verdicts import Label
from .metrics import MetricSet


@dataclass
class QuestionDiagnosis:
    """One question's label and the evidence for it (ranks are 1-based, as people count:
    the first result is rank 1; scores on the
    backend's scale, with cosine where the scale converts)."""

    id: str
    in_scope: bool
    topic: str | None
    label: Label
    expected_id: str | None = None
    exact_rank: int | None = None
    ann_rank: int | None = None
    score: dict[str, float | None] | None = None
    top_id: str | None = None
    holds_vector_of: str | None = None
    cosine_to_own_text: float | None = None
    detail: str = ""
    #: the metadata filter the question was searched with (canonical JSON), or None;
    #: left out of the JSON of a run without filters
    filter: str | None = None


@dataclass
class DiagnoseResult(Notebook):
    """Labels per question, counts per label with examples, and metrics exact vs ANN."""

    frames = ("questions",)

    ok: bool
    k: int
    fetch: int
    threshold: dict[str, float | None] | None
    counts: dict[str, int]
    examples: dict[str, list[str]]
    questions: list[QuestionDiagnosis]
    metrics: dict[str, MetricSet]
    ground_truth: str
    manifest: dict[str, Any] = field(default_factory=dict)
    answer_checks: dict[str, Any] | None = None
    """With answers: :mod:`.answer_checks`' block (URLs, references and numbers absent from
    the context and the chunks); never a label, never changes ``ok``; absent otherwise."""

    def to_dict(self) -> dict[str, Any]:
        out = json_form(self, "answer_checks")
        if all(q.filter is None for q in self.questions):  # reads as before filters existed
            for q in out["questions"]:
                q.pop("filter", None)
        return out
