"""Scratch state of the streamed check: vectors on disk, the figures, the rows file.

Vectors live in scratch files read back by position (the ids, their keys and the text
hashes in :mod:`.chunk_spill`); rows are written to Parquet block by block.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ..findings import ChunkCheck
from .chunk_spill import ChunkSpill, repeated_rows

#: rows of the id column a batch, streamed into the repeated-id check
ID_ROWS = 65536

#: the status byte of an ok row in the streamed check's status array
OK_CODE = 1


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


def cosine_figures(cosine: np.ndarray, threshold: float) -> tuple[float | None, float | None, int]:
    """(min, median, count below ``threshold``) of the non-NaN values of float32
    ``cosine``: the figures ``check_result`` takes from them as float64 (the median of an
    even count is the mean of the two middle values, in float64), from one float32 copy."""
    vals = cosine[~np.isnan(cosine)]
    m = int(vals.size)
    if not m:
        return None, None, 0
    step = 1 << 20
    below = sum(
        int(np.count_nonzero(vals[i : i + step].astype(np.float64) < threshold))
        for i in range(0, m, step)
    )
    low = float(vals.min())
    k = m // 2
    vals.partition([k - 1, k] if m % 2 == 0 else [k])
    median = float(vals[k]) if m % 2 else (float(vals[k - 1]) + float(vals[k])) / 2
    return low, median, below


def refuse_repeated_ids(store: Any, folder: str) -> None:
    """Refuse (exit 2), as its id map would have, a store opened without lookups (its ids
    not checked when it opened, a ``parquet:`` store) that holds an id twice, before any
    chunk is embedded: the 64-bit keys of its id column go to bucket files in ``folder``
    (16 bytes a row on disk, one bucket in memory at a time), and the ids of the rows whose
    keys repeat, if any, are read again and compared."""
    if getattr(store, "ids_checked", True) or not getattr(store, "arrow_ready", False):
        return
    from ....stores.files.id_map import column_id_keys, duplicate_ids

    batches = store.arrow_batches(ID_ROWS, False, ("id",))
    rows = repeated_rows(folder, (column_id_keys(rb.column(0)) for rb in batches))
    if not rows.size:
        return
    names: list[str] = []
    start = 0
    for rb in store.arrow_batches(ID_ROWS, False, ("id",)):  # the rows keyed alike (few)
        lo, hi = np.searchsorted(rows, [start, start + rb.num_rows])
        if hi > lo:
            names += [str(x) for x in rb.column(0).take(pa.array(rows[lo:hi] - start)).to_pylist()]
        start += rb.num_rows
    if len(set(names)) < len(names):
        raise duplicate_ids(getattr(store, "path", store.spec))


class SparseCorpus:
    """What the shared finding builders read from a Corpus, without holding every text.

    ``ids[p]`` and ``texts[p]`` answer for the positions a finding quotes; iterating
    ``ids`` yields nothing, since orphans were already found against every chunk id.
    """

    def __init__(self, ids: ChunkSpill, dup_of: dict[int, int], texts: dict[int, str]) -> None:
        self._ids, self._dup = ids, dup_of
        self.texts = texts
        self.ids = _IdView(ids)
        self.position = _PosView(ids)

    def __len__(self) -> int:
        return len(self._ids)

    def duplicate_of(self) -> dict[int, int]:
        return self._dup


class _IdView:
    def __init__(self, ids: ChunkSpill) -> None:
        self._ids = ids

    def __getitem__(self, p: int) -> str:
        return self._ids.id_at(p)

    def __iter__(self) -> Iterator[str]:
        return iter(())


class _PosView:
    def __init__(self, ids: ChunkSpill) -> None:
        self._ids = ids

    def __getitem__(self, cid: str) -> int:
        return int(self._ids.positions([cid])[0])


def write_rows(
    path: Any,
    ids: ChunkSpill,
    status: np.ndarray,
    cosine: np.ndarray,
    bad: dict[int, ChunkCheck],
    block: int,
) -> None:
    """Every checked row, in corpus order, block by block, in the format of the suffix of
    ``path`` (.parquet, .csv, .jsonl), written atomically (rowfiles.write_table_file)."""
    from ....inputs.rowfiles import write_table_file

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
                ids.ids_block(start, stop),
                pa.array(np.arange(start, stop, dtype=np.int64)),
                pa.array(cosine[start:stop], mask=np.isnan(cosine[start:stop])),
                pa.array(sts, pa.string()),
                pa.array(holds, pa.string()),
                pa.array(offs, pa.int64()),
                pa.array(sdim, pa.int64()),
            ]
            yield pa.Table.from_arrays(cols, schema=schema)

    write_table_file(Path(path), schema, blocks())
