"""An engine's hit lists -> the faiss-like ``(D, I)`` pair, one block of queries at a time.

Milvus, Qdrant and LanceDB answer a block of queries with, per query, its hits best first;
:func:`gather` sends the blocks and lays the hits out as ``D`` float32 ``(q, k)`` (the
engine's own score, NaN where fewer than k came back) and ``I`` object ``(q, k)`` (ids as
strings, None where missing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from .base import empty_result

#: per query of a block, its hits best first: (score, id)
Hits = Sequence[Iterable[tuple[float, str]]]


def gather(
    queries: np.ndarray, k: int, block: int, search: Callable[[np.ndarray], Hits]
) -> tuple[np.ndarray, np.ndarray]:
    """``search`` each block of at most ``block`` float32 (b, d) rows of ``queries``,
    keeping the first ``k`` hits of each query."""
    D, I = empty_result(queries.shape[0], k)
    if k <= 0:
        return D, I
    for start in range(0, queries.shape[0], block):
        for qi, hits in enumerate(search(queries[start : start + block])):
            for j, (score, vid) in enumerate(hits):
                if j == k:
                    break
                D[start + qi, j] = score
                I[start + qi, j] = vid
    return D, I
