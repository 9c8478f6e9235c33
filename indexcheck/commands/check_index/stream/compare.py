"""check-index --all: one block of fresh vectors compared with their stored ones.

The same function runs on the driver (pass 2 over the store's batches) and, on Ray, inside
the ``map_batches`` stage (:meth:`indexcheck.engines.ray.engine.RayEngine.compare_on_workers`),
so the status bytes and cosines are the same bytes wherever they were computed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ....vectors import absurd_magnitude
from ....vectors import normalize_rows as _unit

#: status bytes of the streamed check (``OK`` is scratch.OK_CODE)
MISSING, OK, LOW, DIM, NONFINITE, ZERO, ABSURD = range(7)


def compare_rows(
    fresh: np.ndarray, vectors: np.ndarray, dims: np.ndarray, d: int, min_cosine: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(status uint8 (m,), cosine float32 (m,) NaN where not compared, unit stored vectors
    float32 (k, d) of the LOW rows in row order) of unit fresh vectors float32 (m, d) against
    stored ``vectors`` float32 (m, d) of stored lengths ``dims`` (0: no vector)."""
    finite = np.isfinite(vectors).all(axis=1)
    nonzero = np.any(vectors != 0, axis=1)
    st = np.where(dims == 0, MISSING, np.where(dims != d, DIM, OK)).astype(np.uint8)
    st[(st == OK) & ~finite] = NONFINITE
    st[(st == OK) & ~nonzero] = ZERO
    st[(st == OK) & absurd_magnitude(vectors)] = ABSURD
    cmp = np.flatnonzero(st == OK)
    u = _unit(vectors[cmp])
    cos = np.einsum("ij,ij->i", u, fresh[cmp])
    cosine = np.full(len(st), np.nan, np.float32)
    cosine[cmp] = cos
    low = cos < min_cosine
    st[cmp[low]] = LOW
    return st, cosine, u[low]


@dataclass(frozen=True)
class StoredCompare:
    """What a Ray worker needs to compare a block: the store's spec (opened once per
    worker, read by id), the embedder's dimension and the threshold. Called with a block's
    ids and unit fresh vectors float32 (m, d): (status, cosine, stored dims int32 (m,),
    the LOW rows int64 (k,), their unit stored vectors float32 (k, d))."""

    store: str
    trust_pickle: bool
    d: int
    min_cosine: float
    window: int = 0

    def opened(self) -> Any:
        from ....stores.opening import _from_spec

        return _from_spec(self.store, self.trust_pickle)

    def __call__(
        self, store: Any, ids: list[str], fresh: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        got = store.fetch(ids)
        dims = np.asarray(got.dims, np.int32)
        vectors = np.asarray(got.vectors, np.float32)
        if vectors.shape[1] != self.d:  # every stored length differs: none compared
            vectors = np.zeros((len(ids), self.d), np.float32)
        st, cos, low = compare_rows(fresh, vectors, dims, self.d, self.min_cosine)
        return st, cos, dims, np.flatnonzero(st == LOW), low

    def near(self, fresh: np.ndarray, low_at: np.ndarray, low: np.ndarray) -> np.ndarray:
        """int32 (m,): for each LOW row of the block (rows ``low_at`` (k,), unit stored
        vectors ``low`` (k, d)) the offset of its nearest match within ``window`` among the
        block's unit fresh vectors ``fresh`` (m, d); 0 where none (or not low)."""
        from .scratch_search import window_matches

        out = np.zeros(len(fresh), np.int32)
        _key, at = window_matches(fresh, 0, low, low_at, self.window, self.min_cosine)
        hit = at >= 0
        out[low_at[hit]] = at[hit] - low_at[hit]
        return out


__all__ = ["ABSURD", "DIM", "LOW", "MISSING", "NONFINITE", "OK", "ZERO", "StoredCompare",
           "compare_rows"]  # fmt: skip
