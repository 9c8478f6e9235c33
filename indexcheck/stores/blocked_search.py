"""Exact top-k over vectors read block by block, merged as it goes (the streamed stores)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .local import LOCAL_METRICS, exact_knn


def blocked_knn(
    blocks: Iterable[tuple[np.ndarray, np.ndarray]],
    queries: np.ndarray,
    k: int,
    metric: str,
    missing: object = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact search of float32 ``queries`` (q, d) over ``(labels (m,), vectors (m, d))``
    blocks: (D float32 (q, k), NaN where fewer than k rows; labels (q, k), ``missing`` there).

    Scores are those of :func:`exact_knn` over the whole matrix; among equal scores the
    earlier block wins.
    """
    q = queries.shape[0]
    higher = LOCAL_METRICS[metric][2]
    best_d = np.full((q, 0), np.nan, dtype=np.float32)
    best_l = np.full((q, 0), missing, dtype=object)
    for labels, vectors in blocks:
        D, P = exact_knn(vectors, queries, k, metric)
        padded = np.concatenate([np.asarray(labels, dtype=object), [missing]])
        names = padded[np.where(P >= 0, P, len(labels))]
        cat_d = np.concatenate([best_d, D], axis=1)
        cat_l = np.concatenate([best_l, names], axis=1)
        key = np.where(np.isnan(cat_d), np.inf, -cat_d if higher else cat_d)
        order = np.argsort(key, axis=1, kind="stable")[:, :k]
        best_d = np.take_along_axis(cat_d, order, axis=1)
        best_l = np.take_along_axis(cat_l, order, axis=1)
    if best_d.shape[1] < k:
        pad = k - best_d.shape[1]
        best_d = np.concatenate([best_d, np.full((q, pad), np.nan, np.float32)], axis=1)
        best_l = np.concatenate([best_l, np.full((q, pad), missing, object)], axis=1)
    return best_d.astype(np.float32), best_l
