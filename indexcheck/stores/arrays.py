"""Array helpers every store shares: float32 query matrices, empty results, ragged rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import SpecError
from .protocol import Fetched, VectorBatch


def empty_result(q: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """A ``(D, I)`` pair of shape (q, k) filled with NaN / None."""
    return np.full((q, k), np.nan, dtype=np.float32), np.full((q, k), None, dtype=object)


def as_float32_matrix(vectors: Any, dimension: int | None = None) -> np.ndarray:
    """Coerce to a C-contiguous float32 (n, d) array."""
    arr = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if dimension is not None and arr.shape[1] != dimension:
        raise SpecError(f"expected vectors of dimension {dimension}, got {arr.shape[1]}")
    return arr


def pack_rows(rows: Sequence[Any | None], dimension: int) -> tuple[np.ndarray, np.ndarray]:
    """Pack possibly ragged or missing vectors into ``(vectors (n, d), dims (n,))``.

    Rows whose length differs from ``dimension`` are zero-filled in ``vectors`` and
    keep their true length in ``dims``; missing rows (None) have dims 0.
    """
    n = len(rows)
    out = np.zeros((n, dimension), dtype=np.float32)
    dims = np.zeros(n, dtype=np.int32)
    for i, row in enumerate(rows):
        if row is None:
            continue
        vec = np.asarray(row, dtype=np.float32).reshape(-1)
        dims[i] = vec.shape[0]
        if vec.shape[0] == dimension:
            out[i] = vec
    return out, dims


def fetched_in_order(got: VectorBatch, ids: Sequence[str], dimension: int,
                     texts: bool) -> Fetched:  # fmt: skip
    """The rows of ``got`` (an engine's answer to a fetch, in its own order, repeats and
    absent ids left out) laid out as ``ids`` asked: float32 (n, d), found, dims, and the
    texts when the store has a text field (``texts``)."""
    pos = {vid: i for i, vid in enumerate(got.ids)}
    rows = [got.vectors[pos[i]] if i in pos and got.dims[pos[i]] else None for i in ids]
    vectors, dims = pack_rows(rows, dimension)
    found = np.array([i in pos for i in ids], dtype=bool)
    held = [got.texts[pos[i]] if got.texts and i in pos else None for i in ids]
    return Fetched(list(ids), vectors, found, dims, held if texts else None)
