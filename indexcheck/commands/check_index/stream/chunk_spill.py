"""check-index --all: what the streamed check knows of each chunk, kept on disk.

:meth:`ChunkSpill.add` writes, per chunk: its id (UTF-8 bytes to ``ids.bin``, the int64 end
offset to ``ids.off``, read back with ``pread``); two 64-bit keys of the id (xxh3-64 and
xxh3-64 seeded 1) with its position, partitioned by the first key's top 8 bits into 256
bucket files; its 128-bit text hash (xxh3-128) with its position, partitioned likewise.

:meth:`ChunkSpill.finish` sorts the id keys bucket by bucket into one file and refuses an
id that appears twice; every ``FENCE``-th key stays in memory (0.03 bytes a chunk). An id is
found by the fast path (the next chunks in corpus order: one block of ids compared) or
through its fence's page of sorted keys; repeated texts (:meth:`ChunkSpill.duplicates`) one
bucket at a time. Nothing of length n stays in memory (buckets buffered up to ``FLUSH``
bytes, files read by ``pread`` or short-lived maps). On disk a chunk costs 16 + its id's
bytes, 24 for the sorted keys and 24 for the text hashes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa
import xxhash

from ....errors import DataFileError
from ....inputs.chunk_stream import text_digests

BITS = 8
BUCKETS = 1 << BITS
#: sorted keys per fence (a lookup gathers FENCE + 1 keys)
FENCE = 256
#: bytes of bucket records buffered before they are appended to their files
FLUSH = 4 << 20
_U64 = np.uint64


def id_key_pairs(ids: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(xxh3-64, xxh3-64 seeded 1) uint64 (m,) of each id's UTF-8 bytes."""
    enc = [i.encode("utf-8") for i in ids]
    k1 = np.fromiter((xxhash.xxh3_64_intdigest(b) for b in enc), _U64, len(enc))
    k2 = np.fromiter((xxhash.xxh3_64_intdigest(b, seed=1) for b in enc), _U64, len(enc))
    return k1, k2


class _Buckets:
    """uint64 records of ``width`` columns partitioned by the top bits of column 0, one
    file per bucket, each in the order the records came."""

    def __init__(self, folder: str, name: str, width: int) -> None:
        self.folder, self.name, self.width = folder, name, width
        self.parts: list[list[np.ndarray]] = [[] for _ in range(BUCKETS)]
        self.buffered = 0

    def path(self, j: int) -> str:
        return os.path.join(self.folder, f"{self.name}{j:03d}.u64")

    def add(self, rec: np.ndarray) -> None:
        b = (rec[:, 0] >> _U64(64 - BITS)).astype(np.intp)
        order = np.argsort(b, kind="stable")
        rec, b = rec[order], b[order]
        cuts = np.searchsorted(b, np.arange(BUCKETS + 1))
        for j in np.flatnonzero(np.diff(cuts)).tolist():
            self.parts[j].append(rec[cuts[j] : cuts[j + 1]])
        self.buffered += rec.nbytes
        if self.buffered >= FLUSH:
            self.flush()

    def flush(self) -> None:
        for j, part in enumerate(self.parts):
            if part:
                with open(self.path(j), "ab") as f:
                    f.write(np.concatenate(part).tobytes())
                part.clear()
        self.buffered = 0

    def read(self, drop: bool = False) -> Iterator[np.ndarray]:
        """Each bucket's records, (m, width) uint64, bucket by bucket; ``drop`` deletes
        each bucket's file once read."""
        self.flush()
        for j in range(BUCKETS):
            if os.path.exists(self.path(j)):
                rec = np.fromfile(self.path(j), _U64).reshape(-1, self.width)
                if drop:
                    os.unlink(self.path(j))
                yield rec


