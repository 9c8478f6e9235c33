"""compare-ann under metadata filters: the filtered search, short results, and their fix.

A filtered approximate search fails in a way an unfiltered one does not: the engine
walks its index for a fixed number of candidates and applies the filter afterwards
(pgvector HNSW stops after ``hnsw.ef_search`` candidates, 40 by default), so a selective
filter leaves fewer than k rows although many more chunks match. That is the
**short-result rate**: at fetch depth ``f``, the share of queries for which the backend
returned fewer than ``min(f, matching)`` results, ``matching`` being the chunks the
query's filter matches (exact, :mod:`.filtered_truth`). It is reported per depth and per
selectivity bucket, beside recall@k and the best-chunk miss rate.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ...errors import InputError
from ...stores.base import VectorStore
from ..kit.filtered_truth import BUCKETS, FilterTruth, filtered_ground_truth
from ..kit.stats import wilson
from .metrics import PerQuery
from .result import Truths


def filtered_truths(
    store: VectorStore,
    xr: np.ndarray,
    filters: Any,
    depth: int,
    family: str,
    say: Any,
    truth: Any,
    true_vectors: Any,
) -> Any:
    """The truth compare-ann measures against: ``truth`` as given, or, when some query
    carries a filter, exact search over the chunks each filter matches."""
    if filters is None:
        return truth
    if len(filters) != xr.shape[0]:
        raise InputError(f"{len(filters)} filters for {xr.shape[0]} queries; give one per query")
    if not any(f is not None for f in filters) or isinstance(truth, Truths):
        return truth
    if true_vectors is not None:
        raise InputError("--truth-from/--truth-store cannot be combined with filters yet")
    stored, ftruth = filtered_ground_truth(store, xr, filters, depth, family, say)
    return Truths(stored, filtered=ftruth)


def filtered_search(
    store: VectorStore, xr: np.ndarray, f: int, ft: FilterTruth
) -> tuple[np.ndarray, np.ndarray]:
    """``store.query`` at depth ``f``, once per distinct filter (its queries together)."""
    q = xr.shape[0]
    D = np.full((q, f), np.nan, dtype=np.float32)
    I = np.full((q, f), None, dtype=object)
    for key in ft.groups.distinct():
        rows = ft.groups.rows(key)
        node = None if key is None else ft.groups.nodes[key]
        d, i = store.query(xr[rows], f) if node is None else store.query(xr[rows], f, node)
        D[rows], I[rows] = d, np.asarray(i, dtype=object)
    return D, I


def returned_counts(I: np.ndarray) -> np.ndarray:
    """Distinct ids returned per query, int64 (q,)."""
    return np.array([len({v for v in row if v is not None}) for row in I], dtype=np.int64)


def with_empty_filters(pq: PerQuery, ft: FilterTruth) -> PerQuery:
    """A query whose filter matches no chunk has nothing to miss: it is no best-chunk miss."""
    empty = ft.matching == 0
    if empty.any():
        pq.best_found = pq.best_found | empty
    return pq


def short_mask(returned: np.ndarray, matching: np.ndarray, f: int) -> np.ndarray:
    """Queries that got fewer than ``min(f, matching)`` results."""
    return np.asarray(returned < np.minimum(f, matching), dtype=bool)


def filter_figures(f: int, pq: PerQuery, returned: np.ndarray, ft: FilterTruth) -> dict[str, Any]:
    """The short-result rate of all filtered queries at depth ``f``, and per bucket the
    recall@k, best-chunk miss rate and short-result rate."""
    filtered = np.array([k is not None for k in ft.groups.keys], dtype=bool)
    live = filtered & (ft.matching > 0)
    short = short_mask(returned, ft.matching, f)
    share = ft.share()
    out: dict[str, Any] = {}
    s = wilson(int(short[live].sum()), int(live.sum()))
    out["short_result_rate"] = float(s.value or 0.0) if live.any() else None
    out["short_result_rate_interval"] = [s.low, s.high] if live.any() else [None, None]
    out["short_results"] = int(short[live].sum())
    buckets = []
    low = -1.0
    for name, top in BUCKETS:
        sel = live & (share > low) & (share <= top)
        low = top
        if not sel.any():
            continue
        n = int(sel.sum())
        rec = wilson(int(pq.hits[sel].sum()), int(pq.slots[sel].sum()))
        miss = wilson(int((~pq.best_found[sel]).sum()), n)
        sr = wilson(int(short[sel].sum()), n)
        buckets.append(
            {
                "bucket": name,
                "queries": n,
                "recall": float(rec.value or 0.0),
                "recall_interval": [rec.low, rec.high],
                "best_miss_rate": float(miss.value or 0.0),
                "best_miss_rate_interval": [miss.low, miss.high],
                "short_result_rate": float(sr.value or 0.0),
                "short_result_rate_interval": [sr.low, sr.high],
                "short_results": int(short[sel].sum()),
            }
        )
    out["by_selectivity"] = buckets
    return out


def _version(text: Any) -> tuple[int, ...]:
    nums = re.findall(r"\d+", str(text or ""))
    return tuple(int(n) for n in nums[:3])


def iterative_scan_available(details: dict[str, Any]) -> bool | None:
    """pgvector >= 0.8.0 has ``hnsw.iterative_scan``; None when the version is unknown."""
    v = _version(details.get("pgvector_version"))
    return None if not v else v >= (0, 8, 0)


def short_result_fix(backend: str, details: dict[str, Any], fields: list[str]) -> str:
    """What fixes short filtered results on this backend, as one sentence."""
    names = ", ".join(f"'{f}'" for f in fields) or "the filtered field"
    if backend == "pgvector":
        ef = details.get("hnsw.ef_search") or "40"
        iterative = iterative_scan_available(details)
        if iterative:
            it = (
                "or SET hnsw.iterative_scan = relaxed_order (pgvector "
                f"{details.get('pgvector_version')} has it) so the scan continues until "
                "enough rows pass the filter"
            )
        else:
            version = details.get("pgvector_version") or "unknown"
            it = (
                f"hnsw.iterative_scan is not available on pgvector {version} (it needs "
                "0.8.0; upgrading lets the scan continue until enough rows pass)"
            )
        return (
            f"pgvector's HNSW scan stops after hnsw.ef_search = {ef} candidates and applies "
            f"the filter afterwards: raise hnsw.ef_search (--sweep ef_search=...), or build "
            f"a partial index for a frequent filter value (CREATE INDEX ... USING hnsw ... "
            f"WHERE ...); {it}"
        )
    if backend == "qdrant":
        return (
            f"create a payload index on {names} (create_payload_index) so Qdrant applies the "
            "filter inside the HNSW search, or raise hnsw_ef in the application's search "
            "params"
        )
    if backend == "lancedb":
        return (
            "search with prefilter=True so LanceDB filters before the vector search "
            "(open the store with &prefilter=true to measure it)"
        )
    if backend == "milvus":
        return (
            "raise the search's ef (HNSW) or nprobe (IVF) in the application's search "
            f"params, or partition the collection by {names}"
        )
    if backend == "faiss":
        return "raise efSearch (HNSW) or nprobe (IVF): --sweep efSearch=... or nprobe=..."
    return "raise the index's search effort, or fetch deeper"


def short_sentence(
    rows: list[Any], k: int, backend: str, details: dict[str, Any], fields: list[str]
) -> str | None:
    """The recommendation's sentence when some depth returned short filtered results."""
    bad = [r for r in rows if getattr(r, "short_result_rate", None)]
    if not bad:
        return None
    first = bad[0]
    return (
        f"At fetch {first.fetch}, {first.short_result_rate:.0%} of the filtered queries "
        f"({first.short_results}) got fewer results than asked although enough chunks match "
        f"their filter (short results): {short_result_fix(backend, details, fields)}"
    )
