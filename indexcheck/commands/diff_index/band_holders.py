"""The holder search of :mod:`.band`, without a second pass over the old vectors.

Once a vector has moved, the band pass writes the LSH keys of the old rows
(:func:`.hash_join.lsh_keys`, ``-1`` for a row whose vector is not usable) to ``old.lsh``
as it reads the old vectors (:class:`OldKeys`): 16 bytes a row. The
candidates of each moved row are found as :func:`.vectors.holders_in` finds them (the
usable old rows of another text that share one of its four keys), from that file and the
old keys file alone. Their 96 sign bits then screen them: a vector at cosine ``c`` to the
moved one differs from it in each bit with probability acos(c)/pi, so a candidate that
differs in more than :func:`max_differing_bits` bits is below ``min_cosine`` but with a
probability under 1e-12, far below the 1% the LSH itself may miss. Only the row groups
of the old file that hold a remaining candidate are decoded again (a shift run's holders
sit in a few), and each candidate's exact cosine decides, the highest and then the first
in old order.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from . import vectors
from .arrow_spill import unit_blocks
from .hash_join import LSH_BITS, LSH_TABLES, Flag, Side, lsh_keys, lsh_planes, ordered_map
from .vectors import MovedVectors, _best

#: the chance allowed that the bit screen drops a candidate at ``min_cosine`` or above
SCREEN_MISS = 1e-12
#: old rows whose keys are screened at once
SCREEN_ROWS = 65536


@lru_cache(maxsize=16)
def max_differing_bits(min_cosine: float) -> int:
    """The most sign bits (of 96) in which a vector at ``min_cosine`` or above differs,
    but with a probability under SCREEN_MISS (96 or more: no screen)."""
    bits = LSH_TABLES * LSH_BITS
    p = math.acos(max(-1.0, min(1.0, min_cosine))) / math.pi
    tail = 1.0
    for h in range(bits + 1):
        # P(X > h) for X ~ Binomial(bits, p)
        tail -= math.comb(bits, h) * p**h * (1 - p) ** (bits - h)
        if tail < SCREEN_MISS:
            return h
    return bits


def _differing(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Differing bits of int32 key rows (n, 4) ``a`` and ``b``."""
    x = np.bitwise_xor(a, b).view(np.uint32)
    if hasattr(np, "bitwise_count"):
        bits: np.ndarray = np.bitwise_count(x).sum(axis=1, dtype=np.int64)
    else:  # numpy < 2
        bits = np.unpackbits(x.view(np.uint8), axis=1).sum(axis=1, dtype=np.int64)
    return bits


def _screened(
    keys_file: Path, so: Side, moved: MovedVectors, con: Any, min_cosine: float
) -> tuple[np.ndarray, np.ndarray]:
    """(moved position, old seq) of every candidate left by the bit screen, by old seq."""
    import pyarrow.parquet as pq

    mkeys, mh1, mh2 = moved.key_arrays(con)
    order = [np.argsort(mkeys[:, t], kind="stable") for t in range(LSH_TABLES)]
    ranked = [mkeys[order[t], t] for t in range(LSH_TABLES)]
    # bit t of held[key]: a moved row has that key in table t (a key is under 2**LSH_BITS)
    held = np.zeros(1 << LSH_BITS, dtype=np.uint8)
    for t in range(LSH_TABLES):
        held[ranked[t][ranked[t] >= 0]] |= np.uint8(1 << t)
    most = max_differing_bits(min_cosine)
    pos_parts: list[np.ndarray] = []
    seq_parts: list[np.ndarray] = []
    seq = 0
    text_keys = pq.ParquetFile(so.keys)
    with keys_file.open("rb") as f:
        for rb in text_keys.iter_batches(SCREEN_ROWS, columns=["h1", "h2"], use_threads=False):
            n = rb.num_rows
            k = np.frombuffer(f.read(n * 4 * LSH_TABLES), dtype=np.int32).reshape(n, LSH_TABLES)
            oh1, oh2 = (rb.column(c).to_numpy() for c in ("h1", "h2"))
            # (n, tables): bit t set where a row's key in table t is a moved row's (-1: none)
            tables = np.where(k >= 0, held[np.maximum(k, 0)], np.uint8(0))
            for t in range(LSH_TABLES):
                hit = np.flatnonzero(tables[:, t] & np.uint8(1 << t))  # rows with a moved key
                if not hit.size:
                    continue
                kt = k[hit, t]
                lo = np.searchsorted(ranked[t], kt, side="left")
                count = np.searchsorted(ranked[t], kt, side="right") - lo
                for at, pos in vectors._candidates(count, lo, order[t]):
                    old = hit[at]
                    keep = (oh1[old] != mh1[pos]) | (oh2[old] != mh2[pos])
                    keep &= _differing(k[old], mkeys[pos]) <= most
                    pos_parts.append(pos[keep])
                    seq_parts.append(old[keep] + seq)
            seq += n
    if not pos_parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    pos, oseq = np.concatenate(pos_parts), np.concatenate(seq_parts)
    # a pair found through several tables once, ordered by old seq
    pair = np.unique(oseq * max(1, len(moved.seqs)) + pos)
    return pair % max(1, len(moved.seqs)), pair // max(1, len(moved.seqs))


