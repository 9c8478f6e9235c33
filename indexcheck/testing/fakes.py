"""Fakes that ship with the package, for users' tests and ours.

- :class:`HashEmbedder`: deterministic unit vectors from each text's hash; equal texts
  give equal vectors, different texts nearly orthogonal ones. No model, no network.
- :class:`MemoryStore`: an in-memory, read-only :class:`~indexcheck.stores.base.VectorStore`
  with exact search, for building planted-fault indexes in tests.
- :func:`positional_cache_bug`: the founding bug, replayed on a list of vectors.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import xxhash

from ..embedders.base import BaseEmbedder
from ..inputs.corpus import text_hash
from ..stores.base import Fetched, StoreInfo, VectorBatch, as_float32_matrix, pack_rows
from ..stores.local import LOCAL_METRICS, exact_knn, ids_of


class HashEmbedder(BaseEmbedder):
    """Unit float32 vectors seeded by xxh3 of the text: ``embed(texts) -> (n, dimension)``."""

    batch_size = 512

    def __init__(self, dimension: int = 64, model: str = "hash", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dimension = dimension
        self.model_id = f"{model}:{dimension}"
        self._salt = model

    def _embed_batch(self, texts: list[Any]) -> tuple[np.ndarray, int]:
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = xxhash.xxh64_intdigest(f"{self._salt}\0{t}".encode())
            v = np.random.default_rng(seed).standard_normal(self.dimension)
            out[i] = v / np.linalg.norm(v)
        return out, sum(len(t.split()) for t in texts)


class MemoryStore:
    """Read-only in-memory store: ids, float32 (n, d) vectors (rows may be None or ragged)."""

    has_exact = True

    def __init__(
        self,
        ids: Sequence[str],
        vectors: np.ndarray | Sequence[Any],
        texts: Sequence[str | None] | None = None,
        metric: str = "cosine",
        dimension: int | None = None,
    ) -> None:
        self.ids = list(ids)
        if isinstance(vectors, np.ndarray):
            self.dimension = dimension or int(vectors.shape[1])
            self.vectors, self.dims = pack_rows(list(vectors), self.dimension)
        else:
            lengths = [len(v) for v in vectors if v is not None]
            self.dimension = dimension or (max(set(lengths), key=lengths.count) if lengths else 0)
            self.vectors, self.dims = pack_rows(list(vectors), self.dimension)
        self.texts = list(texts) if texts is not None else None
        self.metric = metric
        self.spec = f"memory:{len(self.ids)}"
        self._pos = {v: i for i, v in enumerate(self.ids)}
        self.requests = {"fetch": 0, "iter": 0, "query": 0}

    def info(self) -> StoreInfo:
        _, score, hib = LOCAL_METRICS[self.metric]
        return StoreInfo("memory", len(self.ids), self.dimension, self.metric, score, hib, False)

    def fingerprint(self) -> str:
        h = xxhash.xxh3_128(self.vectors.tobytes())
        h.update("\0".join(self.ids).encode())
        return h.hexdigest()

    def fetch(self, ids: Sequence[str]) -> Fetched:
        self.requests["fetch"] += 1
        pos = np.asarray([self._pos.get(i, -1) for i in ids], dtype=np.int64)
        ok = pos >= 0
        vecs = np.zeros((len(ids), self.dimension), dtype=np.float32)
        dims = np.zeros(len(ids), dtype=np.int32)
        vecs[ok], dims[ok] = self.vectors[pos[ok]], self.dims[pos[ok]]
        texts = None
        if self.texts is not None:
            texts = [self.texts[p] if p >= 0 else None for p in pos]
        return Fetched(list(ids), vecs, ok, dims, texts)

    def iter_vectors(self, batch: int = 1000) -> Iterator[VectorBatch]:
        for s in range(0, len(self.ids), batch):
            self.requests["iter"] += 1
            e = s + batch
            texts = self.texts[s:e] if self.texts is not None else None
            yield VectorBatch(self.ids[s:e], self.vectors[s:e], self.dims[s:e], texts)

    def query(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.exact_query(vectors, k)

    def exact_query(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        self.requests["query"] += 1
        D, P = exact_knn(self.vectors, as_float32_matrix(vectors, self.dimension), k, self.metric)
        return D, ids_of(P, self.ids)

    def close(self) -> None:
        return None


def positional_cache_bug(texts: Sequence[str], fresh: np.ndarray) -> np.ndarray:
    """Replay the buggy positional cache: vectors as that indexer would have stored them.

    ``fresh`` float32 (n, d) holds the correct embedding of each text, in order. The bug:
    a chunk whose text hash is already cached gets the cached vector and does NOT advance
    the position counter, so every later chunk receives the vector at the counter, i.e.
    its predecessor's (one more position back after every repeat).
    """
    out = np.empty_like(fresh)
    cache: dict[str, np.ndarray] = {}
    counter = 0
    for i, t in enumerate(texts):
        h = text_hash(t)
        if h in cache:
            out[i] = cache[h]
            continue
        out[i] = fresh[counter]
        cache[h] = out[i]
        counter += 1
        # the correct code advances by position (counter = i + 1); the bug counts only misses
    return out


#: A ready-made 32-d hash embedder for ``--embedder py:indexcheck.testing.fakes:HASH32``.
HASH32 = HashEmbedder(32)


__all__ = ["HASH32", "HashEmbedder", "MemoryStore", "positional_cache_bug"]
