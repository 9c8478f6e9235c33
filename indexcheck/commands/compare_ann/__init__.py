"""compare-ann: how often approximate search misses the best chunk, and how deep to fetch.

Exact neighbours come from the store's exact mode (``has_exact``), else from an exact search
streamed over every stored vector (:func:`indexcheck.commands.kit.exact.exact_topk`; a remote
store's vectors cached on disk by fingerprint). The normal query is asked for ``f`` results
at each depth ``f``; when ``f > k`` they are re-ranked by exact similarity and the best ``k``
kept (the over-fetch recipe). Per depth, on exact similarities (cos, dot or ``-l2^2``):
recall@k (results at least as near as the exact k-th, over k per query); best-chunk miss rate
(queries whose exact nearest is not in the final top-k); mean rank displacement (|exact rank -
slot| over the k slots, capped at ``rank_cap(k)`` = max(50, 2k), which depends on k only, so a
depth's figure does not depend on the other depths asked). Scores within ``TIE_RTOL`` of each
other are tied (a tie with the exact k-th counts as found). Rates carry Wilson 95% intervals
(recall pools the k slots of every query), the displacement a bootstrap interval.
"""

from __future__ import annotations

from ..kit.ground_truth import GroundTruth, ground_truth
from .compare import DEFAULT_FETCH, apply_sweep, compare_ann, fetch_depths, sweep_ann
from .queries import (
    DEFAULT_NOISE,
    QuerySet,
    embed_questions,
    load_query_vectors,
    read_questions,
    sample_queries,
)
from .result import AnnResult, FetchRow, Truths
from .settings import CompareAnnSettings
from .truth import TrueVectors

__all__ = [
    "DEFAULT_FETCH",
    "DEFAULT_NOISE",
    "AnnResult",
    "CompareAnnSettings",
    "FetchRow",
    "GroundTruth",
    "TrueVectors",
    "Truths",
    "QuerySet",
    "compare_ann",
    "embed_questions",
    "fetch_depths",
    "ground_truth",
    "load_query_vectors",
    "read_questions",
    "apply_sweep",
    "sample_queries",
    "sweep_ann",
]
