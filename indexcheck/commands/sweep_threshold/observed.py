"""sweep-threshold on observed scores: calibrate the refusal threshold on what the production
retriever reported in its traces, without querying the store.

Each traced answer's retrieved documents, in rank order and with their scores, are that
question's candidates. Whether it is in scope (and which chunk should have answered) comes
from the question set, joined on the question text (whitespace and case folded), else from
the answer row's own ``expected`` / ``in_scope``. The sweep itself is
:func:`sweep_threshold.sweep_records`, the same as for store retrieval; the whole run
(reading, scale, refusal chunks) for the api, and so for the CLI, is :mod:`.run`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...errors import InputError
from ...inputs.answers import AnswerRow
from ...inputs.questions import Question
from ...safety.textsafe import visible
from ..kit.retrieval import refusal_ids
from ..probe_scale.setup import ScoreSetup
from . import SweepScale, _both, sweep_records
from .result import QuestionRecord, SweepResult
from .settings import SweepThresholdSettings

#: the scale of observed scores when nothing names it: the backend's own, unknown
UNKNOWN_SCALE: dict[str, Any] = {
    "transform": None,
    "higher_is_better": True,
    "normalized": None,
    "to_cosine": None,
    "from_cosine": None,
    "source": "observed",
    "note": "the production backend's own score scale, unknown (no --store to probe): "
    "thresholds are reported on that scale only, with no cosine equivalent",
}


def question_key(text: str) -> str:
    """The question text as joined: whitespace collapsed, case folded."""
    return " ".join(text.split()).casefold()


def _label(row: AnswerRow, labels: dict[str, Question]) -> tuple[bool, list[str], str] | None:
    """(in_scope, expected, where the label came from), or None for an unlabelled row."""
    known = labels.get(question_key(row.question))
    if known is not None and (known.expected or not known.in_scope):
        return known.in_scope, list(known.expected), f"questions:{known.id}"
    if row.expected:
        return True, list(row.expected), "answers"
    if not row.in_scope:
        return False, [], "answers"
    return None


def _score(doc: Any) -> float:
    """A retrieved document's score (refuse_absent_scores has refused a missing one)."""
    assert doc.score is not None
    return float(doc.score)


def refuse_absent_scores(rows: Sequence[AnswerRow], source: str) -> None:
    """Exit 2 (before any work) when a retrieved document carries no score."""
    for row in rows:
        missing = [p for p in row.contexts if p.score is None]
        if missing:
            raise InputError(
                f"{source}: scores are absent ({len(missing)} of {len(row.contexts)} documents "
                f"of trace '{visible(row.id)}' have no score; LangChain's OpenInference "
                "instrumentor records none): export traces that record document scores (OTel "
                "GenAI spans, or a retriever that sets document.score), or run sweep-threshold "
                "with --store instead of --observed"
            )


def refuse_filter(filter: Any) -> None:
    """Exit 2 for a metadata filter: the traces hold what the application retrieved under
    its own filters."""
    if filter is not None:
        raise InputError(
            "--filter does not apply to --observed: the traces hold what the application "
            "retrieved under its own filters; drop --filter"
        )


def sweep_observed(
    rows: Sequence[AnswerRow],
    questions: Sequence[Question],
    settings: SweepThresholdSettings,
    setup: ScoreSetup,
    source: str = "--observed",
) -> tuple[SweepResult, dict[str, Any]]:
    """The sweep over the observed candidates of ``rows`` on the scale ``setup`` resolved
    (the settings give ``k``, ``rule``, ``recall_target``, ``refusal_pattern`` and
    ``scale``), and what the join did (traces, labelled from the question set or the rows,
    unlabelled ids) for the manifest."""
    k, rule, to_cosine = settings.k, settings.rule, setup.to_cosine
    if k < 1:
        raise InputError(f"need -k ({k}) >= 1")
    if rule not in ("recall", "youden"):
        raise InputError(f"--rule must be recall or youden, not {rule}")
    if not rows:
        raise InputError(f"{source} holds no answers")
    refuse_absent_scores(rows, source)
    labels = {question_key(q.question): q for q in questions}
    refusals = refusal_ids(
        [p.id for r in rows for p in r.contexts], settings.refusal_pattern, setup.refusal_marked
    )
    records: list[QuestionRecord] = []
    unlabelled: list[str] = []
    origin = {"questions": 0, "answers": 0}
    for row in rows:
        label = _label(row, labels)
        if label is None:
            unlabelled.append(row.id)
            continue
        in_scope, expected, came_from = label
        origin["questions" if came_from.startswith("questions:") else "answers"] += 1
        docs = sorted(row.contexts, key=lambda p: p.rank or 0) if row.contexts else []
        top = docs[0] if docs else None
        rec = QuestionRecord(
            id=row.id,
            in_scope=in_scope,
            topic=None,
            top_id=top.id if top else None,
            top_score=_both(_score(top) if top else float("nan"), to_cosine),
            top_is_refusal=top is not None and top.id in refusals,
        )
        if in_scope:
            want = set(expected)
            rank = next((i for i, p in enumerate(docs) if p.id in want), None)
            if rank is not None:
                rec.expected_id = docs[rank].id
                rec.expected_rank = rank + 1  # 1-based, as people count
                rec.expected_score = _both(_score(docs[rank]), to_cosine)
        records.append(rec)
    if not records:
        raise InputError(
            f"none of the {len(rows)} traced questions has a label: give --questions with "
            "the same question texts (with 'expected' or in_scope=false)"
        )
    fetch = max((len(r.contexts) for r in rows), default=0)
    hib = setup.higher_is_better
    summary = setup.scale if settings.scale is None else settings.scale
    scale = SweepScale(hib, to_cosine, summary or dict(UNKNOWN_SCALE, higher_is_better=hib))
    result = sweep_records(records, settings, scale, fetch=max(fetch, k))
    facts = {
        "traces": len(rows),
        "labelled_from_questions": origin["questions"],
        "labelled_from_answers": origin["answers"],
        "unlabelled": unlabelled,
        "documents_per_trace": fetch,
    }
    return result, facts
