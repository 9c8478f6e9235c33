"""diff-index of two ``parquet:`` stores without a spill of either side's vectors.

Only both sides' keys are written (id and text columns, on two threads,
:func:`.arrow_spill._keys_arrow`). After the join both vector columns are read once, in order,
each decoded and made unit in its own thread, and each new block is compared with its old
partners in a window of the latest old blocks (``WINDOW_BYTES``): an index rebuilt in the same
order, shifted, or with a few rows moved pairs inside it. A pair whose old row is outside the
window is deferred (its new unit row written to ``deferred.f32``) and compared in a second,
ordered pass over the old vectors. The holder search (only when a vector moved) reads the old
vectors once more, a row group a thread. Memory holds the window, a few blocks in flight and
the deferred pairs (16 bytes each, rows on disk). If the old side's dimension turns out not to
be its first vector's length, or a block needs the row reader,
:class:`~.arrow_spill.Fallback` is raised and the caller spills instead.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from contextlib import ExitStack, closing
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import DataFileError
from .arrow_spill import ROWS, Fallback, _keys_arrow, unit_blocks
from .band_holders import OldKeys, screened_holders
from .hash_join import Side, VectorFile, prefetch
from .join import Tally, _Pairs, explain, pair_keys
from .result import DiffResult
from .vectors import MovedVectors

#: the old blocks held for pairing, in bytes of unit rows (at least four blocks)
WINDOW_BYTES = 64 << 20
#: runs of consecutive pairs a block is compared in as views, at the most
RUNS = 16

Block = tuple[int, np.ndarray, np.ndarray]  # first seq, unit rows, flags


def band_keys(old: Any, new: Any, folder: Path) -> tuple[Side, Side] | None:
    """Both sides' keys, read on two threads; None when either store needs the spill."""
    if not (getattr(old, "arrow_ready", False) and getattr(new, "arrow_ready", False)):
        return None
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        fn = pool.submit(_keys_arrow, new, "new", folder)
        side_old = _keys_arrow(old, "old", folder)
        side_new = fn.result()
    if side_old is None or side_new is None:
        return None
    return side_old, side_new


def first_dimension(store: Any) -> int:
    """The store's dimension if known, else the length of its first vector (0: none)."""
    if store.known_dimension is not None:
        return int(store.known_dimension)
    from ...stores.files.readers import list_lengths

    for rb in store.arrow_batches(ROWS, False, ("vector",)):
        dims = list_lengths(rb.column(0), 0)
        present = np.flatnonzero(dims > 0)
        if present.size:
            return int(dims[present[0]])
    return 0


