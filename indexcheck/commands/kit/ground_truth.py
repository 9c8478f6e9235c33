"""Exact neighbours of query vectors, and exact similarities of given ids.

Ground truth knows nothing about storage beyond the store's interface: the backend's exact
mode when it has one, else an exact search streamed over every stored vector (through the
on-disk cache of :mod:`.caches` for remote stores).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ...stores.base import VectorStore
from .caches import cache_for, vector_blocks
from .exact import as_similarity, block_rows, exact_topk, pair_similarity, prepare, rebatch
from .fetching import fetch_batches

FETCH_BATCH = 1000
GROUND_TRUTH_BACKEND = "backend_exact"
GROUND_TRUTH_LOCAL = "local_exact"

Say = Callable[[str], None]


def _quiet(_msg: str) -> None:
    return None


class Lookup:
    """Stored vectors fetched by id once per run (float32, prepared for the family)."""

    def __init__(self, store: VectorStore, dimension: int, family: str) -> None:
        self.store, self.dimension, self.family = store, dimension, family
        self.row: dict[str, int] = {}
        self.parts: list[np.ndarray] = []
        self.matrix = np.zeros((1, dimension), dtype=np.float32)  # row 0: not found
        self.usable = np.zeros(1, dtype=bool)
        self.fetched = 0

    def ensure(self, ids: Iterable[str]) -> None:
        todo = [i for i in dict.fromkeys(ids) if i not in self.row]
        if not todo:
            return
        parts, usable = [self.matrix], [self.usable]
        base = self.matrix.shape[0]
        rerun = "; rerun, and report it if it persists"
        for start, part, got in fetch_batches(self.store, todo, FETCH_BATCH, rerun):
            vecs = np.asarray(got.vectors, dtype=np.float32)
            ok = np.asarray(got.found, dtype=bool) & (np.asarray(got.dims) == self.dimension)
            ok &= np.isfinite(vecs).all(axis=1)
            parts.append(prepare(vecs, self.family))
            usable.append(ok)
            for j, vid in enumerate(part):
                self.row[vid] = base + start + j
        self.fetched += len(todo)
        self.matrix = np.concatenate(parts)
        self.usable = np.concatenate(usable)

    def similarity(self, xq: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """Exact similarity (cos, dot or -l2^2) of prepared queries (q, d) with the ids of
        an object (q, m) matrix: float32 (q, m), NaN for None, unknown or unusable ids."""
        q, m = ids.shape
        self.ensure(i for i in ids.ravel() if i is not None)
        rows = np.fromiter(
            (0 if i is None else self.row[i] for i in ids.ravel()), dtype=np.int64, count=q * m
        ).reshape(q, m)
        out = np.full((q, m), np.nan, dtype=np.float32)
        if m == 0:
            return out
        step = max(1, (32 << 20) // max(1, m * self.dimension * 4))
        for s in range(0, q, step):
            r = rows[s : s + step]
            out[s : s + step] = pair_similarity(xq[s : s + step], self.matrix[r], self.family)
        out[~self.usable[rows]] = np.nan
        return out


@dataclass
class GroundTruth:
    """Exact neighbours of each query: ids object (q, G) and similarities float32 (q, G)
    (cos, dot or ``-l2^2``, higher is nearer, descending; NaN / None where missing)."""

    ids: np.ndarray
    similarity: np.ndarray
    source: str
    seconds: float
    cache: dict[str, Any] | None = None

    def cut(self, depth: int) -> GroundTruth:
        """The first ``depth`` neighbours of each query (itself when it holds no more)."""
        if self.ids.shape[1] <= depth:
            return self
        return replace(self, ids=self.ids[:, :depth], similarity=self.similarity[:, :depth])


def ground_truth(
    store: VectorStore,
    queries: np.ndarray,
    depth: int,
    family: str,
    cache_dir: Path | None = None,
    progress: Say | None = None,
    lookup: Lookup | None = None,
) -> GroundTruth:
    """Exact top-``depth`` of float32 ``queries`` (q, d): the backend's exact mode when it
    has one (then re-scored here from the fetched vectors), else a local exact search
    streamed block by block over every stored vector."""
    say = progress or _quiet
    info = store.info()
    d = info.dimension
    t0 = time.perf_counter()
    xq = prepare(queries, family)
    if store.has_exact:
        say(f"exact search in {info.backend} for {len(queries)} queries")
        _, ids = store.exact_query(queries, depth)
        look = lookup or Lookup(store, d, family)
        sim = look.similarity(xq, np.asarray(ids, dtype=object))
        order = np.argsort(np.where(np.isnan(sim), np.inf, -sim), axis=1, kind="stable")
        sim = np.take_along_axis(sim, order, axis=1)
        ids = np.take_along_axis(np.asarray(ids, dtype=object), order, axis=1)
        ids[np.isnan(sim)] = None
        return GroundTruth(ids, sim, GROUND_TRUTH_BACKEND, time.perf_counter() - t0)
    cache = cache_for(store, d, cache_dir)
    hit = cache is not None and cache.complete()
    say(
        f"exact search over every stored vector of {info.backend}"
        + (" (from the vector cache)" if hit else "")
    )
    rows = block_rows(d)
    D, ids = exact_topk(rebatch(vector_blocks(store, d, cache_dir, rows), rows), xq, depth, family)
    sim = as_similarity(D, family)
    cache_info = None if cache is None else {"path": str(cache.path), "hit": hit}
    return GroundTruth(ids, sim, GROUND_TRUTH_LOCAL, time.perf_counter() - t0, cache_info)
