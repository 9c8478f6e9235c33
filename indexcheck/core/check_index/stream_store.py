"""Scratch state of the streamed check: ids by position, vectors on disk, the rows file.

What a streamed check keeps per chunk lives here in compact form (Arrow strings, numpy
keys); vectors live in scratch files read back by position; rows are written to Parquet
block by block.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import xxhash

from ...errors import DataFileError
from .findings import ChunkCheck

#: the status byte of an ok row in the streamed check's status array
OK_CODE = 1


def id_keys(ids: Sequence[str]) -> np.ndarray:
    return np.fromiter(
        (xxhash.xxh3_64_intdigest(i.encode("utf-8")) for i in ids), np.uint64, len(ids)
    )


class IdIndex:
    """Chunk ids by position, and id -> position through sorted 64-bit keys."""

    def __init__(self, parts: list[pa.Array], keys: list[np.ndarray], source: str) -> None:
        self.ids = pa.concat_arrays(parts) if parts else pa.array([], pa.string())
        k = np.concatenate(keys) if keys else np.zeros(0, np.uint64)
        self.order = np.argsort(k, kind="stable")
        self.keys = k[self.order]
        same = np.flatnonzero(self.keys[1:] == self.keys[:-1])
        for j in same:
            a, b = int(self.order[j]), int(self.order[j + 1])
            if self.id_at(a) == self.id_at(b):
                raise DataFileError(
                    f"chunk id '{self.id_at(a)}' appears twice in {source or 'the chunks'} "
                    f"(rows {a + 1} and {b + 1}); ids must be unique"
                )

    def __len__(self) -> int:
        return len(self.ids)

    def id_at(self, p: int) -> str:
        return str(self.ids[p].as_py())

    def positions(self, ids: Sequence[str]) -> np.ndarray:
        """int64 (len(ids),) corpus positions, -1 for ids that are not chunks."""
        k = id_keys(ids)
        j = np.minimum(np.searchsorted(self.keys, k), max(len(self.keys) - 1, 0))
        out = np.full(len(ids), -1, np.int64)
        if not len(self.keys):
            return out
        hit = self.keys[j] == k
        cand = self.order[j]
        names = self.ids.take(pa.array(cand[hit])).to_pylist()
        rows = np.flatnonzero(hit)
        for r, name in zip(rows.tolist(), names, strict=True):
            if name == ids[r]:
                out[r] = cand[r]
            else:  # a 64-bit key shared by two ids: walk its entries
                q = int(j[r]) + 1
                while q < len(self.keys) and self.keys[q] == k[r]:
                    if self.id_at(int(self.order[q])) == ids[r]:
                        out[r] = self.order[q]
                        break
                    q += 1
        return out


class ScratchRows:
    """float32 rows of width d in a scratch file, written in order and read by position."""

    def __init__(self, d: int, folder: str) -> None:
        self.d = d
        fd, self.path = tempfile.mkstemp(suffix=".f32", dir=folder)
        self.fd = fd
        self.n = 0

    def append(self, x: np.ndarray) -> None:
        os.pwrite(self.fd, np.ascontiguousarray(x, np.float32).tobytes(), self.n * self.d * 4)
        self.n += x.shape[0]

    def read(self, start: int, stop: int) -> np.ndarray:
        size = (stop - start) * self.d * 4
        buf = os.pread(self.fd, size, start * self.d * 4)
        return np.frombuffer(buf, np.float32).reshape(stop - start, self.d)

    def take(self, positions: np.ndarray) -> np.ndarray:
        """Rows at ``positions`` (any order), reading each run of consecutive ones at once."""
        out = np.empty((len(positions), self.d), np.float32)
        if not len(positions):
            return out
        order = np.argsort(positions, kind="stable")
        p = positions[order]
        cuts = np.flatnonzero(np.diff(p) != 1) + 1
        for run in np.split(np.arange(len(p)), cuts):
            lo, hi = int(p[run[0]]), int(p[run[-1]]) + 1
            if hi - lo == len(run):
                out[order[run]] = self.read(lo, hi)
            else:  # repeated positions: read one by one
                for r in run:
                    out[order[r]] = self.read(int(p[r]), int(p[r]) + 1)[0]
        return out

    def close(self) -> None:
        os.close(self.fd)
        os.unlink(self.path)


def duplicates(th: np.ndarray) -> dict[int, int]:
    """Position of each chunk repeating an earlier chunk's text -> that earlier position."""
    if len(th) < 2:
        return {}
    order = np.lexsort((th[:, 1], th[:, 0]))  # stable: equal texts in corpus order
    s = th[order]
    new = np.ones(len(s), bool)
    new[1:] = np.any(s[1:] != s[:-1], axis=1)
    first = order[np.maximum.accumulate(np.where(new, np.arange(len(s)), 0))]
    rep = np.flatnonzero(~new)
    pairs = sorted(zip(order[rep].tolist(), first[rep].tolist(), strict=True))
    return dict(pairs)  # in corpus order, as Corpus.duplicate_of


