"""The source read for a repair, streamed: one pass over the store keeps, per row, only what
the plan needs (the id, a 64-bit key of the text it was embedded from and of its text now,
whether its vector is usable), never a vector, a text or metadata; the writing pass reads
the store again in its order, a batch at a time (:func:`scan_source`), and the vectors that
sit at other rows are fetched by id (:func:`vectors_at`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import xxhash

from ...errors import DataFileError, DimensionMismatchError
from ...inputs.corpus import Corpus
from ...stores.base import VectorBatch, VectorStore
from ...vectors import absurd_magnitude

#: rows read from the store at once
SCAN_ROWS = 4096


def text_keys(texts: list[str]) -> np.ndarray:
    """int64 (n,): xxh3-64 of each text's UTF-8 (the identity texts are compared by)."""
    h = xxhash.xxh3_64_intdigest
    return np.fromiter((h(t.encode("utf-8")) for t in texts), np.uint64, len(texts)).view(np.int64)


@dataclass
class SourceRows:
    """The rows of a repair by position (build order: the store's, or the chunks file's
    for a store that keeps none): ``ids[j]``; ``built[j]`` the key of the text the store
    holds (what was embedded; the text now when the store keeps none) and ``now[j]`` of
    the text as it is now (:func:`text_keys`); ``row[j]`` the row of the store's scan
    (-1: a chunk of the chunks file the store lacks); ``in_store``, ``chunk`` bool (n,):
    a chunk's row, written (False: an orphan vector, part of the build but no chunk has
    its id); ``unusable`` names why a stored vector cannot be reused (``missing_vector``,
    ``dimension_mismatch``, ``non_finite``, ``zero_vector``, ``absurd_magnitude``);
    ``scan_pos`` int64 (rows scanned,): each scanned row's position (-1: an id stored
    twice, only its first row counts)."""

    ids: list[str]
    built: np.ndarray
    now: np.ndarray
    row: np.ndarray
    in_store: np.ndarray
    chunk: np.ndarray
    scan_pos: np.ndarray
    unusable: dict[int, str] = field(default_factory=dict)
    #: positions are build order (the chunks file's, or an ordered store's): the shift
    #: readings apply
    ordered: bool = True
    #: the texts now, when a chunks file gave them (else the store's)
    corpus: Corpus | None = None

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def orphans(self) -> list[str]:
        """The ids of the stored vectors no chunk has, in store order."""
        return [self.ids[j] for j in np.flatnonzero(~self.chunk).tolist()]

    @property
    def changed(self) -> np.ndarray:
        """bool (n,): the text now differs from the one embedded."""
        return np.asarray(self.now != self.built)

    def text_of(self, j: int, stored: str | None) -> str:
        """Position ``j``'s text now (``stored``: the store's text of its row, if read)."""
        if self.corpus is not None and self.ids[j] in self.corpus.position:
            return self.corpus.texts[self.corpus.position[self.ids[j]]]
        if stored is None:
            raise DataFileError(
                f"the store keeps no text for '{self.ids[j]}'; pass --chunks FILE with "
                "every chunk's id and text"
            )
        return stored


def as_dict(m: Any) -> dict[str, Any]:
    """A row's metadata as a dict: a mapping as it is, a JSON object string (a repaired
    copy's ``metadata`` column) parsed, anything else none."""
    if isinstance(m, str):
        try:
            m = json.loads(m)
        except ValueError:
            return {}
    return dict(m) if isinstance(m, dict) else {}


def usable(batch: VectorBatch, dimension: int) -> tuple[np.ndarray, dict[int, str]]:
    """The batch's vectors float32 (m, d), zero where unusable, and why each unusable one
    is (by row of the batch)."""
    dims = np.asarray(batch.dims)
    v = np.zeros((len(batch.ids), dimension), np.float32)
    raw = np.asarray(batch.vectors, np.float32)
    good = dims == dimension
    if raw.ndim == 2 and raw.shape[1] == dimension:
        v[good] = raw[good]
    why: dict[int, str] = {}
    for r in np.flatnonzero(~good).tolist():
        why[r] = "missing_vector" if dims[r] == 0 else "dimension_mismatch"
    bad = good & ~np.isfinite(v).all(axis=1)
    bad_zero = good & ~bad & ~np.any(v != 0, axis=1)
    bad_big = good & ~bad & ~bad_zero & absurd_magnitude(np.nan_to_num(v))
    masks = (("non_finite", bad), ("zero_vector", bad_zero), ("absurd_magnitude", bad_big))
    for reason, mask in masks:
        for r in np.flatnonzero(mask).tolist():
            why[r] = reason
    v[bad] = 0
    return v, why


