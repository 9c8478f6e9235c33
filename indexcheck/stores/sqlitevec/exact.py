"""sqlite-vec, exact search by indexcheck: faiss brute force over scanned blocks, scored
in the store's own scale so it sits beside the engine's KNN unchanged.

``l2`` -> the Euclidean distance (sqlite-vec's ``vec_distance_l2``, not squared),
``cosine`` -> ``1-cos``, ``l1`` -> the Manhattan distance (all lower is nearer), and
``cosine_similarity`` (llm collections) -> ``cos``, higher is nearer.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ...vectors import normalize_rows
from ..base import empty_result

#: metric -> (faiss metric name, higher is nearer)
KINDS = {
    "l2": ("METRIC_L2", False),
    "cosine": ("METRIC_INNER_PRODUCT", False),
    "l1": ("METRIC_L1", False),
    "cosine_similarity": ("METRIC_INNER_PRODUCT", True),
}


def _scores(D: np.ndarray, metric: str) -> np.ndarray:
    if metric == "l2":
        out: np.ndarray = np.sqrt(np.maximum(D, 0))
        return out
    if metric == "cosine":
        flipped: np.ndarray = 1 - D
        return flipped
    return D


def exact_blocks(
    blocks: Iterable[tuple[list[str], np.ndarray]], queries: np.ndarray, k: int, metric: str
) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-k of float32 ``queries`` (q, d) over ``(ids, vectors (m, d))`` blocks:
    (D float32 (q, k) in the store's scale, NaN where fewer; I object (q, k), None there)."""
    import faiss

    kind, higher = KINDS[metric]
    cosine = kind == "METRIC_INNER_PRODUCT"
    xq = normalize_rows(queries) if cosine else queries
    q = xq.shape[0]
    best_d, best_i = empty_result(q, 0)
    for ids, vectors in blocks:
        if not ids:
            continue
        xb = np.ascontiguousarray(normalize_rows(vectors) if cosine else vectors, np.float32)
        kk = min(k, xb.shape[0])
        D, P = faiss.knn(xq, xb, kk, metric=getattr(faiss, kind))
        names = np.asarray(ids, dtype=object)[np.maximum(P, 0)]
        names[P < 0] = None
        cat_d = np.concatenate([best_d, _scores(D, metric).astype(np.float32)], axis=1)
        cat_i = np.concatenate([best_i, names], axis=1)
        key = np.where(np.isnan(cat_d), np.inf, -cat_d if higher else cat_d)
        order = np.argsort(key, axis=1, kind="stable")[:, :k]
        best_d = np.take_along_axis(cat_d, order, axis=1)
        best_i = np.take_along_axis(cat_i, order, axis=1)
    D_out, I_out = empty_result(q, k)
    D_out[:, : best_d.shape[1]] = best_d
    I_out[:, : best_i.shape[1]] = best_i
    return D_out, I_out