class _Window:
    """The latest old blocks of the ordered old stream, at most ``rows`` rows past the
    first block kept: rows [lo, hi) are held."""

    def __init__(self, stream: Iterator[Block], rows: int) -> None:
        self._stream, self.rows = stream, rows
        self._blocks: deque[Block] = deque()
        self.lo = self.hi = 0
        self.ended = False

    @property
    def held(self) -> list[Block]:
        """The old blocks held, in seq order."""
        return list(self._blocks)

    def pull(self) -> bool:
        """One more old block (False at the end of the stream)."""
        try:
            block = next(self._stream)
        except StopIteration:
            self.ended = True
            return False
        self._blocks.append(block)
        self.hi = block[0] + len(block[2])
        while len(self._blocks) > 1 and self.hi - self._blocks[1][0] >= self.rows:
            self._blocks.popleft()
        self.lo = self._blocks[0][0]
        return True

    def _which(self, oseq: np.ndarray) -> np.ndarray:
        """The held block each old row of ``oseq`` (in [lo, hi)) sits in."""
        starts = np.asarray([b[0] for b in self._blocks], dtype=np.int64)
        which: np.ndarray = np.searchsorted(starts, oseq, side="right") - 1
        return which

    def runs(self, oseq: np.ndarray, local: np.ndarray) -> list[tuple[int, int, int]] | None:
        """(from, to, block) of the runs of ``oseq`` (in [lo, hi), ascending) that are
        consecutive rows of one held block paired with consecutive ``local`` rows; None
        when there are too many to be worth views."""
        which = self._which(oseq)
        cut = (np.diff(oseq) != 1) | (np.diff(local) != 1) | (np.diff(which) != 0)
        breaks = np.flatnonzero(cut) + 1
        if len(breaks) > RUNS:
            return None
        edges = [0, *breaks.tolist(), len(oseq)]
        return [(a, b, int(which[a])) for a, b in zip(edges, edges[1:], strict=False)]

    def view(self, block: int, first: int, count: int) -> tuple[np.ndarray, np.ndarray]:
        """Unit rows and flags of ``count`` old rows from seq ``first`` of a held block."""
        start, unit, flag = self._blocks[block]
        at = slice(first - start, first - start + count)
        return unit[at], flag[at]

    def take(self, oseq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Unit rows and flags of the old rows ``oseq`` (all in [lo, hi)), copied."""
        which = self._which(oseq)
        d = self._blocks[0][1].shape[1]
        rows = np.empty((len(oseq), d), dtype=np.float32)
        flags = np.empty(len(oseq), dtype=np.uint8)
        edges = np.searchsorted(which, np.arange(len(self._blocks) + 1))  # oseq ascending
        for b in range(len(self._blocks)):
            a, z = int(edges[b]), int(edges[b + 1])
            if z > a:
                start, unit, flag = self._blocks[b]
                np.take(unit, oseq[a:z] - start, axis=0, out=rows[a:z])
                flags[a:z] = flag[oseq[a:z] - start]
        return rows, flags

    def clear(self) -> None:
        self._blocks.clear()

    def drain(self) -> None:
        """Read the stream to its end (the store learns its dimension from a whole pass)."""
        while not self.ended:
            try:
                next(self._stream)
            except StopIteration:
                self.ended = True


class _Deferred:
    """Pairs compared after the band pass: new seq, old seq and new flag in memory, the
    new unit rows in ``deferred.f32`` in the order they came."""

    def __init__(self, folder: Path, dimension: int) -> None:
        self.path, self.dimension = folder / "deferred.f32", dimension
        self._out: Any = self.path.open("wb")
        self.parts: list[tuple[np.ndarray, ...]] = []
        self.count = 0

    def add(self, nseq: np.ndarray, oseq: np.ndarray, nflag: np.ndarray, unit: Any) -> None:
        if len(nseq):
            self.parts.append((nseq, oseq, nflag))
            self._out.write(np.ascontiguousarray(unit, dtype=np.float32).data)
            self.count += len(nseq)

    def compare(self, old: Any, tally: Tally) -> None:
        """Compare the deferred pairs, in old seq order, in one pass over the old vectors
        that stops after the last one."""
        self._out.close()
        nseq, oseq, nflag = (np.concatenate(c) for c in zip(*self.parts, strict=True))
        self.parts = []
        order = np.argsort(oseq, kind="stable")
        ranked = oseq[order]  # sorted once: each block finds its pairs by a binary search
        file = VectorFile(self.path, self.dimension)
        olds = prefetch(unit_blocks(old, self.dimension))
        try:
            at, last = 0, int(ranked[-1])
            for start, unit, flag in olds:
                end = start + len(flag)
                stop = int(np.searchsorted(ranked, end, side="left"))
                if stop > at:
                    idx = order[at:stop]
                    local = oseq[idx] - start
                    mine, theirs = file.gather(idx), np.take(unit, local, axis=0)
                    tally.add(nseq[idx], oseq[idx], nflag[idx], flag[local], mine, theirs)
                    at = stop
                if end > last:
                    break
            if at < len(order):
                raise _changed(old)
        finally:
            olds.close()
            file.close()

    def close(self) -> None:
        if not self._out.closed:
            self._out.close()
        self.path.unlink(missing_ok=True)


def band_compare(
    con: Any,
    old: Any,
    new: Any,
    so: Side,
    sn: Side,
    folder: Path,
    min_cosine: float,
    say: Callable[[str], None],
) -> DiffResult:
    """The join over both sides' keys and the comparison over both vector streams."""
    d = so.dimension
    learn = old.known_dimension is None
    pair_keys(con, so, sn)
    say("comparing the vectors of unchanged texts")
    with ExitStack() as stack:
        moved = stack.enter_context(closing(MovedVectors(folder, d)))
        deferred = stack.enter_context(closing(_Deferred(folder, d)))
        keys = stack.enter_context(closing(OldKeys(folder, d)))
        news = stack.enter_context(closing(prefetch(unit_blocks(new, d))))
        olds = stack.enter_context(closing(prefetch(unit_blocks(old, d))))
        tally = Tally(moved, min_cosine)
        window = _Window(keys.keyed(olds), max(4 * ROWS, WINDOW_BYTES // max(1, 4 * d)))
        pairs = _Pairs(con)
        for start, unit, flags in news:
            tally.new_flags(start, flags)
            tb = pairs.upto(start + len(flags))
            if tb is not None:
                _pair_block(old, tb, start, unit, flags, window, tally, deferred)
                if tally.moved_at and keys.first is None:
                    keys.want(window.held)
        if learn or tally.moved_at:
            window.drain()  # the dimension learned, the rest of the old rows keyed
        if learn and old.known_dimension != d:  # another most common length than the first
            raise Fallback(old.spec)
        olds.close()
        window.clear()  # the held blocks are not needed after the pass
        if deferred.count:
            deferred.compare(old, tally)

        def holders() -> dict[int, int]:
            path = keys.finish(old, so.rows)
            return screened_holders(con, old, so, path, moved, min_cosine)

        return explain(con, tally, sn, holders, say)


def _changed(old: Any) -> DataFileError:
    return DataFileError(
        f"{old.spec} has fewer rows than when its keys were read: did the file change while "
        "it was read? run again once it is written"
    )


def _pair_block(
    old: Any,
    tb: Any,
    start: int,
    unit: np.ndarray,
    flags: np.ndarray,
    window: _Window,
    tally: Tally,
    deferred: _Deferred,
) -> None:
    """Compare a new block's pairs (``tb``) with their old rows in the window, pulling old
    blocks up to one window ahead (further, to its first pair's old row, when none of the
    block's pairs is in reach: rows removed at the front of the old index, or a rotated
    one, move the window on instead of deferring every pair after them); defer the
    others."""
    nseq = tb.column("nseq").to_numpy()
    oseq = tb.column("oseq").to_numpy()
    order = np.argsort(oseq, kind="stable")
    nseq, oseq = nseq[order], oseq[order]
    local = nseq - start
    reach = window.hi + window.rows  # pulled for this block at the most
    at, served = 0, False
    while at < len(oseq):
        behind = at + int(np.searchsorted(oseq[at:], window.lo, side="left"))
        if behind > at:  # left behind by the window: later
            deferred.add(
                nseq[at:behind], oseq[at:behind], flags[local[at:behind]], unit[local[at:behind]]
            )
            at = behind
        held = at + int(np.searchsorted(oseq[at:], window.hi, side="left"))
        if held > at:
            o, n, lo_ = oseq[at:held], nseq[at:held], local[at:held]
            runs = window.runs(o, lo_)
            if runs is None:  # scattered: gathered copies
                rows, oflag = window.take(o)
                tally.add(n, o, flags[lo_], oflag, np.take(unit, lo_, axis=0), rows)
            else:  # rebuilt in order, or shifted: views of both blocks
                for a, b, blk in runs:
                    theirs, oflag = window.view(blk, int(o[a]), b - a)
                    mine = unit[int(lo_[a]) : int(lo_[a]) + b - a]
                    tally.add(n[a:b], o[a:b], flags[lo_[a:b]], oflag, mine, theirs)
            at, served = held, True
        if at == len(oseq):
            break
        if not served and oseq[at] >= reach:  # nothing in reach: jump to the first pair
            reach = int(oseq[at]) + window.rows
        if oseq[at] >= reach or not window.pull():
            if window.ended:
                raise _changed(old)
            deferred.add(nseq[at:], oseq[at:], flags[local[at:]], unit[local[at:]])
            break