def _first_of_each(ids: list[str]) -> np.ndarray:
    """bool (n,): the first row of each id (an id stored twice counts once), from 64-bit
    id keys, each collision checked on the ids themselves."""
    keys = text_keys(ids)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    keep = np.zeros(len(ids), bool)
    keep[first] = True
    for r in np.flatnonzero(~keep).tolist():  # same key: the same id, unless it collides
        if ids[r] != ids[int(first[inverse[r]])]:
            keep[r] = True
    return keep


def read_rows(store: VectorStore, dimension: int, chunks: Corpus | None) -> SourceRows:
    """One pass over the store: every stored row (the first of an id stored twice) in
    store order, then the chunks of ``chunks`` the store lacks; store ids ``chunks`` lacks
    are orphans. A store that keeps no order (Chroma) is put in ``chunks``'s order, its
    orphans last. Raises DimensionMismatchError when the store's vectors have another
    dimension than the embedder's ``dimension``, DataFileError when there is nothing to
    repair or no text for a chunk."""
    info = store.info()
    if info.dimension and info.dimension != dimension:
        raise DimensionMismatchError(
            f"the store holds {info.dimension}-d vectors but the embedder gives {dimension}-d; "
            "pass the --embedder the index was built with (a whole new model is a full "
            "reindex: indexcheck embed)"
        )
    ids: list[str] = []
    built_parts: list[np.ndarray] = []
    unusable_scan: dict[int, str] = {}
    for batch in store.iter_vectors(SCAN_ROWS):
        base = len(ids)
        ids += batch.ids
        _, why = usable(batch, dimension)
        unusable_scan.update({base + r: w for r, w in why.items()})
        texts = batch.texts
        if texts is None or any(t is None for t in texts):
            if chunks is None:
                missing = next(
                    i for k, i in enumerate(batch.ids) if texts is None or texts[k] is None
                )
                raise DataFileError(
                    f"{store.spec} keeps no text for '{missing}'; pass --chunks FILE with "
                    "every chunk's id and text"
                )
            texts = [t if t is not None else "" for t in (texts or [None] * len(batch.ids))]
            known = [t is not None for t in (batch.texts or [None] * len(batch.ids))]
            keys = text_keys([str(t) for t in texts])
            keys[~np.asarray(known, bool)] = 0  # filled from the chunks below
            built_parts.append(keys)
        else:
            built_parts.append(text_keys([str(t) for t in texts]))
    keep = _first_of_each(ids)
    scan_pos = np.full(len(ids), -1, np.int64)
    scan_pos[keep] = np.arange(int(keep.sum()))
    kept_rows = np.flatnonzero(keep)
    ids = [ids[r] for r in kept_rows.tolist()]
    scanned_built = np.concatenate(built_parts) if built_parts else np.zeros(0, np.int64)
    built = scanned_built[kept_rows]
    unusable = {int(scan_pos[r]): w for r, w in unusable_scan.items() if keep[r]}
    n_store = len(ids)
    if chunks is None:
        now = built.copy()
        chunk = np.ones(n_store, bool)
    else:
        chunk = np.fromiter((cid in chunks.position for cid in ids), bool, n_store)
        now = np.zeros(n_store, np.int64)
        at = [chunks.position[cid] for cid in np.asarray(ids, object)[chunk].tolist()]
        now[chunk] = text_keys([chunks.texts[p] for p in at])
        had_none = built == 0
        built[had_none & chunk] = now[had_none & chunk]
        if (had_none & ~chunk).any():  # an orphan the store keeps no text for: its own key
            for j in np.flatnonzero(had_none & ~chunk).tolist():
                built[j] = text_keys([f"\0orphan {ids[j]}"])[0]
        stored = set(ids)
        extra = [p for p, cid in enumerate(chunks.ids) if cid not in stored]
        del stored
        for p in extra:
            unusable[len(ids)] = "missing_vector"
            ids.append(chunks.ids[p])
        extra_keys = text_keys([chunks.texts[p] for p in extra])
        built = np.concatenate([built, extra_keys])
        now = np.concatenate([now, extra_keys])
        chunk = np.concatenate([chunk, np.ones(len(extra), bool)])
    if not chunk.any():
        raise DataFileError(f"{store.spec} holds no chunk to repair")
    n = len(ids)
    row = np.full(n, -1, np.int64)
    row[:n_store] = np.arange(n_store)
    in_store = np.arange(n) < n_store
    in_order = bool(getattr(store, "ordered", True))
    rows = SourceRows(ids, built, now, row, in_store, chunk, scan_pos, unusable,
                      in_order, chunks)  # fmt: skip
    if chunks is None or in_order:  # the store's order is the build order, orphans in it
        return rows
    # an unordered store (Chroma): the chunks file's order is the build order; orphans last
    key = np.fromiter(
        (chunks.position[cid] if c else len(chunks) + j
         for j, (cid, c) in enumerate(zip(ids, chunk.tolist(), strict=True))),
        np.int64, n,
    )  # fmt: skip
    return reordered(rows, np.argsort(key, kind="stable"))


