"""compare-ann's per-query metrics: final lists, recall@k, best-chunk miss, rank shift.

All on exact similarities (cos, dot or ``-l2^2``, higher is nearer); scores within ``tol``
of each other are tied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..kit.ground_truth import GroundTruth
from ..kit.stats import bootstrap_mean, wilson
from .result import FetchRow, Truths
from .truth import MatrixLookup

WORST_SHOWN = 10


def final_lists(
    ids: np.ndarray, sim: np.ndarray, k: int, rerank: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The k results a retriever keeps: the first k as returned, or the k nearest by exact
    similarity among all returned (over-fetch). Repeated ids count once."""
    sim = sim.copy()
    for r in range(ids.shape[0]):
        seen: set[str] = set()
        for j, vid in enumerate(ids[r]):
            if vid is None or vid in seen:
                sim[r, j] = np.nan
            else:
                seen.add(vid)
    if rerank:
        order = np.argsort(np.where(np.isnan(sim), np.inf, -sim), axis=1, kind="stable")[:, :k]
        return np.take_along_axis(ids, order, 1), np.take_along_axis(sim, order, 1)
    return ids[:, :k], sim[:, :k]


@dataclass
class PerQuery:
    hits: np.ndarray  # int (q,)
    slots: np.ndarray  # int (q,) = min(k, exact neighbours available)
    best_found: np.ndarray  # bool (q,)
    displacement: np.ndarray  # float (q,)


def score(final_sim: np.ndarray, truth: GroundTruth, k: int, tol: np.ndarray) -> PerQuery:
    gt = truth.similarity
    depth = gt.shape[1]
    q = gt.shape[0]
    slots = np.minimum(k, (~np.isnan(gt)).sum(axis=1))
    top1 = gt[:, 0]
    kth = gt[np.arange(q), np.maximum(slots - 1, 0)]
    valid = ~np.isnan(final_sim)
    filled = np.where(valid, final_sim, -np.inf)
    hits = np.minimum((filled >= (kth - tol)[:, None]).sum(axis=1), slots)
    best_found = (filled >= (top1 - tol)[:, None]).any(axis=1)
    # a result's exact rank is an interval when it ties others: [strictly better, tied - 1]
    gt_filled = np.where(np.isnan(gt), -np.inf, gt)[:, None, :]
    lo = (gt_filled > (final_sim + tol[:, None])[:, :, None]).sum(axis=2)
    hi = (gt_filled >= (final_sim - tol[:, None])[:, :, None]).sum(axis=2) - 1
    lo = np.where(valid, lo, depth)
    hi = np.where(valid, np.maximum(hi, lo), depth)
    kk = final_sim.shape[1]
    slot = np.arange(kk)[None, :]
    in_slot = slot < slots[:, None]
    moved = np.maximum(0, np.maximum(lo - slot, slot - hi)) * in_slot
    displacement = moved.sum(axis=1) / np.maximum(slots, 1)
    return PerQuery(hits, slots, best_found, displacement.astype(np.float64))


def interval(low: float | None, high: float | None) -> list[float | None]:
    return [low, high]


def worst(
    labels: list[str],
    truth: GroundTruth,
    per: dict[int, PerQuery],
    raw: dict[int, tuple[np.ndarray, np.ndarray]],
    depths: list[int],
    family: str,
    tol: np.ndarray,
) -> list[dict[str, Any]]:
    """Queries that miss their best chunk at the most depths, then with the lowest recall."""
    first = depths[0]
    missed = np.stack([~per[f].best_found for f in depths]).sum(axis=0)
    recall0 = per[first].hits / np.maximum(per[first].slots, 1)
    bad = np.flatnonzero((missed > 0) | (recall0 < 1))
    order = sorted(bad, key=lambda i: (-missed[i], recall0[i], -per[first].displacement[i]))
    deep_ids, deep_sim = raw[depths[-1]]
    out = []
    for i in order[:WORST_SHOWN]:
        top = float(truth.similarity[i, 0])
        found = np.flatnonzero(deep_sim[i] >= top - tol[i])
        out.append(
            {
                "index": int(i),
                "query": labels[i],
                "exact_best_id": truth.ids[i, 0],
                "exact_best_score": -top if family == "l2" else top,
                "missed_at_fetch": [f for f in depths if not per[f].best_found[i]],
                "recall_at_k": {
                    str(f): float(per[f].hits[i] / max(per[f].slots[i], 1)) for f in depths
                },
                "best_position_at_max_fetch": int(found[0]) + 1 if found.size else None,
                "max_fetch": depths[-1],
            }
        )
    return out


def tolerance(xq: np.ndarray, truth: GroundTruth, tie_rtol: float) -> np.ndarray:
    """Scores within this of each other are tied: ``tie_rtol`` of the query's scale
    (the largest of 1, |exact top score| and |query|^2), float64 (q,)."""
    qnorm = (xq * xq).sum(axis=1).astype(np.float64)
    gt0 = np.nan_to_num(np.abs(truth.similarity[:, 0]))
    out: np.ndarray = tie_rtol * np.maximum.reduce([np.ones(len(xq)), gt0, qnorm])
    return out


def true_sim(
    look: MatrixLookup, xq: np.ndarray, ids: np.ndarray, stored_sim: np.ndarray
) -> np.ndarray:
    """Similarities over the true vectors, NaN where the stored one is (a repeat, a gap)."""
    out = look.similarity(xq, ids)
    out[np.isnan(stored_sim)] = np.nan
    return out


def fetch_row(f: int, k: int, q: int, pq: PerQuery, secs: float, seed: int) -> FetchRow:
    rec = wilson(int(pq.hits.sum()), int(pq.slots.sum()))
    miss = wilson(int((~pq.best_found).sum()), q)
    m, lo, hi = bootstrap_mean(pq.displacement, seed=seed)
    return FetchRow(
        fetch=f,
        reranked=f > k,
        queries=q,
        recall_at_k=float(rec.value or 0.0),
        recall_at_k_interval=interval(rec.low, rec.high),
        recall_hits=rec.k,
        recall_slots=rec.n,
        best_miss_rate=float(miss.value or 0.0),
        best_miss_rate_interval=interval(miss.low, miss.high),
        best_misses=miss.k,
        mean_rank_displacement=m,
        mean_rank_displacement_interval=interval(lo, hi),
        ann_seconds=round(secs, 4),
    )


def compression_loss(xq: np.ndarray, truths: Truths, k: int, tol: np.ndarray) -> dict[str, Any]:
    """Exact top-k over the vectors the index gives back, scored against exact search
    over the true vectors: what the compression alone loses."""
    assert truths.lookup is not None and truths.true is not None
    ids = truths.stored.ids[:, :k]
    sim = truths.lookup.similarity(xq, ids)
    pq = score(sim, truths.true, k, tol)
    q = len(xq)
    rec = wilson(int(pq.hits.sum()), int(pq.slots.sum()))
    miss = wilson(int((~pq.best_found).sum()), q)
    return {
        "what": "exact search over the vectors the index gives back, against exact search "
        "over the vectors as added",
        "queries": q,
        "recall_at_k": float(rec.value or 0.0),
        "recall_at_k_interval": interval(rec.low, rec.high),
        "best_miss_rate": float(miss.value or 0.0),
        "best_miss_rate_interval": interval(miss.low, miss.high),
        "best_misses": miss.k,
    }
