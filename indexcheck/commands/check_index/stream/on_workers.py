"""check-index --all with the comparison on the engine's workers (``--engine ray``).

When the engine can read the chunks where it embeds them and the store can be read by id
there (Parquet, JSON Lines, LanceDB), each worker compares its block with the stored
vectors (:class:`.compare.StoredCompare`) and searches each low chunk's window within its
block; only the status bytes, cosines, stored lengths, the low rows' stored vectors and
their matches come back. The fresh vectors stay on the cluster: a window that crosses a
worker's block is searched by a task where the blocks are. The rest of the check runs as with the
local engine, so its rows are the same.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from ....errors import DataFileError, DimensionMismatchError
from .compare import DIM, LOW, MISSING, StoredCompare
from .scratch import ID_ROWS
from .scratch_search import settle, window_matches

if TYPE_CHECKING:
    from .check import Passes
    from .state import StreamRun

#: the store schemes a worker opens from the spec and reads by id
SPLITTABLE_STORES = ("parquet", "jsonl", "lancedb")


def stored_compare(run: StreamRun) -> StoredCompare | None:
    """The comparison a worker runs, or None when the store is not one it can open (an
    opened object, another scheme) or the texts are the store's own."""
    spec = run.settings.store
    if not isinstance(spec, str) or run.from_store:
        return None
    if getattr(run.store, "scheme", None) not in SPLITTABLE_STORES:
        return None
    return StoredCompare(
        spec, run.settings.trust_pickle, run.embedder.dimension, run.settings.min_cosine,
        run.settings.window,
    )  # fmt: skip


def compared_on_workers(
    run: StreamRun, shift: dict[int, int], waiting: list[int]
) -> tuple[StreamRun, Passes] | None:
    """Passes 1 and 2 on the engine's workers: (the run reading its fresh vectors where
    they were left, the passes' figures), the low chunks searched among their neighbours
    into ``shift`` or ``waiting``; None when the engine or the store cannot."""
    offer = getattr(run.engine, "compare_on_workers", None)
    compare = stored_compare(run) if offer is not None else None
    if compare is None:
        return None
    assert offer is not None
    worked = offer(run.embedder, run.source, compare, run.settings.block)
    if worked is None:
        return None
    total = run.source.count()
    run.tick("embedding", 0, total)
    status: list[np.ndarray] = []
    cosine: list[np.ndarray] = []
    bad_dim: dict[int, int] = {}
    start = 0
    batch = (0, 0)  # the worker's batch the next rows belong to, [first, end)
    for got in worked.blocks():
        run.ids.add_hashed(got.ids, got.digests)
        at = np.flatnonzero(got.status == DIM)
        bad_dim.update(zip((at + start).tolist(), got.dims[at].tolist(), strict=True))
        status.append(got.status)
        cosine.append(got.cosine)
        batch = _window_searched(run, worked.fresh, got, start, batch, shift, waiting)
        start += len(got.ids)
        run.tick("embedding", start, total)
    run.ids.finish(run.source.source)
    if start == 0:
        src = run.source.source
        raise DataFileError(f"{src or 'the corpus'} holds no chunks; nothing to check")
    if worked.fresh.n != start:
        raise DimensionMismatchError("the workers returned another number of vectors")
    run = dataclasses.replace(run, fresh=worked.fresh)
    all_status = np.concatenate(status)
    return run, (all_status, np.concatenate(cosine), bad_dim, _orphans(run, all_status))


def _window_searched(
    run: StreamRun,
    fresh: Any,
    got: Any,
    start: int,
    batch: tuple[int, int],
    shift: dict[int, int],
    waiting: list[int],
) -> tuple[int, int]:
    """The low chunks of a compared block (first position ``start``) settled as
    :func:`.scratch_search.window_search` would: the match a worker found within its own
    batch stands when no neighbour outside the batch could be nearer; the others are
    searched where the fresh vectors are (:func:`.scratch_search.window_matches` on the
    blocks their windows cross). Returns the batch the next block's first rows belong to."""
    window, n = run.settings.window, fresh.n
    firsts = np.asarray([start + r for r, _ in got.batches] or [0], np.int64)
    ends = np.asarray([start + r + m for r, m in got.batches] or [0], np.int64)
    low = np.flatnonzero(got.status == LOW)
    match = np.full(len(low), -1, np.int64)
    again: list[int] = []
    for k, r in enumerate(low.tolist()):
        q = start + r
        j = int(np.searchsorted(firsts, q, "right")) - 1 if got.batches else -1
        first, end = (int(firsts[j]), int(ends[j])) if j >= 0 else batch
        step = int(got.near[r])
        key = 2 * abs(step) + (step > 0) if step else np.iinfo(np.int64).max
        before = q - window < first and first > 0 and 2 * (q - first + 1) < key
        after = q + window >= end and end < n and 2 * (end - q) + 1 < key
        if before or after:
            again.append(k)
        elif step:
            match[k] = q + step
    if again:
        pos = low[again] + start
        best = np.full(len(again), np.iinfo(np.int64).max, np.int64)
        found = np.full(len(again), -1, np.int64)
        hits = fresh.map_blocks(
            window_matches, got.low[again], pos, window, run.settings.min_cosine,
            lo=max(0, int(pos.min()) - window), hi=int(pos.max()) + window + 1,
        )  # fmt: skip
        for _first, (key, at) in hits:
            nearer = key < best
            best[nearer], found[nearer] = key[nearer], at[nearer]
        match[again] = found
    for k, r in enumerate(low.tolist()):
        settle(start + r, int(match[k]), got.low[k], shift, waiting, run.pending)
    if got.batches:
        return int(firsts[-1]), int(ends[-1])
    return batch


def _orphans(run: StreamRun, status: np.ndarray) -> list[str]:
    """The stored ids that are no chunk's, in the store's order: none when every stored
    row was found (the store's count), else its id column read here."""
    found = int(np.count_nonzero(status != MISSING))
    if run.store_count and found == run.store_count:
        return []
    store: Any = run.store
    out: list[str] = []
    if getattr(store, "arrow_ready", False):
        batches: Any = (
            [str(i) for i in rb.column(0).to_pylist()]
            for rb in store.arrow_batches(ID_ROWS, False, ("id",))
        )
    else:
        batches = (batch.ids for batch in store.iter_vectors(1000))
    for ids in batches:
        pos = run.ids.positions(ids)
        out.extend(i for i, p in zip(ids, pos, strict=True) if p < 0)
    return out


__all__ = ["SPLITTABLE_STORES", "compared_on_workers", "stored_compare"]
