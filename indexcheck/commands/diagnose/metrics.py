"""Retrieval metrics over ranked id lists: hit@k, recall@k, MRR, nDCG@k, with intervals.

Each metric comes with a 95% interval (Wilson for the hit rate, percentile bootstrap for
means) and ``observed / missing / excluded`` counts: observed in-scope questions with a
ranking, in-scope questions with no ranking (missing), and out-of-scope ones (excluded).

Conventions (the README's "Conventions"; ``tests/test_metric_parity.py`` checks them
against ranx): a ranking is read in the store's order, so ties keep the order the store
returned them in; an id repeated in a ranking (a store holding one chunk id twice) counts
once, at its first rank, as compare-ann counts it; nDCG's gain is ``2**rel - 1`` (ranx's
``ndcg_burges``; trec_eval's ``ndcg`` uses ``rel``); MRR has no cutoff (the whole fetched
ranking); an empty ranking scores 0; out-of-scope questions and questions without a
ranking are left out of the means.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ...inputs.questions import Question
from ..kit.stats import bootstrap_mean, wilson


def unique_ranking(ranked: Sequence[str | None]) -> list[str]:
    """``ranked`` without missing entries (None) and with each id kept at its first rank."""
    return [cid for cid in dict.fromkeys(ranked) if cid is not None]


def first_copies(I: np.ndarray, D: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
    """(I, D) with each row's repeated ids dropped after their first copy, the rest moved
    up and the tail padded with None (and NaN); shapes are kept."""
    out_i = np.full(I.shape, None, dtype=object)
    out_d = None if D is None else np.full(D.shape, np.nan, dtype=np.float32)
    for r in range(I.shape[0]):
        seen: set[str] = set()
        j = 0
        for c, cid in enumerate(I[r]):
            if cid is None or cid in seen:
                continue
            seen.add(cid)
            out_i[r, j] = cid
            if out_d is not None and D is not None:
                out_d[r, j] = D[r, c]
            j += 1
    return out_i, out_d


def hit_at_k(ranked: Sequence[str], expected: Sequence[str], k: int) -> float:
    """1.0 when any expected id is in the first k, else 0.0."""
    return 1.0 if set(unique_ranking(ranked)[:k]) & set(expected) else 0.0


def recall_at_k(ranked: Sequence[str], expected: Sequence[str], k: int) -> float:
    """Share of the expected ids found in the first k."""
    if not expected:
        return 0.0
    return len(set(unique_ranking(ranked)[:k]) & set(expected)) / len(set(expected))


def reciprocal_rank(ranked: Sequence[str], expected: Sequence[str]) -> float:
    """1 / (1-based rank of the first expected id), 0.0 when none is ranked."""
    wanted = set(expected)
    for i, cid in enumerate(unique_ranking(ranked)):
        if cid in wanted:
            return 1.0 / (i + 1)
    return 0.0


def ndcg_at_k(ranked: Sequence[str], grades: dict[str, float], k: int) -> float:
    """nDCG@k with gains ``2**grade - 1`` and log2 discounts; 0.0 when nothing is relevant.

    A repeated id counts once, at its first rank: counted twice, it would add its gain
    twice and nDCG could pass 1."""
    top = unique_ranking(ranked)[:k]
    dcg = sum((2.0 ** grades.get(cid, 0.0) - 1.0) / math.log2(i + 2) for i, cid in enumerate(top))
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    idcg = sum((2.0**g - 1.0) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


@dataclass
class Metric:
    """A metric's value with its 95% interval and population counts."""

    value: float | None
    low: float | None
    high: float | None
    observed: int
    missing: int
    excluded: int


@dataclass
class MetricSet:
    """hit@k, recall@k, MRR and nDCG@k on one ranking, overall and by topic."""

    k: int
    hit_at_k: Metric
    recall_at_k: Metric
    mrr: Metric
    ndcg_at_k: Metric
    by_topic: dict[str, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _metrics(
    questions: Sequence[Question], rankings: dict[str, list[str]], k: int, seed: int
) -> dict[str, Metric]:
    ins = [q for q in questions if q.in_scope]
    observed = [q for q in ins if q.id in rankings]
    missing = len(ins) - len(observed)
    excluded = len(questions) - len(ins)
    hits = [hit_at_k(rankings[q.id], q.expected, k) for q in observed]
    h = wilson(int(sum(hits)), len(hits))
    out = {"hit_at_k": Metric(h.value, h.low, h.high, len(observed), missing, excluded)}
    grades = {q.id: (q.grades or {e: 1.0 for e in q.expected}) for q in observed}
    series = {
        "recall_at_k": [recall_at_k(rankings[q.id], q.expected, k) for q in observed],
        "mrr": [reciprocal_rank(rankings[q.id], q.expected) for q in observed],
        "ndcg_at_k": [ndcg_at_k(rankings[q.id], grades[q.id], k) for q in observed],
    }
    for name, vals in series.items():
        m, lo, hi = bootstrap_mean(np.asarray(vals, dtype=np.float64), seed=seed)
        out[name] = Metric(m, lo, hi, len(observed), missing, excluded)
    return out


def retrieval_metrics(
    questions: Sequence[Question], rankings: dict[str, list[str]], k: int, seed: int = 0
) -> MetricSet:
    """Metrics of ``rankings`` (question id -> ranked chunk ids, best first, as retrieved)."""
    overall = _metrics(questions, rankings, k, seed)
    topics = sorted({q.topic for q in questions if q.topic and q.in_scope})
    by_topic = {
        t: {
            name: asdict(m)
            for name, m in _metrics(
                [q for q in questions if q.topic == t], rankings, k, seed
            ).items()
        }
        for t in topics
    }
    return MetricSet(k=k, by_topic=by_topic, **overall)