def repeated_rows(folder: str, keys: Iterable[np.ndarray]) -> np.ndarray:
    """The rows (int64, ascending) whose uint64 key another row has too, from ``keys`` (the
    keys of consecutive rows, a block at a time), partitioned on disk as the id keys are:
    one bucket, 1/256 of the rows, in memory at a time."""
    buckets = _Buckets(folder, "repeat", 2)
    row = 0
    for k in keys:
        at = np.arange(row, row + len(k), dtype=_U64)
        buckets.add(np.stack([np.asarray(k, _U64), at], axis=1))
        row += len(k)
    found: list[np.ndarray] = []
    for rec in buckets.read(drop=True):
        rec = rec[np.argsort(rec[:, 0], kind="stable")]
        same = np.flatnonzero(rec[1:, 0] == rec[:-1, 0])
        if same.size:
            found.append(rec[np.concatenate([same, same + 1]), 1])
    if not found:
        return np.zeros(0, np.int64)
    return np.unique(np.concatenate(found)).astype(np.int64)


class ChunkSpill:
    """Chunk ids by position, id -> position, and the repeated texts, on disk in ``folder``."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.n = 0
        self._bytes = 0
        self._data = os.open(self._file("ids.bin"), os.O_RDWR | os.O_CREAT, 0o600)
        self._ends = os.open(self._file("ids.off"), os.O_RDWR | os.O_CREAT, 0o600)
        self._keys = _Buckets(folder, "key", 3)
        self._texts = _Buckets(folder, "text", 3)
        self._fences = np.zeros(0, _U64)

    def _file(self, name: str) -> str:
        return os.path.join(self.folder, name)

    def __len__(self) -> int:
        return self.n

    # --- pass 1 ---------------------------------------------------------------------------

    def add(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        """One block of chunks, in corpus order."""
        self.add_hashed(ids, text_digests(list(texts)))

    def add_hashed(self, ids: Sequence[str], digests: np.ndarray) -> None:
        """One block of chunks, in corpus order, by their texts' digests (uint64 (m, 2),
        :func:`~indexcheck.inputs.chunk_stream.text_digests`, read on a Ray worker)."""
        m = len(ids)
        enc = [i.encode("utf-8") for i in ids]
        ends = np.cumsum(np.fromiter(map(len, enc), np.int64, m)) + self._bytes
        os.pwrite(self._data, b"".join(enc), self._bytes)
        os.pwrite(self._ends, ends.tobytes(), self.n * 8)
        pos = np.arange(self.n, self.n + m, dtype=_U64)
        k1, k2 = id_key_pairs(ids)
        self._keys.add(np.stack([k1, k2, pos], axis=1))
        th = np.asarray(digests, _U64).reshape(-1, 2)
        self._texts.add(np.column_stack([th, pos]))
        self.n += m
        self._bytes = int(ends[-1]) if m else self._bytes

    def finish(self, source: str) -> None:
        """Sort the id keys into ``keys.k1`` (first keys) and ``keys.kp`` (second key,
        position); raise DataFileError for an id that appears twice."""
        fences: list[np.ndarray] = []
        start = 0
        with open(self._file("keys.k1"), "wb") as f1, open(self._file("keys.kp"), "wb") as fp:
            for rec in self._keys.read(drop=True):
                rec = rec[np.lexsort((rec[:, 1], rec[:, 0]))]  # stable: equal ids in order
                for j in np.flatnonzero(rec[1:, 0] == rec[:-1, 0]).tolist():
                    a, b = int(rec[j, 2]), int(rec[j + 1, 2])
                    if rec[j, 1] == rec[j + 1, 1] and self.id_at(a) == self.id_at(b):
                        raise DataFileError(
                            f"chunk id '{self.id_at(a)}' appears twice in "
                            f"{source or 'the chunks'} (rows {a + 1} and {b + 1}); ids must "
                            "be unique"
                        )
                f1.write(rec[:, 0].tobytes())
                fp.write(np.ascontiguousarray(rec[:, 1:]).tobytes())
                fences.append(rec[(-start) % FENCE :: FENCE, 0].copy())
                start += len(rec)
        self._fences = np.concatenate(fences) if fences else np.zeros(0, _U64)

    # --- reading back ---------------------------------------------------------------------

    def ids_block(self, start: int, stop: int) -> pa.Array:
        """The ids at positions ``start:stop``, an Arrow string array."""
        m = stop - start
        if m <= 0:
            return pa.array([], pa.string())
        lo = 8 * (start - 1) if start else 0
        raw = np.frombuffer(os.pread(self._ends, 8 * m + (8 if start else 0), lo), np.int64)
        ends = raw[1:] if start else raw
        first = int(raw[0]) if start else 0
        data = os.pread(self._data, int(ends[-1]) - first, first)
        offsets = np.concatenate([[0], ends - first]).astype(np.int32)
        return pa.StringArray.from_buffers(m, pa.py_buffer(offsets), pa.py_buffer(data))

    def id_at(self, p: int) -> str:
        return str(self.ids_block(p, p + 1)[0].as_py())

    def positions(self, ids: Sequence[str], expect: int | None = None) -> np.ndarray:
        """int64 (len(ids),) corpus positions, -1 for ids that are not chunks. ``expect``:
        the position the first id likely has (a store in corpus order), checked first."""
        m = len(ids)
        out = np.full(m, -1, np.int64)
        if not m or not self.n:
            return out
        if expect is not None and 0 <= expect and expect + m <= self.n:
            if self.ids_block(expect, expect + m).equals(pa.array(list(ids), pa.string())):
                return np.arange(expect, expect + m, dtype=np.int64)
        k1, k2 = id_key_pairs(ids)
        k1s = np.memmap(self._file("keys.k1"), _U64, "r")
        kp = np.memmap(self._file("keys.kp"), _U64, "r").reshape(-1, 2)
        page = np.maximum(np.searchsorted(self._fences, k1, "left") - 1, 0).astype(np.int64)
        window = np.minimum(page[:, None] * FENCE + np.arange(FENCE + 1), self.n - 1)
        g = page * FENCE + (k1s[window] < k1[:, None]).sum(axis=1)
        g = np.minimum(g, self.n - 1)
        hit = np.asarray(k1s[g]) == k1
        rows = np.asarray(kp[g])
        ok = hit & (rows[:, 0] == k2)
        out[ok] = rows[ok, 1].astype(np.int64)
        for r in np.flatnonzero(hit & ~ok).tolist():  # a first key shared by two ids
            q = int(g[r]) + 1
            while q < self.n and k1s[q] == k1[r]:
                if kp[q, 0] == k2[r]:
                    out[r] = int(kp[q, 1])
                    break
                q += 1
        del k1s, kp
        return out

    def duplicates(self) -> dict[int, int]:
        """Position of each chunk repeating an earlier chunk's text -> that earlier
        position, in corpus order (as Corpus.duplicate_of). Reads one text-hash bucket at a
        time, but the answer holds one entry per repeat, and equal texts share a bucket: where
        most chunks repeat one text, both grow with the index (as the in-memory check's)."""
        pairs: list[tuple[int, int]] = []
        for rec in self._texts.read():
            if len(rec) < 2:
                continue
            order = np.lexsort((rec[:, 1], rec[:, 0]))  # stable: equal texts in corpus order
            s = rec[order]
            new = np.ones(len(s), bool)
            new[1:] = np.any(s[1:, :2] != s[:-1, :2], axis=1)
            first = s[np.maximum.accumulate(np.where(new, np.arange(len(s)), 0)), 2]
            rep = np.flatnonzero(~new)
            pairs.extend(zip(s[rep, 2].tolist(), first[rep].tolist(), strict=True))
        return dict(sorted(pairs))

    def with_text_hash(self, hashes: Iterable[str]) -> list[int]:
        """Positions, sorted, of the chunks whose xxh3-128 text hash (hex) is in ``hashes``."""
        raw = b"".join(bytes.fromhex(h) for h in hashes)
        if not raw:
            return []
        row = np.dtype((np.void, 16))
        wanted = np.frombuffer(raw, dtype=row)
        hits: list[int] = []
        for rec in self._texts.read():
            h = np.ascontiguousarray(rec[:, :2]).view(row).ravel()
            hits.extend(rec[np.isin(h, wanted), 2].tolist())
        return sorted(hits)

    def close(self) -> None:
        os.close(self._data)
        os.close(self._ends)
