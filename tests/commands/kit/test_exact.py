"""Streamed exact top-k against faiss flat search: families, ties, k > n, bounded memory."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import faiss
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexcheck.commands.kit.caches import npy_blocks
from indexcheck.commands.kit.exact import (
    FAMILIES,
    as_similarity,
    block_rows,
    exact_topk,
    family_of,
    rebatch,
)
from indexcheck.errors import DataFileError, InputError
from indexcheck.scales.transforms import CATALOGUE


def blocks_of(
    ids: list[str], x: np.ndarray, sizes: list[int]
) -> list[tuple[list[str], np.ndarray]]:
    out, s = [], 0
    for size in sizes:
        out.append((ids[s : s + size], x[s : s + size]))
        s += size
    assert s == len(ids)
    return out


def flat(x: np.ndarray, q: np.ndarray, k: int, family: str) -> tuple[np.ndarray, np.ndarray]:
    """faiss IndexFlat over the whole matrix held in memory: the reference."""
    if family == "cos":
        x = x / np.linalg.norm(x, axis=1, keepdims=True)
        q = q / np.linalg.norm(q, axis=1, keepdims=True)
    index = faiss.IndexFlatL2(x.shape[1]) if family == "l2" else faiss.IndexFlatIP(x.shape[1])
    index.add(np.ascontiguousarray(x, dtype=np.float32))
    D, I = index.search(np.ascontiguousarray(q, dtype=np.float32), k)
    return D, I


@pytest.mark.parametrize("family", ["cos", "dot", "l2"])
def test_streamed_top_k_equals_faiss_flat(family: str) -> None:
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((3000, 24)) * rng.uniform(0.5, 3, (3000, 1))).astype(np.float32)
    q = rng.standard_normal((60, 24)).astype(np.float32)
    ids = [f"v{i}" for i in range(len(x))]
    D, I = exact_topk(blocks_of(ids, x, [1, 999, 1000, 7, 993]), q, 10, family)
    Dr, Ir = flat(x, q, 10, family)
    np.testing.assert_allclose(D, Dr, rtol=1e-5, atol=1e-5)
    assert (I == np.asarray(ids, dtype=object)[Ir]).all()
    assert D.dtype == np.float32 and I.dtype == object


def test_ties_give_the_same_scores_and_only_tied_ids_differ() -> None:
    rng = np.random.default_rng(2)
    base = rng.standard_normal((200, 16)).astype(np.float32)
    x = np.concatenate([base, base, base[:50]])  # every vector two or three times
    ids = [f"v{i}" for i in range(len(x))]
    q = rng.standard_normal((40, 16)).astype(np.float32)
    for k in (1, 5, 9):
        D, I = exact_topk(blocks_of(ids, x, [120, 200, 130]), q, k, "dot")
        Dr, Ir = flat(x, q, k, "dot")
        np.testing.assert_allclose(D, Dr, rtol=1e-6, atol=1e-6)
        pos = {v: i for i, v in enumerate(ids)}
        for r in range(len(q)):
            # each returned id really has the reported score, ids are distinct, and
            # everything strictly better than the k-th is the same set as faiss's
            got = np.array([x[pos[v]] @ q[r] for v in I[r]], dtype=np.float32)
            np.testing.assert_allclose(got, D[r], rtol=1e-5, atol=1e-5)
            assert len(set(I[r])) == k
            strict = D[r, -1] + 1e-5
            assert {v for v, s in zip(I[r], D[r], strict=True) if s > strict} == {
                ids[j] for j, s in zip(Ir[r], Dr[r], strict=True) if s > strict
            }
    # among equal scores the vector seen first wins: v0 (first block) before its copies
    # v200 and v400 (second block)
    D, I = exact_topk(blocks_of(ids, x, [200, 250]), base[:1], 2, "l2")
    assert I[0, 0] == "v0" and I[0, 1] in ("v200", "v400") and D[0, 0] == D[0, 1] == 0


@pytest.mark.parametrize("family", ["cos", "dot", "l2"])
def test_k_larger_than_the_index_pads_with_nan_and_none(family: str) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((7, 8)).astype(np.float32)
    q = rng.standard_normal((3, 8)).astype(np.float32)
    ids = [f"v{i}" for i in range(7)]
    D, I = exact_topk(blocks_of(ids, x, [2, 5]), q, 12, family)
    Dr, Ir = flat(x, q, 7, family)
    np.testing.assert_allclose(D[:, :7], Dr, rtol=1e-5, atol=1e-5)
    assert np.isnan(D[:, 7:]).all() and (I[:, 7:] == None).all()  # noqa: E711
    D, I = exact_topk([], q, 3, family)
    assert np.isnan(D).all() and I.shape == (3, 3)


def test_cos_family_ignores_vector_length() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((500, 12)).astype(np.float32)
    q = rng.standard_normal((20, 12)).astype(np.float32)
    ids = [str(i) for i in range(500)]
    scaled = x * rng.uniform(0.1, 10, (500, 1)).astype(np.float32)
    a = exact_topk([(ids, x)], q, 5, "cos")
    b = exact_topk([(ids, scaled)], q * 3, 5, "cos")
    np.testing.assert_allclose(a[0], b[0], atol=1e-5)
    assert (a[1] == b[1]).all()
    assert np.all(a[0] <= 1.0 + 1e-6)


def test_memory_is_bounded_by_design_one_block_at_a_time() -> None:
    """While block j is produced, every earlier block has been released."""
    rng = np.random.default_rng(5)
    q = rng.standard_normal((10, 16)).astype(np.float32)
    refs: list[weakref.ref[np.ndarray]] = []
    alive_seen: list[int] = []

    def gen() -> Iterator[tuple[list[str], np.ndarray]]:
        for j in range(12):
            gc.collect()
            alive_seen.append(sum(r() is not None for r in refs))
            block = rng.standard_normal((300, 16)).astype(np.float32)
            refs.append(weakref.ref(block))
            yield [f"b{j}-{i}" for i in range(300)], block
            del block

    gc.freeze()  # each collect then walks only what the test made, not the whole suite's heap
    try:
        D, I = exact_topk(gen(), q, 4, "cos")
        assert max(alive_seen) == 0, alive_seen  # each block is released before the next
        assert D.shape == (10, 4)
        # rebatch holds at most one output block's worth while coalescing
        refs.clear()
        alive_seen.clear()
        out = list(b[1].shape[0] for b in rebatch(gen(), 1000))
        assert out == [1200, 1200, 1200]
        assert max(alive_seen) <= 4
    finally:
        gc.unfreeze()


def test_npy_blocks_reads_in_blocks_and_rejects_bad_files(tmp_path: Path) -> None:
    x = np.random.default_rng(6).standard_normal((1001, 9)).astype(np.float32)
    np.save(tmp_path / "a.npy", x)
    got = list(npy_blocks(tmp_path / "a.npy", 250))
    assert [b.shape[0] for b in got] == [250, 250, 250, 250, 1]
    assert np.array_equal(np.concatenate(got), x)
    np.save(tmp_path / "b.npy", x.astype(np.float64))
    assert np.concatenate(list(npy_blocks(tmp_path / "b.npy", 400))).dtype == np.float32
    np.save(tmp_path / "c.npy", x[0])
    with pytest.raises(DataFileError, match="2-d"):
        list(npy_blocks(tmp_path / "c.npy", 10))
    (tmp_path / "d.npy").write_bytes((tmp_path / "a.npy").read_bytes()[:-40])
    with pytest.raises(DataFileError, match="truncated"):
        list(npy_blocks(tmp_path / "d.npy", 2000))


def test_families_and_helpers() -> None:
    assert {family_of(s) for s in ("cos", "1-cos", "(1+cos)/2", "1/(2-cos)")} == {"cos"}
    assert {family_of(s) for s in ("dot", "-dot", "1-dot", "(1+dot)/2")} == {"dot"}
    assert {family_of(s) for s in ("l2", "l2^2", "1/(1+l2^2)")} == {"l2"}
    assert {family_of(s) for s in ("2-2cos",)} == {"cos"} and family_of("1/(1+l2)") == "l2"
    assert FAMILIES == {t.formula: t.variable for t in CATALOGUE.values()}  # one table
    assert family_of("1+dot|1/(1-dot)") == "dot"  # Elasticsearch max_inner_product
    assert len(FAMILIES) == 14
    for bad in ("l1", "unknown"):
        with pytest.raises(InputError, match="not a function of cos, dot or l2"):
            family_of(bad)
    with pytest.raises(InputError):
        exact_topk([], np.zeros((1, 3), np.float32), 0, "dot")
    assert block_rows(384) == (64 << 20) // (4 * 384)
    np.testing.assert_array_equal(as_similarity(np.array([[1.0, 2.0]]), "l2"), [[-1.0, -2.0]])


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 60),
    k=st.integers(1, 70),
    cuts=st.lists(st.integers(1, 60), min_size=0, max_size=5),
    seed=st.integers(0, 1000),
    family=st.sampled_from(["cos", "dot", "l2"]),
)
def test_any_block_split_gives_the_brute_force_scores(
    n: int, k: int, cuts: list[int], seed: int, family: str
) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, (n, 4)).astype(np.float32)  # small integers: many exact ties
    x[np.abs(x).sum(axis=1) == 0] = 1.0
    q = rng.integers(-2, 3, (5, 4)).astype(np.float32) + 0.5
    bounds = sorted({c for c in cuts if c < n})
    sizes = np.diff([0, *bounds, n]).tolist()
    ids = [str(i) for i in range(n)]
    D, _ = exact_topk(blocks_of(ids, x, sizes), q, k, family)
    if family == "cos":
        xs = x / np.linalg.norm(x, axis=1, keepdims=True)
        s = (q / np.linalg.norm(q, axis=1, keepdims=True)) @ xs.T
        want = -np.sort(-s, axis=1)
    elif family == "dot":
        want = -np.sort(-(q @ x.T), axis=1)
    else:
        want = np.sort(((q[:, None, :] - x[None, :, :]) ** 2).sum(-1), axis=1)
    m = min(k, n)
    np.testing.assert_allclose(D[:, :m], want[:, :m], rtol=1e-5, atol=1e-4)
    assert np.isnan(D[:, m:]).all()