class OldKeys:
    """The LSH keys of the old rows (-1: not usable), 16 bytes a row in ``old.lsh`` at its
    seq. None are computed for a diff where nothing moved: from the first moved vector on
    (:meth:`want`), the blocks held then and every block read after are keyed as the band
    pass reads them (:meth:`keyed`): rows [first, last). :meth:`finish` keys the rest from
    the old vectors read again (for a shift found early, nothing)."""

    def __init__(self, folder: Path, dimension: int) -> None:
        self.path, self.dimension = folder / "old.lsh", dimension
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        self._planes = lsh_planes(dimension)
        self.first: int | None = None
        self.last = 0

    def want(self, held: list[tuple[int, np.ndarray, np.ndarray]]) -> None:
        """Key from now on, starting with the ``held`` blocks (first seq, unit rows, flags)."""
        if self.first is None:
            self.first = held[0][0] if held else None
            for seq, unit, flag in held:
                self._write(seq, unit, flag)
                self.last = seq + len(flag)
            if self.first is None:
                self.first = self.last = -1  # nothing held yet: every block from here

    def keyed(self, blocks: Iterator[Any]) -> Iterator[Any]:
        """``blocks``, each one keyed on the way once keys are wanted."""
        for seq, unit, flag in blocks:
            if self.first is not None:
                if self.first < 0:
                    self.first = seq
                self._write(seq, unit, flag)
                self.last = seq + len(flag)
            yield seq, unit, flag

    def _write(self, seq: int, unit: np.ndarray, flag: np.ndarray) -> None:
        keys = lsh_keys(unit, self._planes)
        keys[flag != Flag.OK] = -1
        os.pwrite(self._fd, keys.tobytes(), seq * keys.itemsize * keys.shape[1])

    def finish(self, old: Any, rows: int) -> Path:
        """Key the rows outside [first, last) (on two threads, a row group each); the
        file."""
        first = rows if self.first is None or self.first < 0 else self.first
        last = rows if self.first is None or self.first < 0 else self.last
        starts = old.arrow_groups

        def keyed(g: int) -> int:
            for seq, unit, flag in unit_blocks(old, self.dimension, g):
                a, z = max(seq, 0), min(seq + len(flag), first)
                if z > a:
                    self._write(a, unit[a - seq : z - seq], flag[a - seq : z - seq])
                a, z = max(seq, last), seq + len(flag)
                if z > a:
                    self._write(a, unit[a - seq :], flag[a - seq :])
            return g

        todo = [g for g in range(len(starts) - 1) if starts[g] < first or starts[g + 1] > last]
        for _ in ordered_map(keyed, todo):
            pass
        return self.path

    def close(self) -> None:
        os.close(self._fd)
        self.path.unlink(missing_ok=True)


def screened_holders(
    con: Any,
    old: Any,
    so: Side,
    keys_file: Path,
    moved: MovedVectors,
    min_cosine: float,
) -> dict[int, int]:
    """New seq -> old seq of the old text whose vector each moved new vector holds."""
    pos, oseq = _screened(keys_file, so, moved, con, min_cosine)
    best_cos = np.full(len(moved.seqs), -np.inf, dtype=np.float32)
    best_old = np.full(len(moved.seqs), -1, dtype=np.int64)
    if pos.size:
        starts = np.asarray(old.arrow_groups, dtype=np.int64)
        group = np.searchsorted(starts, oseq, side="right") - 1

        def scored(g: int) -> tuple[np.ndarray, ...]:
            at = np.flatnonzero(group == g)
            return _exact(old, so.dimension, g, pos[at], oseq[at], moved, min_cosine)

        for p, o, c in ordered_map(scored, np.unique(group).tolist()):
            p, o, c = _best(p, o, c)  # in old seq order: the first wins a tie
            better = c > best_cos[p]
            best_cos[p[better]], best_old[p[better]] = c[better], o[better]
    hit = np.flatnonzero(best_old >= 0)
    return dict(zip(moved.seqs[hit].tolist(), best_old[hit].tolist(), strict=True))


def _exact(
    old: Any,
    d: int,
    g: int,
    pos: np.ndarray,
    oseq: np.ndarray,
    moved: MovedVectors,
    min_cosine: float,
) -> tuple[np.ndarray, ...]:
    """(moved position, old seq, cosine) of the candidates in row group ``g`` (by old seq)
    at ``min_cosine`` or above, from the group decoded again."""
    out: list[tuple[np.ndarray, ...]] = []
    for start, unit, _flag in unit_blocks(old, d, g):
        a, b = np.searchsorted(oseq, [start, start + len(unit)])
        if b > a:
            theirs = unit[oseq[a:b] - start]
            cos = np.multiply(theirs, moved.gather_at(pos[a:b]), out=theirs).sum(axis=1)
            keep = cos >= min_cosine
            out.append((pos[a:b][keep], oseq[a:b][keep], cos[keep]))
    if not out:
        return (np.zeros(0, np.int64),) * 2 + (np.zeros(0, np.float32),)
    cols = [np.concatenate(c) for c in zip(*out, strict=True)]
    return tuple(cols)
