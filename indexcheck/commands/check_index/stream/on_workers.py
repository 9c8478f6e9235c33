"""check-index --all with the comparison on the engine's workers (``--engine ray``).

When the engine can read the chunks where it embeds them and the store can be read by id
there (Parquet, JSON Lines, LanceDB), each worker compares its block with the stored
vectors (:class:`.compare.StoredCompare`) and only the status bytes, cosines, stored
lengths and the low rows' stored vectors come back; the fresh vectors stay on the cluster,
read by position when the shift search needs them. The rest of the check runs as with the
local engine, so its rows are the same.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from ....errors import DataFileError, DimensionMismatchError
from .compare import DIM, LOW, MISSING, StoredCompare
from .scratch import ID_ROWS
from .scratch_search import window_search

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
        spec, run.settings.trust_pickle, run.embedder.dimension, run.settings.min_cosine
    )


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
    for ids, digests, st, cos, dims, low in worked.blocks():
        run.ids.add_hashed(ids, digests)
        at = np.flatnonzero(st == DIM)
        bad_dim.update(zip((at + start).tolist(), dims[at].tolist(), strict=True))
        status.append(st)
        cosine.append(cos)
        for q, u in zip((np.flatnonzero(st == LOW) + start).tolist(), low, strict=True):
            window_search(worked.fresh, run.pending, q, u, run.settings, shift, waiting)
        start += len(ids)
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
