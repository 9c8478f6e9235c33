"""The example store: ``dict:FILE.npz``, one numpy array per id.

The whole store is three methods on :class:`indexcheck.stores.BaseStore`; the base
validates ``?metric=``, batches, searches exactly, fingerprints and closes. Install it
(``pip install examples/indexcheck-dictstore``) and ``--store dict:vectors.npz`` works.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from indexcheck.stores import BaseStore, Choice, Fetched, StoreSpec, VectorBatch


class DictStore(BaseStore):
    """Vectors from ``np.savez(path, **{id: vector})``; exact cosine/ip/l2 search."""

    ordered = True  # rows come back in the order they were added

    scheme = "dict"
    params = {"metric": Choice("cosine", "ip", "l2")}

    def __init__(self, spec: StoreSpec, options: Any = None) -> None:
        super().__init__(spec, options)
        with np.load(spec.location) as npz:
            self.data = {key: npz[key].astype(np.float32) for key in npz.files}

    def _scan(self, batch: int) -> Iterator[VectorBatch]:
        ids = list(self.data)
        for start in range(0, len(ids), batch):
            part = ids[start : start + batch]
            vectors = np.stack([self.data[i] for i in part])
            yield VectorBatch(part, vectors, np.full(len(part), vectors.shape[1], np.int32))

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        d = len(next(iter(self.data.values()), ()))
        vectors = np.zeros((len(ids), d), dtype=np.float32)
        found = np.array([i in self.data for i in ids], dtype=bool)
        for row, i in enumerate(ids):
            if found[row]:
                vectors[row] = self.data[i]
        return Fetched(ids, vectors, found, np.where(found, d, 0).astype(np.int32))
