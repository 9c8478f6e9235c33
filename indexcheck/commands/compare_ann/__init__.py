"""compare-ann: how often approximate search misses the best chunk, and how deep to fetch.

For each query the exact neighbours come from the backend's exact mode when it has one
(``store.has_exact``), otherwise from an exact search indexcheck streams over every stored
vector (:func:`indexcheck.commands.kit.exact.exact_topk`; vectors read from a remote store are
cached on disk keyed by the store's fingerprint). The store's normal (approximate) query is
then asked for ``f`` results at each fetch depth ``f``; when ``f > k`` the ``f`` returned ids
are re-ranked by exact similarity and the best ``k`` kept (the over-fetch recipe: fetch their
vectors, compute the similarity in the backend's metric family, keep k).

Metrics per depth, all on exact similarities computed here (cos, dot or ``-l2^2``):

- recall@k: results at least as near as the exact k-th neighbour, over k per query;
- best-chunk miss rate: queries whose exact nearest neighbour is not in the final top-k;
- mean rank displacement: mean over the k slots of |exact rank of the result - slot|,
  the exact rank capped at ``rank_cap(k)`` = max(50, 2k) (a missing result, or one
  ranked deeper, counts at the cap). The cap depends on k only, never on the fetch
  depths asked, so a depth's figure is the same whichever other depths run with it.

Scores within ``TIE_RTOL`` (relative to the query's scale) of each other are tied: a result
tied with the exact k-th (or 1st) counts as found. Rates carry Wilson 95% intervals
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
