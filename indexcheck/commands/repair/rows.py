"""The source read for a repair: every row's id, texts, metadata and stored vector, in the
store's own order (the build order a positional bug walks), held in memory."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import DataFileError, DimensionMismatchError
from ...inputs.corpus import Corpus
from ...stores.base import VectorStore
from ...vectors import absurd_magnitude

#: rows read from the store at once
SCAN_ROWS = 4096


@dataclass
class SourceRows:
    """The rows a repair writes, in order: ``ids[j]`` with ``texts[j]`` (as they are now)
    and ``built[j]`` (the text the store holds, what was embedded; the same when the store
    keeps no text); ``vectors`` float32 (n, d), zero where ``unusable`` names why the
    stored vector cannot be reused (``missing_vector``, ``dimension_mismatch``,
    ``non_finite``, ``zero_vector``, ``absurd_magnitude``); ``in_store`` bool (n,): the
    row is in the store (False for a chunk of the chunks file the store lacks);
    ``chunk`` bool (n,): a chunk's row, written (False: an orphan vector, no chunk has
    its id: left out, but it was part of the build and its vector may be a chunk's)."""

    ids: list[str]
    texts: list[str]
    built: list[str]
    metadata: list[dict[str, Any]]
    vectors: np.ndarray
    in_store: np.ndarray
    chunk: np.ndarray
    unusable: dict[int, str] = field(default_factory=dict)
    #: positions are build order (the chunks file's, or an ordered store's): the shift
    #: readings apply
    ordered: bool = True

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def orphans(self) -> list[str]:
        """The ids of the stored vectors no chunk has, in store order."""
        return [self.ids[j] for j in np.flatnonzero(~self.chunk).tolist()]

    def reordered(self, order: np.ndarray) -> SourceRows:
        """The rows in ``order`` (int64 (n,), a permutation)."""
        pick = order.tolist()
        at = {old: new for new, old in enumerate(pick)}
        return SourceRows(
            [self.ids[j] for j in pick], [self.texts[j] for j in pick],
            [self.built[j] for j in pick], [self.metadata[j] for j in pick],
            self.vectors[order], self.in_store[order], self.chunk[order],
            {at[j]: why for j, why in self.unusable.items()}, self.ordered,
        )  # fmt: skip

    def written(self) -> SourceRows:
        """The chunks' rows only (what a target holds), in order."""
        keep = np.flatnonzero(self.chunk)
        pick = keep.tolist()
        return SourceRows(
            [self.ids[j] for j in pick], [self.texts[j] for j in pick],
            [self.built[j] for j in pick], [self.metadata[j] for j in pick],
            self.vectors[keep], self.in_store[keep], np.ones(len(keep), bool),
        )  # fmt: skip


def _as_dict(m: Any) -> dict[str, Any]:
    """A row's metadata as a dict: a mapping as it is, a JSON object string (a repaired
    copy's ``metadata`` column) parsed, anything else none."""
    if isinstance(m, str):
        try:
            m = json.loads(m)
        except ValueError:
            return {}
    return dict(m) if isinstance(m, dict) else {}


