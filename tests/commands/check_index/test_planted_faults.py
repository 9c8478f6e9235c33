"""check-index's detectors: each planted fault is caught with the right status, clean passes."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from indexcheck.commands.check_index import CheckIndexSettings, check_index
from indexcheck.errors import DimensionMismatchError, InputError
from indexcheck.inputs.corpus import corpus_from_pairs
from indexcheck.stores import open_store
from indexcheck.testing import HashEmbedder, MemoryStore, positional_cache_bug


def make_corpus(n: int, dups: dict[int, int]) -> tuple[list[str], list[str]]:
    """n chunk ids/texts; ``dups`` maps a position to the earlier position it repeats."""
    ids = [f"doc{i // 50}#s{i:05d}" for i in range(n)]
    texts = [f"section {i}: facts about topic {i % 17} number {i}" for i in range(n)]
    for p, q in dups.items():
        texts[p] = texts[q]
    return ids, texts


def test_positional_cache_bug_is_diagnosed_as_shift_at_the_right_chunk() -> None:
    ids, texts = make_corpus(154, {40: 12, 41: 13, 90: 7})
    emb = HashEmbedder(32)
    fresh = emb.embed(texts)
    store = MemoryStore(ids, positional_cache_bug(texts, fresh), texts)
    r = check_index(
        CheckIndexSettings(sample=None), store, HashEmbedder(32), corpus_from_pairs(ids, texts)
    )
    assert not r.ok
    # issue 17: one bug, one root finding; the stretches (one per cumulative offset: the
    # repeats at 40 and 41, both served from the cache, shift everything after them by 2;
    # the repeat at 90 adds one more) are its details
    (shift,) = [f for f in r.findings if f.kind == "shift"]
    assert shift.details["start_id"] == ids[42]
    assert shift.details["preceding_duplicate"]["id"] == ids[40]  # the first repeat
    assert shift.details["offset_range"] == [-3, -2]
    stretches = shift.details["stretches"]
    assert [s["offset"] for s in stretches] == [-2, -3]
    assert [s["start_id"] for s in stretches] == [ids[42], ids[91]]
    assert [s["trigger_id"] for s in stretches] == [ids[41], ids[90]]
    by_id = {c.id: c for c in r.chunks}
    assert by_id[ids[42]].holds_vector_of == ids[40]
    assert by_id[ids[100]].holds_vector_of == ids[97]
    assert by_id[ids[100]].offset == -3
    assert all(by_id[i].status == "ok" for i in ids[:42])


def test_hash_keyed_build_of_the_same_corpus_passes() -> None:
    ids, texts = make_corpus(154, {40: 12, 41: 13, 90: 7})
    fresh = HashEmbedder(32).embed(texts)
    store = MemoryStore(ids, fresh, texts)
    r = check_index(
        CheckIndexSettings(sample=None), store, HashEmbedder(32), corpus_from_pairs(ids, texts)
    )
    assert r.ok, r.findings
    assert r.counts == {"ok": 154}
    assert r.min_cosine is not None and r.min_cosine > 0.9999
    # the repeats are still reported, as a risk note: the index just passed
    (dup,) = [f for f in r.findings if f.kind == "duplicate_text"]
    assert dup.severity == "info" and set(dup.chunk_ids) == {ids[40], ids[41], ids[90]}
    assert "the check passed" in dup.message and "misaligns every vector" not in dup.message


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_sample_catches_the_shift_and_bisects_to_its_first_chunk(seed: int) -> None:
    ids, texts = make_corpus(154, {30: 3})
    fresh = HashEmbedder(32).embed(texts)
    store = MemoryStore(ids, positional_cache_bug(texts, fresh), texts)
    r = check_index(
        CheckIndexSettings(sample=8, seed=seed),
        store,
        HashEmbedder(32),
        corpus_from_pairs(ids, texts),
    )
    assert not r.ok and r.checked == 8
    (shift,) = [f for f in r.findings if f.kind == "shift"]
    assert shift.details["start_id"] == ids[31]
    assert shift.details["preceding_duplicate"]["id"] == ids[30]


def test_same_seed_same_sample_and_result() -> None:
    ids, texts = make_corpus(300, {100: 5})
    fresh = HashEmbedder(32).embed(texts)
    store = MemoryStore(ids, positional_cache_bug(texts, fresh), texts)
    corpus = corpus_from_pairs(ids, texts)
    a = check_index(CheckIndexSettings(sample=20, seed=7), store, HashEmbedder(32), corpus)
    b = check_index(CheckIndexSettings(sample=20, seed=7), store, HashEmbedder(32), corpus)
    c = check_index(CheckIndexSettings(sample=20, seed=8), store, HashEmbedder(32), corpus)
    assert [x.id for x in a.chunks] == [x.id for x in b.chunks]
    assert [x.id for x in a.chunks] != [x.id for x in c.chunks]
    assert a.to_dict() == b.to_dict()


def test_model_mismatch_when_every_vector_comes_from_another_model() -> None:
    ids, texts = make_corpus(120, {})
    other = HashEmbedder(32, model="other-model").embed(texts)
    store = MemoryStore(ids, other, texts)
    r = check_index(
        CheckIndexSettings(sample=30), store, HashEmbedder(32), corpus_from_pairs(ids, texts)
    )
    assert not r.ok
    assert r.counts == {"model_mismatch": 30}
    assert [f.kind for f in r.findings] == ["model_mismatch"]


def test_wrong_dimension_is_bad_input() -> None:
    ids, texts = make_corpus(20, {})
    store = MemoryStore(ids, HashEmbedder(16).embed(texts), texts)
    with pytest.raises(DimensionMismatchError, match="16-d vectors but hash:32 gives 32-d"):
        check_index(CheckIndexSettings(), store, HashEmbedder(32), corpus_from_pairs(ids, texts))


def test_sample_larger_than_corpus_is_bad_input() -> None:
    ids, texts = make_corpus(20, {})
    store = MemoryStore(ids, HashEmbedder(16).embed(texts), texts)
    with pytest.raises(InputError, match="--sample 21 is larger than the corpus"):
        check_index(
            CheckIndexSettings(sample=21), store, HashEmbedder(16), corpus_from_pairs(ids, texts)
        )


def test_texts_can_come_from_the_store() -> None:
    ids, texts = make_corpus(60, {20: 2})
    fresh = HashEmbedder(32).embed(texts)
    store = MemoryStore(ids, positional_cache_bug(texts, fresh), texts)
    r = check_index(CheckIndexSettings(sample=None), store, HashEmbedder(32), None)
    assert {f.kind for f in r.findings} == {"shift", "duplicate_text"}
    # on a failing check the repeats are the warning that explains the shift
    (dup,) = [f for f in r.findings if f.kind == "duplicate_text"]
    assert dup.severity == "warning" and "misaligns every vector" in dup.message


def test_every_planted_fault_flagged_exactly_on_a_few_thousand_chunks(tmp_path) -> None:
    """The acceptance test: --all flags exactly the planted chunks with the right status."""
    n, d = 3000, 48
    ids, texts = make_corpus(n, {1200: 300, 2500: 2400})
    emb = HashEmbedder(d)
    fresh = emb.embed(texts)
    rows: list[list[float] | None] = [v.tolist() for v in fresh]
    planted: dict[str, str] = {}
    holds: dict[str, str] = {}
    # shift: after the repeat at 1200, chunks 1201..1260 hold their predecessor's vector
    for p in range(1201, 1261):
        rows[p] = fresh[p - 1].tolist()
        planted[ids[p]] = "shift"
        holds[ids[p]] = ids[p - 1]
    # stale: text edited after embedding
    for p in (15, 700, 1999, 2222, 2900):
        rows[p] = emb.embed([texts[p] + " (edited)"])[0].tolist()
        planted[ids[p]] = "stale_vector"
    for p in (40, 41, 1500):
        rows[p] = fresh[p][: d - 8].tolist()
        planted[ids[p]] = "dimension_mismatch"
    for p in (60, 1600, 2600):
        v = fresh[p].copy()
        v[3] = np.nan
        rows[p] = v.tolist()
        planted[ids[p]] = "non_finite"
    for p in (80, 1700, 2700):
        rows[p] = [0.0] * d
        planted[ids[p]] = "zero_vector"
    missing = {ids[p] for p in (5, 1800, 2999)}
    for i in missing:
        planted[i] = "missing_vector"
    store_ids = [i for i in ids if i not in missing] + ["orphan-1", "orphan-2"]
    store_rows = [rows[ids.index(i)] for i in ids if i not in missing] + [
        fresh[0].tolist(),
        fresh[1].tolist(),
    ]
    path = tmp_path / "vectors.parquet"
    pq.write_table(
        pa.table({"id": store_ids, "vector": pa.array(store_rows, pa.list_(pa.float32()))}), path
    )
    store = open_store(f"parquet:{path}")
    r = check_index(
        CheckIndexSettings(sample=None), store, HashEmbedder(d), corpus_from_pairs(ids, texts)
    )

    assert not r.ok and r.checked == n
    got = {c.id: c.status for c in r.chunks if c.status != "ok"}
    assert got == planted
    for c in r.chunks:
        if c.status == "shift":
            assert c.holds_vector_of == holds[c.id] and c.offset == -1
    kinds = {f.kind: f for f in r.findings}
    assert set(kinds) == {
        "shift",
        "stale_vector",
        "dimension_mismatch",
        "non_finite",
        "zero_vector",
        "missing_vector",
        "orphan_vector",
        "duplicate_text",
    }
    assert kinds["orphan_vector"].chunk_ids == ["orphan-1", "orphan-2"]
    assert kinds["shift"].details["start_id"] == ids[1201]
    assert kinds["shift"].details["preceding_duplicate"]["id"] == ids[1200]
    assert set(kinds["duplicate_text"].chunk_ids) == {ids[1200], ids[2500]}


@pytest.mark.parametrize("stream", [False, True])
def test_vectors_scaled_far_pass_and_an_absurd_length_is_named(stream: bool) -> None:
    """Stored vectors scaled to 1e25 point the right way (float32 norms would overflow and
    call them another model); ones scaled to 1e35 are an absurd magnitude, no model change."""
    ids, texts = make_corpus(60, {})
    fresh = HashEmbedder(32).embed(texts)
    settings = CheckIndexSettings(sample=None, stream=stream)
    far = MemoryStore(ids, fresh * np.float32(1e25), texts)
    r = check_index(settings, far, HashEmbedder(32), corpus_from_pairs(ids, texts))
    assert r.ok, [f.message for f in r.findings]
    absurd = fresh.copy()
    absurd[:7] *= np.float32(1e35)
    store = MemoryStore(ids, absurd, texts)
    r = check_index(settings, store, HashEmbedder(32), corpus_from_pairs(ids, texts))
    assert [f.kind for f in r.findings if f.severity == "error"] == ["absurd_magnitude"]
    (found,) = [f for f in r.findings if f.kind == "absurd_magnitude"]
    assert sorted(found.chunk_ids) == sorted(ids[:7])
