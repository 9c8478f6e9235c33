"""repair streams: the plan keeps, per chunk, the id, two 64-bit text keys, the holder
position and a few flags, never a vector, a text or metadata; the copy is written a batch
at a time with the store read again, and the vectors stored at other rows fetched by id.
Checked with tracemalloc (numpy arrays and Python objects): the memory a repair of a
shifted index allocates grows by at most ``PER_CHUNK`` bytes a chunk from n to 4n, with a
near-free 64-d embedder: 53 bytes a chunk measured from 10,000 to 40,000 chunks, where
holding every row in memory, as repair did before, measured 1,303 (the vectors alone are
256). Below about 15,000 chunks the peak is a fixed cost (a scan batch, the writers), so n
starts above it."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from indexcheck import api
from indexcheck.commands.repair import mend
from indexcheck.testing import HashEmbedder, MemoryStore
from tests.commands.repair.helpers import held_source
from tests.fast_hooks import FAST64

#: what stays in memory per chunk: the ids list, keys, holders and flags, with the plan's
#: temporaries (three readings' holders while the sample is drawn); measured 53
PER_CHUNK = 150


class _Fast(HashEmbedder):
    """FAST64 as an indexcheck embedder."""

    def __init__(self) -> None:
        super().__init__(64)

    def _embed_batch(self, texts: list[Any]) -> tuple[np.ndarray, int]:
        return FAST64.embed([str(t) for t in texts]), 0


def _shifted(n: int) -> MemoryStore:
    """n chunks, one in 40 repeating an earlier text, stored with the seed's shift."""
    texts = [f"paragraph {i} on topic {i % 997}: " + "lorem " * 4 for i in range(n)]
    for i in range(40, n, 40):
        texts[i] = texts[i - 37]
    ids = [f"doc-{i:08d}" for i in range(n)]
    fresh = FAST64.embed(texts)
    return MemoryStore(ids, fresh[held_source(texts)], texts)


def _traced_peak(tmp_path: Path, n: int) -> int:
    store = _shifted(n)
    gc.collect()
    tracemalloc.start()
    try:
        r = api.repair(store, out=tmp_path / f"fixed-{n}", embedder=_Fast(), check=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert r.reading == "skip_repeat" and r.chunks == n and r.ways.get("moved", 0) > n // 2
    return peak


@pytest.mark.slow  # about 25 s: two repairs of 10,000 and 40,000 chunks under tracemalloc
def test_a_repair_holds_no_vector_text_or_metadata_per_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mend, "ROWS_LISTED", 1000)  # the JSON's rows are bounded
    n = 10_000
    _traced_peak(tmp_path, 500)  # imports and first-call caches are not the repair's memory
    small, large = _traced_peak(tmp_path, n), _traced_peak(tmp_path, 4 * n)
    per_chunk = (large - small) / (3 * n)
    assert per_chunk <= PER_CHUNK, (
        f"repair allocates {per_chunk:.0f} bytes a chunk ({small / 1e6:.1f} MB at {n}, "
        f"{large / 1e6:.1f} MB at {4 * n}); at most {PER_CHUNK} may stay in memory"
    )


def test_small_batches_give_the_same_copy_and_send_each_text_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from indexcheck.commands.repair import rows as rows_module
    from indexcheck.stores.files.store import write_vectors_file
    from tests.builders.repeat_corpus import hash_embed, repeat_corpus, seed_bug_vectors
    from tests.commands.repair.helpers import CountingEmbedder, target_rows, write_chunks

    c = repeat_corpus(200, 20)
    src = tmp_path / "index.parquet"
    write_vectors_file(src, c.ids, seed_bug_vectors(c.texts, hash_embed(32)), c.texts)
    texts = list(c.texts)
    texts[10] = texts[150] = "a text changed since, now in two scan batches"
    chunks = write_chunks(tmp_path / "chunks.jsonl", c.ids, texts)
    got = {}
    for scan in (4096, 16):  # one scan batch, then 13: vectors fetched from other batches
        monkeypatch.setattr(rows_module, "SCAN_ROWS", scan)
        emb = CountingEmbedder(32)
        out = tmp_path / f"fixed-{scan}"
        r = api.repair(f"parquet:{src}", out=out, chunks=chunks, embedder=emb, check=False)
        assert len(emb.sent) == len(set(emb.sent)) == r.texts_embedded  # each text once
        assert r.reasons.get("text_changed") == 2
        got[scan] = target_rows(out)
    assert got[16]["ids"] == got[4096]["ids"] == c.ids and got[16]["texts"] == texts
    assert np.array_equal(got[16]["vectors"], got[4096]["vectors"])
    clean = HashEmbedder(32).embed(texts)
    assert np.abs(got[16]["vectors"] - clean).max() <= 1e-6
