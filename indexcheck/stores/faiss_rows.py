"""What a FAISS folder holds per row besides the index: ids and texts, and flat vectors.

- :class:`ListedIds`: ids (and texts) held in memory, from LangChain's pickle (which must
  be unpickled whole) or an ``IndexIDMap``'s labels;
- :class:`StreamedIds`: ``ids.json`` read element by element (:mod:`.json_list`), with an
  id -> row map and a row -> byte offset array on disk (:class:`.id_map.IdMap`, cached by
  the id file's own xxh3-128): 24 bytes a row on disk, nothing held;
- :class:`FlatRows`: the vectors of a flat index read from the file with ``pread`` (a
  flat index stores its float32 rows as the file's last ``n * d * 4`` bytes), so a scan
  holds one block and no page of the file stays mapped.

Where one id names several rows, the last row is the one found (as a dict built in row
order would), and every row still scans.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import xxhash

from .id_map import IdMap, id_keys
from .json_list import iter_entries, read_entry

ROWS = 16384


class ListedIds:
    def __init__(self, ids: list[str], texts: list[str | None] | None) -> None:
        self.ids, self.texts = ids, texts
        self.count = len(ids)
        self.has_text = texts is not None
        self._pos = {v: i for i, v in enumerate(ids)}

    def rows_of(self, ids: Sequence[str]) -> np.ndarray:
        return np.asarray([self._pos.get(i, -1) for i in ids], dtype=np.int64)

    def blocks(self, size: int) -> Iterator[tuple[list[str], list[str | None] | None]]:
        for start in range(0, self.count, size):
            stop = min(start + size, self.count)
            yield self.ids[start:stop], (self.texts[start:stop] if self.texts else None)

    def at(self, rows: np.ndarray) -> tuple[list[str], list[str | None] | None]:
        ids = [self.ids[int(r)] for r in rows]
        return ids, ([self.texts[int(r)] for r in rows] if self.texts is not None else None)


class StreamedIds:
    def __init__(self, path: Path) -> None:
        self.path = path
        h = xxhash.xxh3_128()
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 22), b""):
                h.update(block)
        self.fingerprint = h.hexdigest()
        found = IdMap.load(self.fingerprint, "faiss-ids.json")
        if found is None:
            built = self._survey()
            built.save(self.fingerprint, "faiss-ids.json")
            found = IdMap.load(self.fingerprint, "faiss-ids.json") or built
            found.from_cache = False
            del built
        self._map = found
        self.from_cache = found.from_cache
        self.count = int(found.keys.shape[0])
        self.has_text = bool(found.meta["objects"])
        self._offsets = found.extra["offsets"]

    def _survey(self) -> IdMap:
        keys: list[np.ndarray] = []
        offsets: list[np.ndarray] = []
        ids: list[str] = []
        offs: list[int] = []
        objects = False
        for off, cid, _, kind in iter_entries(self.path):
            objects = kind
            ids.append(cid)
            offs.append(off)
            if len(ids) >= ROWS:
                keys.append(id_keys(ids))
                offsets.append(np.asarray(offs, dtype=np.int64))
                ids, offs = [], []
        keys.append(id_keys(ids))
        offsets.append(np.asarray(offs, dtype=np.int64))
        n = sum(len(k) for k in keys)
        rows = [np.arange(n, dtype=np.int64)]
        built = IdMap.build(keys, rows, {"objects": objects})
        built.extra = {"offsets": np.concatenate(offsets)}
        return built

    def rows_of(self, ids: Sequence[str]) -> np.ndarray:
        out = np.full(len(ids), -1, dtype=np.int64)
        which, rows = self._map.candidates(ids)
        if not rows.size:
            return out
        names, _ = self.at(rows)
        for w, r, name in zip(which.tolist(), rows.tolist(), names, strict=True):
            if name == ids[w] and r > out[w]:
                out[w] = r
        return out

    def blocks(self, size: int) -> Iterator[tuple[list[str], list[str | None] | None]]:
        ids: list[str] = []
        texts: list[str | None] = []
        for _, cid, text, _ in iter_entries(self.path):
            ids.append(cid)
            texts.append(text)
            if len(ids) >= size:
                yield ids, (texts if self.has_text else None)
                ids, texts = [], []
        if ids:
            yield ids, (texts if self.has_text else None)

    def at(self, rows: np.ndarray) -> tuple[list[str], list[str | None] | None]:
        rows = np.asarray(rows, dtype=np.int64)
        order = np.argsort(rows, kind="stable")
        ids: list[str] = [""] * len(rows)
        texts: list[str | None] = [None] * len(rows)
        with self.path.open("rb") as f:
            for j in order.tolist():
                off = int(self._offsets[int(rows[j])])
                ids[j], texts[j] = read_entry(f, off, self.has_text, self.path)
        return ids, (texts if self.has_text else None)


class FlatRows:
    """float32 rows of a flat index, read from its file by position."""

    def __init__(self, path: Path, rows: int, d: int) -> None:
        self.rows, self.d = rows, d
        self.offset = path.stat().st_size - rows * d * 4
        self._fd = os.open(path, os.O_RDONLY)

    def read(self, start: int, stop: int) -> np.ndarray:
        size = (stop - start) * self.d * 4
        buf = os.pread(self._fd, size, self.offset + start * self.d * 4)
        if len(buf) != size:
            raise OSError("short read of a faiss index")
        return np.frombuffer(buf, dtype=np.float32).reshape(stop - start, self.d)

    def take(self, rows: np.ndarray) -> np.ndarray:
        """Rows at ``rows`` (any order, -1: a zero row), one read per run of neighbours."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.zeros((len(rows), self.d), dtype=np.float32)
        want = np.flatnonzero(rows >= 0)
        if not want.size:
            return out
        uniq, inverse = np.unique(rows[want], return_inverse=True)
        got = np.empty((uniq.size, self.d), dtype=np.float32)
        cuts = np.flatnonzero(np.diff(uniq) != 1) + 1
        for a, b in zip([0, *cuts.tolist()], [*cuts.tolist(), uniq.size], strict=True):
            got[a:b] = self.read(int(uniq[a]), int(uniq[b - 1]) + 1)
        out[want] = got[inverse.reshape(-1)]
        return out

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