def read_rows(store: VectorStore, dimension: int, chunks: Corpus | None) -> SourceRows:
    """Every stored row (the first of an id stored twice) in store order, then the chunks
    of ``chunks`` the store lacks; store ids ``chunks`` lacks are orphans. A store that
    keeps no order (Chroma) is put in ``chunks``'s order, its orphans last.
    Raises DimensionMismatchError when the store's vectors have another dimension than the
    embedder's ``dimension``, DataFileError when there is nothing to repair."""
    info = store.info()
    if info.dimension and info.dimension != dimension:
        raise DimensionMismatchError(
            f"the store holds {info.dimension}-d vectors but the embedder gives {dimension}-d; "
            "pass the --embedder the index was built with (a whole new model is a full "
            "reindex: indexcheck embed)"
        )
    want = None if chunks is None else chunks.position
    ids: list[str] = []
    built: list[str | None] = []
    meta: list[dict[str, Any]] = []
    blocks: list[np.ndarray] = []
    unusable: dict[int, str] = {}
    orphan: list[int] = []
    seen: set[str] = set()
    for batch in store.iter_vectors(SCAN_ROWS):
        md = batch.metadata
        if md is None and hasattr(store, "metadata_of"):
            md = store.metadata_of(batch.ids)
        keep = []
        for r, cid in enumerate(batch.ids):
            if cid in seen:
                continue
            seen.add(cid)
            if want is not None and cid not in want:
                orphan.append(len(ids))
            keep.append(r)
            ids.append(cid)
            built.append(batch.texts[r] if batch.texts is not None else None)
            meta.append(_as_dict(md[r] if md is not None else None))
        if not keep:
            continue
        k = np.asarray(keep, np.int64)
        dims = np.asarray(batch.dims)[k]
        v = np.zeros((len(k), dimension), np.float32)
        raw = np.asarray(batch.vectors, np.float32)
        good = dims == dimension
        if raw.ndim == 2 and raw.shape[1] == dimension:
            v[good] = raw[k[good]]
        base = len(ids) - len(k)
        for r in np.flatnonzero(~good).tolist():
            unusable[base + r] = "missing_vector" if dims[r] == 0 else "dimension_mismatch"
        bad = good & ~np.isfinite(v).all(axis=1)
        bad_zero = good & ~bad & ~np.any(v != 0, axis=1)
        bad_big = good & ~bad & ~bad_zero & absurd_magnitude(np.nan_to_num(v))
        for why, mask in (
            ("non_finite", bad),
            ("zero_vector", bad_zero),
            ("absurd_magnitude", bad_big),
        ):
            for r in np.flatnonzero(mask).tolist():
                unusable[base + r] = why
        v[bad] = 0
        blocks.append(v)
    n_store = len(ids)
    texts: list[str] = []
    dropped = set(orphan)
    for j, cid in enumerate(ids):
        if j in dropped:  # never matched: its text, when the store has none, is unknown
            was = built[j]
            texts.append(was if was is not None else f"\0orphan {cid}")
            continue
        own = chunks.texts[chunks.position[cid]] if chunks is not None else built[j]
        if own is None:
            raise DataFileError(
                f"{store.spec} keeps no text for '{cid}'; pass --chunks FILE with every "
                "chunk's id and text"
            )
        texts.append(own)
    if chunks is not None:  # chunks the store lacks: no vector anywhere yet
        for p, cid in enumerate(chunks.ids):
            if cid not in seen:
                unusable[len(ids)] = "missing_vector"
                ids.append(cid)
                texts.append(chunks.texts[p])
                built.append(None)
                cmeta = chunks.metadata[p] if chunks.metadata is not None else {}
                meta.append(dict(cmeta or {}))
    if len(ids) == len(orphan):
        raise DataFileError(f"{store.spec} holds no chunk to repair")
    extra = len(ids) - n_store
    vectors = np.concatenate([*blocks, np.zeros((extra, dimension), np.float32)])
    in_store = np.arange(len(ids)) < n_store
    chunk = np.ones(len(ids), bool)
    chunk[orphan] = False
    made = [t if b is None else b for t, b in zip(texts, built, strict=True)]
    in_order = bool(getattr(store, "ordered", True))
    rows = SourceRows(ids, texts, made, meta, vectors, in_store, chunk, unusable)
    if chunks is None or in_order:  # the store's order is the build order, orphans in it
        rows.ordered = in_order
        return rows
    # an unordered store (Chroma): the chunks file's order is the build order; orphans last
    key = [
        chunks.position[cid] if keep else len(chunks) + j
        for j, (cid, keep) in enumerate(zip(ids, chunk.tolist(), strict=True))
    ]
    return rows.reordered(np.argsort(np.asarray(key, np.int64), kind="stable"))


__all__ = ["SourceRows", "read_rows"]
