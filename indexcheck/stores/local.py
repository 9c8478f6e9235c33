"""Exact search over an in-memory float32 matrix, shared by the local stores."""

from __future__ import annotations

import numpy as np

from ..vectors import normalize_rows
from .metric_table import scores_of

#: our metric name -> the faiss metric its exact search runs with
FAISS_KINDS = {"cosine": "ip", "ip": "ip", "l2": "l2"}
#: our metric name -> (faiss metric, score formula, higher_is_better)
LOCAL_METRICS: dict[str, tuple[str, str, bool]] = {
    name: (FAISS_KINDS[name], *score) for name, score in scores_of("local").items()
}


def exact_knn(
    base: np.ndarray, queries: np.ndarray, k: int, metric: str
) -> tuple[np.ndarray, np.ndarray]:
    """Brute-force k-NN with faiss: base (n, d), queries (q, d) float32.

    ``metric`` is ``cosine`` (scores = cos), ``ip`` (dot) or ``l2`` (squared L2).
    Returns D float32 (q, k) (NaN where n < k) and positions int64 (q, k) (-1 where missing).
    """
    import faiss

    kind = LOCAL_METRICS[metric][0]
    xb = np.ascontiguousarray(base, dtype=np.float32)
    xq = np.ascontiguousarray(queries, dtype=np.float32)
    if metric == "cosine":
        xb, xq = normalize_rows(xb), normalize_rows(xq)
    kk = min(k, xb.shape[0])
    q = xq.shape[0]
    D = np.full((q, k), np.nan, dtype=np.float32)
    I = np.full((q, k), -1, dtype=np.int64)
    if kk == 0 or q == 0:
        return D, I
    fm = faiss.METRIC_INNER_PRODUCT if kind == "ip" else faiss.METRIC_L2
    d, i = faiss.knn(xq, xb, kk, metric=fm)
    D[:, :kk] = d
    I[:, :kk] = i
    D[I < 0] = np.nan
    return D, I


def ids_of(positions: np.ndarray, ids: list[str]) -> np.ndarray:
    """Map an int64 (q, k) position matrix to an object (q, k) id matrix (None for -1)."""
    out = np.full(positions.shape, None, dtype=object)
    mask = positions >= 0
    lookup = np.asarray(ids, dtype=object)
    out[mask] = lookup[positions[mask]]
    return out
