"""diff-index's vectors after the join: the new side's blocks in order (from its spill, or
read again from a ``parquet:`` store), the moved new vectors kept for the holder search, and
the LSH keys of the old vectors, computed from the old spill only when a vector moved."""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..arrow_spill import ROWS
from ..hash_join import LSH_TABLES, Flag, Side, VectorFile, lsh_keys, lsh_planes, ordered_map


def spilled_blocks(side: Side) -> Generator[tuple[int, np.ndarray, np.ndarray], None, None]:
    """(first seq, unit rows, flags) of a spilled side, in seq order, a block at a time."""
    import pyarrow.parquet as pq

    assert side.vectors is not None
    vf = VectorFile(side.vectors, side.dimension)
    try:
        seq = 0
        keys = pq.ParquetFile(side.keys)
        for rb in keys.iter_batches(ROWS, columns=["flag"], use_threads=False):
            n = rb.num_rows
            flag = rb.column(0).to_numpy(zero_copy_only=False).astype(np.uint8)
            yield seq, vf.gather(np.arange(seq, seq + n, dtype=np.int64)), flag
            seq += n
    finally:
        vf.close()


class MovedVectors:
    """The unit vectors of the moved new rows, written in seq order to ``moved.f32`` as
    they are found, read back by new seq (:meth:`gather`) for the holder search, and their
    LSH keys, computed on the way (:meth:`key_table`)."""

    def __init__(self, folder: Path, dimension: int) -> None:
        self.path = folder / "moved.f32"
        self.dimension = dimension
        self._out: Any = self.path.open("wb")
        self._seqs: list[np.ndarray] = []
        self._keys: list[np.ndarray] = []
        self._planes: np.ndarray | None = None
        self.seqs = np.zeros(0, dtype=np.int64)
        self._file: VectorFile | None = None

    def add(self, seqs: np.ndarray, unit: np.ndarray) -> None:
        if len(seqs):
            if self._planes is None:
                self._planes = lsh_planes(self.dimension)
            self._seqs.append(np.asarray(seqs, dtype=np.int64))
            self._keys.append(lsh_keys(unit, self._planes))
            self._out.write(np.ascontiguousarray(unit, dtype=np.float32).data)

    def done(self) -> np.ndarray:
        """Stop writing; the moved seqs, ascending."""
        self._out.close()
        if self._seqs:
            self.seqs = np.concatenate(self._seqs)
        self._seqs = []
        self._file = VectorFile(self.path, self.dimension)
        return self.seqs

    def key_table(self, con: Any) -> None:
        """Create ``mk`` (seq, h1, h2, k0..k3): the moved rows' text keys (from ``n``) and
        LSH keys."""
        import pyarrow as pa

        keys = np.concatenate(self._keys) if self._keys else np.zeros((0, LSH_TABLES), np.int32)
        self._keys = []
        cols: dict[str, Any] = {"seq": pa.array(self.seqs)}
        cols.update({f"k{t}": pa.array(keys[:, t]) for t in range(LSH_TABLES)})
        con.register("moved_keys", pa.table(cols))
        ks = ", ".join(f"m.k{t}" for t in range(LSH_TABLES))
        con.execute(
            f"CREATE TEMP TABLE mk AS SELECT m.seq, n.h1, n.h2, {ks} FROM moved_keys m "
            "JOIN n ON n.seq = m.seq ORDER BY m.seq"
        )
        con.unregister("moved_keys")

    def gather(self, seqs: np.ndarray) -> np.ndarray:
        """The moved unit vectors of the new rows at ``seqs`` (each one a moved row)."""
        assert self._file is not None
        at = np.searchsorted(self.seqs, np.asarray(seqs, dtype=np.int64))
        return self._file.gather(at)

    def close(self) -> None:
        if not self._out.closed:
            self._out.close()
        if self._file is not None:
            self._file.close()
        self.path.unlink(missing_ok=True)


def start_old_lsh(con: Any, side: Side) -> Any:
    """:func:`old_lsh_table` in a thread on a cursor of ``con`` (a Future): it runs beside
    the comparison, which leaves one core mostly idle while the new file decodes."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(1)
    cur = con.cursor()

    def run() -> None:
        try:
            old_lsh_table(cur, side)
        finally:
            cur.close()

    job = pool.submit(run)
    pool.shutdown(wait=False)
    return job


def old_lsh_table(con: Any, side: Side) -> None:
    """Create the table ``ol`` (seq, h1, h2, k0..k3): the LSH keys of the old rows with a
    usable vector, from the old spill, a block at a time on two threads (the matrix
    products release the GIL)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    assert side.vectors is not None
    planes = lsh_planes(side.dimension)
    fd = os.open(side.vectors, os.O_RDONLY)
    row = 4 * side.dimension

    def blocks() -> Iterator[tuple[int, Any]]:
        seq = 0
        keys = pq.ParquetFile(side.keys)
        for rb in keys.iter_batches(ROWS, columns=["seq", "h1", "h2", "flag"], use_threads=False):
            yield seq, rb
            seq += rb.num_rows

    def keyed(item: tuple[int, Any]) -> Any:
        seq, rb = item
        n = rb.num_rows
        buf = np.empty((n, side.dimension), dtype=np.float32)
        if n and row:
            got = os.preadv(fd, [buf.data.cast("B")], seq * row)
            if got != n * row:
                raise OSError(f"short read in the spill file at row {seq}")
        k = lsh_keys(buf, planes)
        ok = rb.column("flag").to_numpy(zero_copy_only=False) == Flag.OK
        cols = {name: rb.column(name) for name in ("seq", "h1", "h2")}
        cols.update({f"k{t}": pa.array(k[:, t]) for t in range(LSH_TABLES)})
        return pa.record_batch(cols).filter(pa.array(ok))

    schema = pa.schema(
        [("seq", pa.int64()), ("h1", pa.uint64()), ("h2", pa.uint64())]
        + [(f"k{t}", pa.int32()) for t in range(LSH_TABLES)]
    )
    try:
        reader = pa.RecordBatchReader.from_batches(schema, ordered_map(keyed, blocks()))
        con.register("old_lsh", reader)
        con.execute("CREATE TABLE ol AS SELECT * FROM old_lsh")
        con.unregister("old_lsh")
    finally:
        os.close(fd)
