"""An on-disk id -> row map for the streamed file stores, cached by the file's fingerprint.

A streamed store never holds its ids: one pass over the file gives each id's xxh3-64 key
and its locator (the row number in a Parquet file, the byte offset of the line in a JSON
Lines file). The keys are sorted and written, with their locators, as two ``.npy`` files
under ``<cache root>/idmap/<sha256(fingerprint + columns)[:32]>/``, read back memory-mapped:
16 bytes a row on disk, and only the pages a lookup touches are resident. A lookup returns
every candidate locator of an id's key; the store reads those rows and keeps the one whose
id is the id asked (two ids sharing a 64-bit key still resolve).

A cache folder is written under a temporary name and renamed into place once complete; when
the cache root cannot be written the map is kept in memory for this run only.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from ...errors import DataFileError
from ...output.cachedir import cache_root

VERSION = 1


def id_keys(ids: Sequence[str]) -> np.ndarray:
    """uint64 xxh3-64 of each id's UTF-8 bytes."""
    return np.fromiter(
        (xxhash.xxh3_64_intdigest(i.encode("utf-8")) for i in ids), np.uint64, len(ids)
    )


class KeyedOffsets:
    """Ids and their byte offsets in a file, gathered in blocks of at most ``size``: one
    uint64 :func:`id_keys` array and one int64 offset array per block (the last block
    possibly empty), as :meth:`IdMap.build` takes them."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.keys: list[np.ndarray] = []
        self.offsets: list[np.ndarray] = []
        self._ids: list[str] = []
        self._offs: list[int] = []

    def add(self, cid: str, offset: int) -> None:
        self._ids.append(cid)
        self._offs.append(offset)
        if len(self._ids) >= self.size:
            self._close_block()

    def _close_block(self) -> None:
        self.keys.append(id_keys(self._ids))
        self.offsets.append(np.asarray(self._offs, dtype=np.int64))
        self._ids, self._offs = [], []

    def done(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """(key blocks, offset blocks), the open block closed."""
        self._close_block()
        return self.keys, self.offsets


def column_id_keys(arr: Any) -> np.ndarray:
    """:func:`id_keys` of an Arrow array of ids: from its buffer when
    :func:`arrow_id_keys` can, else as ``str()`` writes each id (another type, a null)."""
    k = arrow_id_keys(arr)
    return k if k is not None else id_keys([str(x) for x in arr.to_pylist()])


def duplicate_ids(path: Any) -> DataFileError:
    """The refusal (exit 2) of a store file holding an id twice."""
    return DataFileError(f"{path} has duplicate ids; each id must appear once")


def arrow_id_keys(arr: Any) -> np.ndarray | None:
    """:func:`id_keys` of an Arrow array of ids, hashed straight from its data buffer (the
    bytes of a string array are its ids' UTF-8); an integer array is cast to strings first
    (as ``str`` writes them). None for any other type or for an array with a null."""
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_integer(arr.type):
        arr = arr.cast(pa.string())
    if arr.null_count or not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return None
    view, starts, stops = string_slices(arr)
    # map over slices: the loop runs in C, no Python frame per id
    parts = map(view.__getitem__, map(slice, starts, stops))
    return np.fromiter(map(xxhash.xxh3_64_intdigest, parts), np.uint64, len(arr))


def string_slices(arr: Any) -> tuple[memoryview, list[int], list[int]]:
    """(data buffer, start offsets, stop offsets) of an Arrow (large) string array."""
    import pyarrow as pa

    n = len(arr)
    width = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    offsets = np.frombuffer(arr.buffers()[1], dtype=width)[arr.offset : arr.offset + n + 1]
    data = arr.buffers()[2]
    view = memoryview(data) if data is not None else memoryview(b"")
    return view, offsets[:-1].tolist(), offsets[1:].tolist()


class IdMap:
    """Sorted uint64 keys and the int64 locator of each, in key order."""

    def __init__(self, keys: np.ndarray, locs: np.ndarray, meta: dict[str, Any]) -> None:
        self.keys, self.locs, self.meta = keys, locs, meta
        #: more per-row arrays saved beside the map (e.g. row -> byte offset)
        self.extra: dict[str, np.ndarray] = {}
        self.from_cache = False

    @classmethod
    def build(cls, keys: list[np.ndarray], locs: list[np.ndarray], meta: dict[str, Any]) -> IdMap:
        k = np.concatenate(keys) if keys else np.zeros(0, np.uint64)
        loc = np.concatenate(locs) if locs else np.zeros(0, np.int64)
        order = np.argsort(k, kind="stable")
        return cls(k[order], loc[order].astype(np.int64), meta)

    def shared_keys(self) -> np.ndarray:
        """Locators whose key equals its neighbour's (repeated ids, or a rare collision),
        in pairs ``(n, 2)`` of adjacent entries."""
        same = np.flatnonzero(self.keys[1:] == self.keys[:-1])
        return np.stack([self.locs[same], self.locs[same + 1]], axis=1)

    def candidates(self, ids: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(which asked id, locator) for every entry whose key is an asked id's key."""
        k = id_keys(ids)
        lo = np.searchsorted(self.keys, k, side="left")
        hi = np.searchsorted(self.keys, k, side="right")
        count = hi - lo
        which = np.repeat(np.arange(len(ids), dtype=np.int64), count)
        if not which.size:
            return which, np.zeros(0, np.int64)
        starts = np.repeat(lo - np.cumsum(count) + count, count)
        at = starts + np.arange(which.size)
        return which, np.asarray(self.locs[at], dtype=np.int64)

    # -- the cache -------------------------------------------------------------------------
    @staticmethod
    def folder(fingerprint: str, columns: str) -> Path:
        name = hashlib.sha256(f"{VERSION}\0{fingerprint}\0{columns}".encode()).hexdigest()[:32]
        return cache_root() / "idmap" / name

    @classmethod
    def load(cls, fingerprint: str, columns: str) -> IdMap | None:
        where = cls.folder(fingerprint, columns)
        try:
            meta = json.loads((where / "meta.json").read_text(encoding="utf-8"))
            if meta.get("fingerprint") != fingerprint or meta.get("columns") != columns:
                return None
            keys = np.load(where / "keys.npy", mmap_mode="r")
            locs = np.load(where / "locs.npy", mmap_mode="r")
        except (OSError, ValueError):
            return None
        if keys.shape != locs.shape or keys.shape[0] != meta.get("count"):
            return None
        found = cls(keys, locs, meta)
        try:
            for name in meta.get("extra", []):
                found.extra[name] = np.load(where / f"extra-{name}.npy", mmap_mode="r")
        except (OSError, ValueError):
            return None
        found.from_cache = True
        return found

    def save(self, fingerprint: str, columns: str) -> None:
        """Write the map into the cache; a cache root that cannot be written is skipped."""
        where = self.folder(fingerprint, columns)
        tmp = where.parent / f".{where.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
        try:
            tmp.mkdir(parents=True)
            np.save(tmp / "keys.npy", np.ascontiguousarray(self.keys))
            np.save(tmp / "locs.npy", np.ascontiguousarray(self.locs))
            for name, values in self.extra.items():
                np.save(tmp / f"extra-{name}.npy", np.ascontiguousarray(values))
            meta = {**self.meta, "fingerprint": fingerprint, "columns": columns}
            meta["extra"] = sorted(self.extra)
            meta["count"] = int(self.keys.shape[0])
            (tmp / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
            if where.exists():
                shutil.rmtree(where, ignore_errors=True)
            os.replace(tmp, where)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)

    def update_meta(self, fingerprint: str, columns: str, **values: Any) -> None:
        """Add ``values`` to the meta, here and in the cached map (rewritten atomically;
        a cache that cannot be written is skipped)."""
        self.meta.update(values)
        where = self.folder(fingerprint, columns) / "meta.json"
        tmp = where.with_name(f".meta.{os.getpid()}.{uuid.uuid4().hex[:8]}")
        try:
            old = json.loads(where.read_text(encoding="utf-8"))
            tmp.write_text(json.dumps({**old, **values}), encoding="utf-8")
            os.replace(tmp, where)
        except (OSError, ValueError):
            tmp.unlink(missing_ok=True)


def _learned_path(fingerprint: str, columns: str) -> Any:
    folder = IdMap.folder(fingerprint, columns)
    return folder.with_name(f"{folder.name}.learned.json")


def load_learned(fingerprint: str, columns: str) -> dict[str, Any] | None:
    """What a pass over the vectors learned (``dimension``, ``fast``) of a file whose id
    map was never built (:func:`save_learned`), or None."""
    try:
        meta = json.loads(_learned_path(fingerprint, columns).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if meta.get("fingerprint") != fingerprint or meta.get("columns") != columns:
        return None
    return {"dimension": meta.get("dimension"), "fast": meta.get("fast")}


def save_learned(fingerprint: str, columns: str, meta: dict[str, Any]) -> None:
    """Keep ``meta`` for the next open of the same file (written atomically; a cache that
    cannot be written is skipped)."""
    where = _learned_path(fingerprint, columns)
    tmp = where.with_name(f".{where.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}")
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        body = {**meta, "fingerprint": fingerprint, "columns": columns}
        tmp.write_text(json.dumps(body), encoding="utf-8")
        os.replace(tmp, where)
    except OSError:
        tmp.unlink(missing_ok=True)
