"""diff-index screens its cosines with einsum and sums again exactly where it matters: the
counts, the moved pairs' cosines and the lowest cosine must be those of the exact sum."""

from __future__ import annotations

import numpy as np

from indexcheck.core.diff_index.join import Tally, _exact


class _Moved:
    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []

    def add(self, seqs: np.ndarray, rows: np.ndarray) -> None:
        self.rows.append(rows)


def _unit(a: np.ndarray) -> np.ndarray:
    out: np.ndarray = (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)
    return out


def _pairs(n: int, d: int, noise: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = _unit(rng.standard_normal((n, d), dtype=np.float32))
    b = _unit(a + np.float32(noise) * rng.standard_normal((n, d), dtype=np.float32))
    return a, b


def test_a_threshold_between_the_two_sums_is_decided_by_the_exact_one() -> None:
    """min_cosine is put between the einsum and the exact figure of pairs where the two
    differ: a screen that trusted einsum would count those pairs on the wrong side."""
    a, b = _pairs(20_000, 384, 0.02, 0)
    exact = _exact(a, b)
    fast = np.einsum("ij,ij->i", a, b)
    apart = np.flatnonzero(fast != exact)
    assert apart.size > 100  # the two orders do differ in the last bits
    # a threshold just above the exact figure of a pair whose einsum figure is higher
    up = apart[fast[apart] > exact[apart]][0]
    for mc in (float(np.nextafter(exact[up], np.float32(2))), float(exact[up])):
        tally = Tally(_Moved(), mc)  # type: ignore[arg-type]
        n = len(a)
        seq = np.arange(n, dtype=np.int64)
        ok = np.zeros(n, dtype=np.uint8)
        tally.add(seq, seq, ok, ok, a, b)
        assert tally.counts.get("unchanged", 0) == int((exact >= mc).sum())
        nseq, _oseq, cos = (np.concatenate(c) for c in zip(*tally.moved_at, strict=True))
        assert (cos == exact[nseq]).all()
        assert tally.low == float(exact.min())


def test_the_lowest_cosine_is_the_exact_one_when_every_pair_is_unchanged() -> None:
    a, b = _pairs(5_000, 64, 0.001, 1)
    exact = _exact(a, b)
    tally = Tally(_Moved(), -1.0)  # type: ignore[arg-type]
    seq = np.arange(len(a), dtype=np.int64)
    ok = np.zeros(len(a), dtype=np.uint8)
    tally.add(seq, seq, ok, ok, a, b)
    assert tally.counts["unchanged"] == len(a) and not tally.moved_at
    assert tally.low == float(exact.min())
