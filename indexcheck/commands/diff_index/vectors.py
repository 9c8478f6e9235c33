"""diff-index's vectors after the join: the new side's blocks in order (from its spill, or
read again from a ``parquet:`` store), the moved new vectors kept for the holder search, and
that search, on LSH keys of the old vectors computed from the old spill only when a vector
moved."""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from .arrow_spill import ROWS
from .hash_join import LSH_TABLES, Flag, Side, VectorFile, lsh_keys, lsh_planes, ordered_map


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
        """Stop writing; the moved seqs, in the order they were added."""
        self._out.close()
        if self._seqs:
            self.seqs = np.concatenate(self._seqs)
        self._seqs = []
        self._file = VectorFile(self.path, self.dimension)
        return self.seqs

    def key_arrays(self, con: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The moved rows' LSH keys (m, 4) and text keys ``h1``, ``h2`` (from ``n``), in
        the order they were added."""
        import pyarrow as pa

        keys = np.concatenate(self._keys) if self._keys else np.zeros((0, LSH_TABLES), np.int32)
        self._keys = []
        con.register("moved_seq", pa.table({"seq": pa.array(self.seqs)}))
        got = con.sql(
            "SELECT n.seq, n.h1, n.h2 FROM n JOIN moved_seq m ON n.seq = m.seq ORDER BY n.seq"
        ).to_arrow_table()
        con.unregister("moved_seq")
        at = np.searchsorted(got.column("seq").to_numpy(), self.seqs)  # rows in add order
        h1, h2 = (got.column(c).to_numpy()[at] for c in ("h1", "h2"))
        return keys, h1, h2

    def gather_at(self, positions: np.ndarray) -> np.ndarray:
        """The moved unit vectors at ``positions`` in the moved rows (any order)."""
        assert self._file is not None
        return self._file.gather(np.asarray(positions, dtype=np.int64))

    def close(self) -> None:
        if not self._out.closed:
            self._out.close()
        if self._file is not None:
            self._file.close()
        self.path.unlink(missing_ok=True)


#: candidate pairs scored at once (a key shared by many rows, as when every moved vector is
#: the same, must not blow up memory)
PAIRS = 65536


def _best(pos: np.ndarray, oseq: np.ndarray, cos: np.ndarray) -> tuple[np.ndarray, ...]:
    """One (pos, oseq, cos) a moved position: its highest cosine, the first on a tie."""
    if not pos.size:
        return pos, oseq, cos
    order = np.lexsort((np.arange(pos.size), -cos, pos))
    pos, oseq, cos = pos[order], oseq[order], cos[order]
    first = np.concatenate([[True], pos[1:] != pos[:-1]])
    return pos[first], oseq[first], cos[first]


def _candidates(
    count: np.ndarray, lo: np.ndarray, order: np.ndarray
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(old row, moved position) of each old row's ``count`` matches, which sit at
    ``order[lo : lo + count]``, in slices of at most PAIRS pairs."""
    ends = np.cumsum(count)
    total = int(ends[-1]) if ends.size else 0
    for a in range(0, total, PAIRS):
        at = np.arange(a, min(total, a + PAIRS), dtype=np.int64)
        old = np.searchsorted(ends, at, side="right")
        yield old, order[lo[old] + at - (ends[old] - count[old])]


#: a piece of the old side for the holder search, loaded by the thread that scores it:
#: called, it gives its blocks as (first seq, unit rows, usable, text keys h1, h2)
OldPart = Callable[[], Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]]


def spilled_old(side: Side, fd: int) -> Iterator[OldPart]:
    """The old spill's blocks for :func:`holders_in`: keys from its keys file, unit rows
    read from its vectors file (open at ``fd``) by the thread that scores them."""
    import pyarrow.parquet as pq

    d = side.dimension
    seq = 0
    keys = pq.ParquetFile(side.keys)
    for rb in keys.iter_batches(ROWS, columns=["h1", "h2", "flag"], use_threads=False):
        oh1, oh2, flag = (rb.column(c).to_numpy(zero_copy_only=False) for c in rb.schema.names)

        def part(seq: int = seq, oh1: Any = oh1, oh2: Any = oh2, flag: Any = flag) -> Any:
            n = len(flag)
            vecs = np.empty((n, d), dtype=np.float32)
            if n and d and os.preadv(fd, [vecs.data.cast("B")], seq * 4 * d) != n * 4 * d:
                raise OSError(f"short read in the spill file at row {seq}")
            yield seq, vecs, flag == Flag.OK, oh1, oh2

        yield part
        seq += rb.num_rows


