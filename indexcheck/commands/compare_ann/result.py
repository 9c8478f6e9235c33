"""compare-ann's result: one row per fetch depth, the verdict, and the truths used."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from ...output.notebook import Notebook
from ..kit.ground_truth import GroundTruth

if TYPE_CHECKING:
    from .truth import MatrixLookup, TrueVectors


class AnnVerdict(StrEnum):
    """compare-ann's verdict, from the 95% interval of the best-chunk miss rate.

    PASS: at some depth the interval's upper bound is within the target; CANNOT_FAIL: the
    index searches exactly, so nothing can be missed (exit 0, never PASS);
    INSUFFICIENT_EVIDENCE: only the observed rate is within it (exit 1); FAIL: not even
    the observed rate is (exit 1)."""

    PASS = "PASS"
    CANNOT_FAIL = "CANNOT_FAIL"
    INSUFFICIENT_EVIDENCE = "INSUFFICIENT_EVIDENCE"
    FAIL = "FAIL"


def clears(row: FetchRow, target: float) -> bool:
    """Whether a depth's 95% interval on the best-chunk miss rate is within ``target``."""
    high = row.best_miss_rate_interval[1]
    return high is not None and high <= target


@dataclass
class Truths:
    """The ground truths of one set of queries, shared by a sweep.

    ``stored``: exact search over the vectors the store gives back; ``true``: exact
    search over the vectors as added (``--truth-from``/``--truth-store``), with the
    ``lookup`` that scores any id against them; None when not given.
    """

    stored: GroundTruth
    true: GroundTruth | None = None
    lookup: MatrixLookup | None = None
    vectors: TrueVectors | None = None
    #: under metadata filters: what the filtered truth pass learnt (.filtered_truth)
    filtered: Any = None

    @property
    def scored(self) -> GroundTruth:
        """The truth the figures are measured against: the true one when given."""
        return self.true if self.true is not None else self.stored

    def cut(self, depth: int) -> Truths:
        true = None if self.true is None else self.true.cut(depth)
        return Truths(self.stored.cut(depth), true, self.lookup, self.vectors, self.filtered)


@dataclass
class FetchRow:
    """Metrics at one fetch depth (final list: top-k after exact re-rank when fetch > k)."""

    fetch: int
    reranked: bool
    queries: int
    recall_at_k: float
    recall_at_k_interval: list[float | None]
    recall_hits: int
    recall_slots: int
    best_miss_rate: float
    best_miss_rate_interval: list[float | None]
    best_misses: int
    mean_rank_displacement: float | None
    mean_rank_displacement_interval: list[float | None]
    ann_seconds: float
    #: the backend's query plan at this depth, where it says one (pgvector: EXPLAIN)
    plan: str | None = None
    #: with a true ground truth: recall@k and best-chunk miss rate against exact search
    #: over the vectors the index gives back (the search's own loss, compression aside)
    search_recall_at_k: float | None = None
    search_best_miss_rate: float | None = None
    #: under filters: share of filtered queries that got fewer than min(fetch, matching)
    #: results although that many chunks match, and per selectivity bucket the figures
    short_result_rate: float | None = None
    short_result_rate_interval: list[float | None] | None = None
    short_results: int | None = None
    by_selectivity: list[dict[str, Any]] | None = None


_FILTER_KEYS = frozenset({"filters", "query_filters"})
_ROW_FILTER_KEYS = (
    "short_result_rate",
    "short_result_rate_interval",
    "short_results",
    "by_selectivity",
)


def row_dict(row: FetchRow) -> dict[str, Any]:
    """A fetch row as JSON; the filter figures only when the run was filtered."""
    out = asdict(row)
    if row.short_result_rate is None and row.by_selectivity is None:
        for key in _ROW_FILTER_KEYS:
            out.pop(key, None)
    return out


@dataclass
class AnnResult(Notebook):
    """What compare-ann found; ``ok`` when some fetch depth's 95% interval on the miss rate
    is within the target (``verdict`` PASS) or the index searches exactly (CANNOT_FAIL)."""

    frames = ("by_fetch", "worst_queries")

    ok: bool
    k: int
    target: float
    queries: int
    query_source: str
    query_details: dict[str, Any]
    family: str
    score: str
    ground_truth: str
    ground_truth_depth: int
    ground_truth_seconds: float
    #: exact ranks deeper than this count as this (the rank displacement's cap)
    rank_cap: int
    vector_cache: dict[str, Any] | None
    tie_rtol: float
    by_fetch: list[FetchRow]
    recommended_fetch: int | None
    recommendation: str
    worst_queries: list[dict[str, Any]]
    store: dict[str, Any]
    sweep: dict[str, Any] | None = None
    #: the setting the recommendation names: {"fetch": F} or {PARAM: V, "fetch": F}
    recommended_setting: dict[str, int] | None = None
    manifest: dict[str, Any] = field(default_factory=dict)
    #: e.g. a depth PostgreSQL ran as an exact sort (its figure says nothing of the index)
    warnings: list[str] = field(default_factory=list)
    #: the index's codec and whether its vectors read back as added (``.compression``)
    compression: dict[str, Any] = field(default_factory=dict)
    #: where the true vectors came from, when given: {"source": "chunks"|"truth-store", ...}
    truth_vectors: dict[str, Any] | None = None
    #: with a true truth: exact search over the vectors the index gives back, measured
    #: against exact search over the vectors as added (recall@k, best-chunk miss rate)
    compression_loss: dict[str, Any] | None = None
    #: every distinct metadata filter of the run, with the chunks it matches
    filters: list[dict[str, Any]] | None = None
    #: per query, its filter (canonical JSON), when the run is filtered
    query_filters: list[str | None] | None = None
    verdict: str = AnnVerdict.FAIL
    truth: Truths | None = field(default=None, repr=False, compare=False)
    """The ground truths used (not serialised), so a sweep can reuse them."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name == "truth" or (f.name in _FILTER_KEYS and getattr(self, f.name) is None):
                continue  # an unfiltered run reads as before filters existed
            value = getattr(self, f.name)
            out[f.name] = [row_dict(r) for r in value] if f.name == "by_fetch" else value
        return out

    def row(self, fetch: int) -> FetchRow:
        return next(r for r in self.by_fetch if r.fetch == fetch)


__all__ = ["AnnResult", "AnnVerdict", "FetchRow", "Truths", "clears", "row_dict"]
