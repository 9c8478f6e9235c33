"""The holder screen of the band pass (``band_holders._screened``) finds exactly the
(moved row, old row) pairs a brute force finds: an old row of another text that shares a
key with the moved row in any of the four tables (``-1``: no key) and differs from it in at
most ``max_differing_bits`` of the 96 sign bits. Keys at 0 and at the top of the 24-bit
range, a match reachable only through table 3, unusable rows on both sides, and more old
rows than one screened batch."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from indexcheck.commands.diff_index import band_holders as bh
from indexcheck.commands.diff_index.hash_join import LSH_BITS, LSH_TABLES

TOP = (1 << LSH_BITS) - 1


def _brute(k: np.ndarray, h: np.ndarray, mk: np.ndarray, mh: np.ndarray, most: int) -> set:
    found = set()
    for p in range(len(mk)):
        for o in range(len(k)):
            share = any(mk[p, t] >= 0 and mk[p, t] == k[o, t] for t in range(LSH_TABLES))
            if not share or (h[o] == mh[p]).all():
                continue
            bits = int(np.unpackbits(np.bitwise_xor(k[o], mk[p]).view(np.uint8)).sum())
            if bits <= most:
                found.add((p, o))
    return found


@pytest.mark.parametrize("seed", range(6))
def test_the_screen_finds_what_a_brute_force_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    monkeypatch.setattr(bh, "SCREEN_ROWS", 97)  # several screened batches
    rng = np.random.default_rng(seed)
    n, m = 700, 40
    k = rng.integers(0, 1 << LSH_BITS, size=(n, LSH_TABLES)).astype(np.int32)
    k[rng.random(n) < 0.05] = -1  # old rows without a usable vector
    k[:20, :] = np.array([0, TOP, TOP - 1, 5], dtype=np.int32)  # the range's ends
    h = rng.integers(0, 50, size=(n, 2)).astype(np.uint64)
    # moved rows: copies of old rows' keys with a few bits flipped, so that some share only
    # one table; one row only through table 3, one through the top key, one unusable
    src = rng.integers(20, n, size=m)
    mk = k[src].copy()
    for p in range(m):
        for t in rng.choice(LSH_TABLES, size=int(rng.integers(0, LSH_TABLES)), replace=False):
            mk[p, t] ^= np.int32(1 << int(rng.integers(0, LSH_BITS)))
    mk[mk < 0] = -1
    mk[0] = [k[src[0], 0] ^ 1, k[src[0], 1] ^ 2, k[src[0], 2] ^ 4, k[src[0], 3]]  # table 3 only
    mk[1] = [1, TOP, TOP - 2, 4]  # shares only table 1's top key with rows 0-19 (4 bits off)
    mk[2] = [-1, -1, -1, -1]
    mh = rng.integers(0, 50, size=(m, 2)).astype(np.uint64)
    mh[3] = h[src[3]]  # the same text as its source: never its own holder
    pq.write_table(pa.table({"h1": h[:, 0], "h2": h[:, 1]}), tmp_path / "keys.parquet")
    (tmp_path / "old.lsh").write_bytes(k.tobytes())
    moved = SimpleNamespace(key_arrays=lambda con: (mk, mh[:, 0], mh[:, 1]), seqs=np.arange(m))
    so = SimpleNamespace(keys=tmp_path / "keys.parquet")
    for min_cosine in (0.999, 0.9):
        pos, oseq = bh._screened(tmp_path / "old.lsh", so, moved, None, min_cosine)  # type: ignore[arg-type]
        got = set(zip(pos.tolist(), oseq.tolist(), strict=True))
        want = _brute(k, h, mk, mh, bh.max_differing_bits(min_cosine))
        assert got == want
        assert (0, int(src[0])) in want or (mh[0] == h[src[0]]).all()
        assert any(p == 1 and o < 20 for p, o in want)  # found through the top key
        assert not any(p == 2 for p, _ in got)