def reordered(rows: SourceRows, order: np.ndarray) -> SourceRows:
    """``rows`` in ``order`` (int64 (n,), a permutation of positions)."""
    at = np.empty_like(order)
    at[order] = np.arange(len(order))
    scan_pos = np.where(rows.scan_pos >= 0, at[np.maximum(rows.scan_pos, 0)], -1)
    pick = order.tolist()
    return SourceRows(
        [rows.ids[j] for j in pick], rows.built[order], rows.now[order], rows.row[order],
        rows.in_store[order], rows.chunk[order], scan_pos,
        {int(at[j]): why for j, why in rows.unusable.items()}, True, rows.corpus,
    )  # fmt: skip


def vectors_at(store: VectorStore, rows: SourceRows, at: np.ndarray, dimension: int) -> np.ndarray:
    """float32 (m, d): the stored vector at each position of ``at`` (int64, all usable
    stored rows), fetched by id."""
    if not len(at):
        return np.zeros((0, dimension), np.float32)
    got = store.fetch([rows.ids[j] for j in at.tolist()])
    return np.asarray(got.vectors, np.float32).reshape(len(at), dimension)


def texts_at(store: VectorStore, rows: SourceRows, at: np.ndarray) -> list[str]:
    """The texts now of the positions ``at`` (the chunks file's, else fetched by id)."""
    pick = at.tolist()
    if rows.corpus is not None and all(rows.ids[j] in rows.corpus.position for j in pick):
        return [rows.text_of(j, None) for j in pick]
    got = store.fetch([rows.ids[j] for j in pick]).texts or [None] * len(pick)
    return [rows.text_of(j, t) for j, t in zip(pick, got, strict=True)]


@dataclass(frozen=True)
class Scanned:
    """One batch of the writing pass: the positions of the batch's kept rows, in store
    order, with their vectors float32 (m, d) (zero where unusable), stored texts (None
    where the store keeps none) and metadata."""

    positions: np.ndarray
    vectors: np.ndarray
    texts: list[str | None]
    metadata: list[dict[str, Any]]


def scan_source(store: VectorStore, rows: SourceRows, dimension: int) -> Iterator[Scanned]:
    """The store read again in its order, a batch at a time, as :func:`read_rows` kept it
    (an id stored twice: its first row only)."""
    base = 0
    for batch in store.iter_vectors(SCAN_ROWS):
        m = len(batch.ids)
        pos = rows.scan_pos[base : base + m]
        base += m
        keep = np.flatnonzero(pos >= 0)
        if not len(keep):
            continue
        v, _ = usable(batch, dimension)
        md = batch.metadata
        if md is None and hasattr(store, "metadata_of"):
            md = store.metadata_of(batch.ids)
        k = keep.tolist()
        texts: list[str | None] = (
            [batch.texts[r] for r in k] if batch.texts is not None else [None] * len(k)
        )
        meta = [as_dict(md[r]) if md is not None else {} for r in k]
        yield Scanned(pos[keep], v[keep], texts, meta)


__all__ = ["SourceRows", "read_rows", "scan_source", "text_keys", "texts_at", "vectors_at"]