def find_holders(con: Any, side: Side, moved: MovedVectors, min_cosine: float) -> dict[int, int]:
    """:func:`holders_in` the old spill."""
    assert side.vectors is not None
    fd = os.open(side.vectors, os.O_RDONLY)
    try:
        return holders_in(con, side.dimension, spilled_old(side, fd), moved, min_cosine)
    finally:
        os.close(fd)


def holders_in(
    con: Any, dimension: int, parts: Iterator[OldPart], moved: MovedVectors, min_cosine: float
) -> dict[int, int]:
    """New seq -> old seq of the old text whose vector each moved new vector holds.

    The candidates of a moved row are the usable old rows of another text that share one
    of its four LSH keys; the holder is the candidate of highest cosine, if that is at
    least ``min_cosine`` (the first in old order on a tie). The old rows' keys are computed
    a part at a time on two threads (the matrix products release the GIL), each part
    loaded by its thread, and looked up in the moved rows' sorted keys, so no table of
    the old keys is built."""
    mkeys, mh1, mh2 = moved.key_arrays(con)
    order = [np.argsort(mkeys[:, t], kind="stable") for t in range(LSH_TABLES)]
    ranked = [mkeys[order[t], t] for t in range(LSH_TABLES)]
    planes = lsh_planes(dimension)

    def matched(part: OldPart) -> tuple[np.ndarray, ...]:
        """(moved position, old seq, cosine) of the part's best candidates."""
        found = [f for block in part() for f in scored(*block)]
        if not found:
            return (np.zeros(0, np.int64),) * 2 + (np.zeros(0, np.float32),)
        return _best(*(np.concatenate(c) for c in zip(*found, strict=True)))

    def scored(seq: int, vecs: np.ndarray, ok: np.ndarray, oh1: Any, oh2: Any) -> list[Any]:
        """(moved position, old seq, cosine) of a block's candidates at min_cosine."""
        n = len(vecs)
        k = lsh_keys(vecs, planes)
        found: list[tuple[np.ndarray, ...]] = []
        for t in range(LSH_TABLES):
            kt = np.ascontiguousarray(k[:, t])
            lo = np.searchsorted(ranked[t], kt, side="left")
            count = np.zeros(n, dtype=np.int64)
            hit = np.flatnonzero(ok & (lo < len(ranked[t])))
            hit = hit[ranked[t][lo[hit]] == kt[hit]]  # keys some moved row has (few)
            count[hit] = np.searchsorted(ranked[t], kt[hit], side="right") - lo[hit]
            for old, pos in _candidates(count, lo, order[t]):
                other = (oh1[old] != mh1[pos]) | (oh2[old] != mh2[pos])
                old, pos = old[other], pos[other]
                if not old.size:
                    continue
                theirs = vecs[old]
                cos = np.multiply(theirs, moved.gather_at(pos), out=theirs).sum(axis=1)
                keep = cos >= min_cosine
                found.append(_best(pos[keep], old[keep] + seq, cos[keep]))
        return found

    best_cos = np.full(len(moved.seqs), -np.inf, dtype=np.float32)
    best_old = np.full(len(moved.seqs), -1, dtype=np.int64)
    for pos, oseq, cos in ordered_map(matched, parts):
        better = cos > best_cos[pos]  # parts in old seq order: the first wins a tie
        best_cos[pos[better]], best_old[pos[better]] = cos[better], oseq[better]
    hit = np.flatnonzero(best_old >= 0)
    return dict(zip(moved.seqs[hit].tolist(), best_old[hit].tolist(), strict=True))