class SparseCorpus:
    """What the shared finding builders read from a Corpus, without holding every text.

    ``ids[p]`` and ``texts[p]`` answer for the positions a finding quotes; iterating
    ``ids`` yields nothing, since orphans were already found against every chunk id.
    """

    def __init__(self, ids: IdIndex, dup_of: dict[int, int], texts: dict[int, str]) -> None:
        self._ids, self._dup = ids, dup_of
        self.texts = texts
        self.ids = _IdView(ids)
        self.position = _PosView(ids)

    def __len__(self) -> int:
        return len(self._ids)

    def duplicate_of(self) -> dict[int, int]:
        return self._dup


class _IdView:
    def __init__(self, ids: IdIndex) -> None:
        self._ids = ids

    def __getitem__(self, p: int) -> str:
        return self._ids.id_at(p)

    def __iter__(self) -> Iterator[str]:
        return iter(())


class _PosView:
    def __init__(self, ids: IdIndex) -> None:
        self._ids = ids

    def __getitem__(self, cid: str) -> int:
        return int(self._ids.positions([cid])[0])


def write_rows(
    path: Any,
    ids: IdIndex,
    status: np.ndarray,
    cosine: np.ndarray,
    bad: dict[int, ChunkCheck],
    block: int,
) -> None:
    """Every checked row, in corpus order, block by block, in the format of the suffix of
    ``path`` (.parquet, .csv, .jsonl), written atomically (rowfiles.write_table_file)."""
    from ...rowfiles import write_table_file

    schema = pa.schema(
        [
            ("id", pa.string()),
            ("position", pa.int64()),
            ("cosine", pa.float32()),
            ("status", pa.string()),
            ("holds_vector_of", pa.string()),
            ("offset", pa.int64()),
            ("stored_dimension", pa.int64()),
        ]
    )

    def blocks() -> Iterator[pa.Table]:
        for start in range(0, len(ids), block * 4):
            stop = min(len(ids), start + block * 4)
            sts = ["ok"] * (stop - start)
            holds: list[str | None] = [None] * (stop - start)
            offs: list[int | None] = [None] * (stop - start)
            sdim: list[int | None] = [None] * (stop - start)
            for q in np.flatnonzero(status[start:stop] != OK_CODE):
                c = bad[start + int(q)]
                sts[q], holds[q], offs[q], sdim[q] = (
                    c.status, c.holds_vector_of, c.offset, c.stored_dimension
                )  # fmt: skip
            cols = [
                ids.ids.slice(start, stop - start),
                pa.array(np.arange(start, stop, dtype=np.int64)),
                pa.array(cosine[start:stop], mask=np.isnan(cosine[start:stop])),
                pa.array(sts, pa.string()),
                pa.array(holds, pa.string()),
                pa.array(offs, pa.int64()),
                pa.array(sdim, pa.int64()),
            ]
            yield pa.Table.from_arrays(cols, schema=schema)

    write_table_file(Path(path), schema, blocks())
