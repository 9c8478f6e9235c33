"""A sampled check on a store that keeps no build order (Chroma, Qdrant, Milvus, Upstash,
pgvector without &order=, read back sorted by id). The window of neighbours by position is
then random, and corpora larger than the diagnosis budget are not embedded whole: a shifted
chunk must still be called a shift (its own vector is found stored under another id), never
model_mismatch or stale_vector, and the sample gets one readable finding."""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from indexcheck.commands.check_index import CheckIndexSettings, check_index
from indexcheck.testing import HashEmbedder, MemoryStore, positional_cache_bug


class Unordered(MemoryStore):
    ordered = False
    order_source = "sorted by id (no build order)"


def _store(n: int, vectors_of: str) -> tuple[Unordered, HashEmbedder]:
    texts = [f"chunk number {i} about topic {i % 97}" for i in range(n)]
    texts[10] = texts[3]  # one repeat early in build order
    emb = HashEmbedder(64)
    fresh = emb.embed(texts)
    if vectors_of == "shift":
        stored = positional_cache_bug(texts, fresh)
    elif vectors_of == "foreign":  # another model: a fixed rotation of the space
        q, _ = np.linalg.qr(np.random.default_rng(5).standard_normal((64, 64)))
        stored = (fresh @ q).astype(np.float32)
    else:
        stored = fresh
    rng = np.random.default_rng(1)
    ids = [str(uuid.UUID(int=int(rng.integers(0, 2**63)) << 64 | i)) for i in range(n)]
    order = sorted(range(n), key=lambda i: ids[i])  # rows come back sorted by id
    store = Unordered([ids[i] for i in order], stored[order], [texts[i] for i in order])
    return store, emb


@pytest.mark.parametrize("n", [5000, 20000])  # 20000: beyond the diagnosis budget
def test_a_shift_in_a_sample_is_a_shift_with_one_finding(n: int) -> None:
    store, emb = _store(n, "shift")
    r = check_index(CheckIndexSettings(sample=100, seed=0), store, emb, None)
    statuses = {c.status for c in r.chunks}
    assert not r.ok and statuses == {"shift"}
    shifts = [f for f in r.findings if f.kind == "shift"]
    assert len(shifts) == 1 and "--all" in shifts[0].message
    assert shifts[0].details["shifted_in_sample"] == 100
    assert not [f for f in r.findings if f.kind in ("model_mismatch", "stale_vector")]
    held = [c for c in r.chunks if c.vector_held_by is not None]
    assert held and all(c.vector_held_by != c.id for c in held)


def test_another_model_is_still_model_mismatch() -> None:
    store, emb = _store(20000, "foreign")
    r = check_index(CheckIndexSettings(sample=100, seed=0), store, emb, None)
    assert not r.ok and {c.status for c in r.chunks} == {"model_mismatch"}


def test_a_correct_unordered_index_passes() -> None:
    store, emb = _store(20000, "clean")
    r = check_index(CheckIndexSettings(sample=100, seed=0), store, emb, None)
    assert r.ok and {c.status for c in r.chunks} == {"ok"}


def test_every_chunk_after_a_repeat_is_sampled_even_when_there_are_many() -> None:
    """Issue 14: sampling always includes the chunk right after each repeated text; with
    more repeats than half the sample, the sample grows and half of it stays random."""
    from indexcheck.commands.check_index.sample.draw import plan_sample

    dup_of = {p: p - 5 for p in range(10, 400, 10)}  # 39 repeated texts, --sample 20
    plan = plan_sample(1000, 20, 0, dup_of)
    chosen, targeted = plan.positions, plan.targeted
    assert targeted == {p + 1 for p in dup_of}
    assert targeted <= set(chosen)
    assert len(chosen) - len(targeted) == 10  # half of --sample stays random
