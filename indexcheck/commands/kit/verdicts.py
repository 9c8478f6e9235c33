"""Statuses, labels and verdicts: one ``StrEnum`` each, declared in their one order.

Members compare equal to (and serialise as) their plain strings, so JSON output is the
same as with bare strings.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class Verdict(StrEnum):
    """A ci gate's verdict, least severe first; only PASS passes (exit 0)."""

    PASS = "PASS"
    INSUFFICIENT_EVIDENCE = "INSUFFICIENT_EVIDENCE"
    BLOCK = "BLOCK"

    @property
    def severity(self) -> int:
        return list(Verdict).index(self)


def worst(verdicts: Iterable[str]) -> Verdict:
    """The most severe verdict (PASS for none)."""
    return max((Verdict(v) for v in verdicts), key=lambda v: v.severity, default=Verdict.PASS)


class ClaimVerdict(StrEnum):
    """A judged claim's verdict, best first (this order is the order of every table)."""

    SUPPORTED = "SUPPORTED"
    PARTIALLY_SUPPORTED = "PARTIALLY_SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"
    CONTRADICTED = "CONTRADICTED"
    NOT_EVALUABLE = "NOT_EVALUABLE"


class ScaleVerdict(StrEnum):
    """probe-scale's verdict: ``PASS`` (a formula fits the store's own scores), ``ASSUMED``
    (a formula fits, but on an operator indexcheck chose: pgvector with no ANN index, where
    the application's query sets the scale; exit 0, never PASS), ``FAIL`` (none fits)."""

    PASS = "PASS"
    ASSUMED = "ASSUMED"
    FAIL = "FAIL"


class Label(StrEnum):
    """diagnose: the first stage that lost a question's expected chunk, in pipeline order
    (in-scope labels, then out-of-scope ones)."""

    MISALIGNED = "MISALIGNED"
    #: the expected chunk does not match the question's filter: a metadata bug
    FILTERED_OUT = "FILTERED_OUT"
    NOT_RETRIEVED = "NOT_RETRIEVED"
    #: the backend returned fewer than k under the filter while more chunks match
    SHORT_RESULTS = "SHORT_RESULTS"
    ANN_MISS = "ANN_MISS"
    RANKED_OUT = "RANKED_OUT"
    BELOW_THRESHOLD = "BELOW_THRESHOLD"
    CONTEXT_ASSEMBLY_LOSS = "CONTEXT_ASSEMBLY_LOSS"
    GENERATION_REFUSED = "GENERATION_REFUSED"
    UNGROUNDED = "UNGROUNDED"
    #: diagnose --system only: outcomes differ across runs, or the unchanged control recovered
    FLAKY = "FLAKY"
    OK = "OK"
    REFUSED_OK = "REFUSED_OK"
    REFUSED_BY_CONTENT = "REFUSED_BY_CONTENT"
    ANSWERED_OUT_OF_SCOPE = "ANSWERED_OUT_OF_SCOPE"


IN_SCOPE_LABELS = tuple(Label)[: list(Label).index(Label.OK) + 1]
OUT_OF_SCOPE_LABELS = tuple(Label)[len(IN_SCOPE_LABELS) :]
#: Stages past retrieval (diagnose --answers), in the order an answer passes them.
GENERATION_LABELS = (Label.CONTEXT_ASSEMBLY_LOSS, Label.GENERATION_REFUSED, Label.UNGROUNDED)
#: Labels of a question that ended where it should.
GOOD_LABELS = (Label.OK, Label.REFUSED_OK, Label.REFUSED_BY_CONTENT)
FAILING_LABELS = tuple(label for label in Label if label not in GOOD_LABELS)
#: Labels only a filtered run can give (left out of an unfiltered run's counts).
FILTER_LABELS = (Label.FILTERED_OUT, Label.SHORT_RESULTS)


class Status(StrEnum):
    """check-index: what one chunk's stored vector turned out to be."""

    OK = "ok"
    LOW = "low"
    SHIFT = "shift"
    MODEL_MISMATCH = "model_mismatch"
    #: cosines high but uniformly low, each vector still nearest its own text: the
    #: indexer embedded another text (metadata header, prefix, template, truncation)
    EMBEDDED_TEXT_DIFFERS = "embedded_text_differs"
    STALE_VECTOR = "stale_vector"
    MISSING_VECTOR = "missing_vector"
    DIMENSION_MISMATCH = "dimension_mismatch"
    NON_FINITE = "non_finite"
    ZERO_VECTOR = "zero_vector"
    #: finite, but its length is outside ``vectors.NORM_RANGE``: no model writes that
    ABSURD_MAGNITUDE = "absurd_magnitude"


__all__ = [
    "FAILING_LABELS",
    "GENERATION_LABELS",
    "GOOD_LABELS",
    "IN_SCOPE_LABELS",
    "OUT_OF_SCOPE_LABELS",
    "Label",
    "ClaimVerdict",
    "ScaleVerdict",
    "Status",
    "Verdict",
    "worst",
]
