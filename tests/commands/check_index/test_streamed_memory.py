"""check-index --all keeps no per-chunk array in memory but a status byte and a cosine.

The ids, their keys and the 128-bit text hashes used to stay in memory for the whole run,
about 95 bytes a chunk (1.4 GB at 10 million chunks); they now live on disk beside the fresh
vectors (``commands/check_index/stream/chunk_spill.py``). Checked two ways: the Python memory the
streamed check allocates (tracemalloc: numpy arrays and Python objects) grows by at most
``PER_CHUNK`` bytes a chunk from n to 4n, and (slow) the peak RSS of ``indexcheck
check-index --all --store parquet:...`` grows by at most ``RSS_PER_CHUNK`` bytes a chunk.
The store is opened without its id map (see :mod:`.test_all_reads_the_store_in_its_order`):
its build held 24 bytes a row for a moment, 18 MB of the 30 bytes a chunk allowed here at
800,000 chunks,
and a CI run under load failed at 267 -> 285 MB. The lookups that do not take the fast path
(a store in another order than the chunks, two ids sharing a 64-bit key) give the in-memory
check's result.
"""

from __future__ import annotations

import gc
import os
import shutil
import statistics
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from indexcheck.commands.check_index import CheckIndexSettings, check_index
from indexcheck.commands.check_index.stream import check as check_stream
from indexcheck.commands.check_index.stream import chunk_spill
from indexcheck.commands.check_index.stream.check import check_all
from indexcheck.commands.check_index.stream.scratch import cosine_figures
from indexcheck.errors import DataFileError
from indexcheck.inputs.corpus import corpus_from_pairs
from indexcheck.testing import HashEmbedder, MemoryStore
from tests.commands.check_index.test_streamed import _rows, planted
from tests.commands.diff_index.test_memory import peak_rss_mb
from tests.fast_hooks import FAST16

#: today 5 (status byte, float32 cosine) and 5 more for a moment; 95 before the spill
PER_CHUNK = 16
RSS_PER_CHUNK = 30


def _chunks(n: int) -> tuple[list[str], list[str]]:
    ids = [f"doc-{i:08d}" for i in range(n)]
    texts = [f"paragraph {i} on topic {i % 997}: " + "lorem " * 4 for i in range(n)]
    return ids, texts


def _traced_peak(n: int) -> int:
    ids, texts = _chunks(n)
    store = MemoryStore(ids, FAST16.embed(texts), texts)
    corpus = corpus_from_pairs(ids, texts)
    gc.collect()
    tracemalloc.start()
    try:
        result = check_all(CheckIndexSettings(), store, FAST16, corpus)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.ok and result.checked == n
    return peak


def test_streamed_check_holds_no_per_chunk_ids_keys_or_hashes(monkeypatch) -> None:
    monkeypatch.setattr(check_stream, "JSON_ROWS_LIMIT", 1000)  # the JSON rows are bounded
    monkeypatch.setattr(chunk_spill, "FLUSH", 1 << 16)  # and so are the spill's buffers
    n = 25_000
    _traced_peak(500)  # imports and first-call caches are not the check's memory
    small, large = _traced_peak(n), _traced_peak(4 * n)
    per_chunk = (large - small) / (3 * n)
    assert per_chunk <= PER_CHUNK, (
        f"the streamed check allocates {per_chunk:.0f} bytes a chunk ({small / 1e6:.1f} MB at "
        f"{n}, {large / 1e6:.1f} MB at {4 * n}); at most {PER_CHUNK} may stay in memory"
    )


def _shuffled_store(ids, texts, stored):  # type: ignore[no-untyped-def]
    """The rows in another order, and two ids that are no chunk's (orphans)."""
    ids, texts = [*ids, "orphan-a", "orphan-b"], [*texts, "gone a", "gone b"]
    stored = np.vstack([stored, stored[:2]])
    perm = np.random.default_rng(3).permutation(len(ids))
    return MemoryStore([ids[i] for i in perm], stored[perm], [texts[i] for i in perm])


@pytest.mark.parametrize("weak_keys", [False, True])
def test_a_store_in_another_order_gives_the_in_memory_result(monkeypatch, weak_keys) -> None:
    """Every lookup goes through the fenced sorted keys; with ``weak_keys`` the first key
    has 8 values, so each lookup walks a run of ids sharing it."""
    monkeypatch.setattr(chunk_spill, "FENCE", 4)
    if weak_keys:
        strong = chunk_spill.id_key_pairs

        def weak(ids):  # type: ignore[no-untyped-def]
            k1, k2 = strong(ids)
            return k1 & np.uint64(0xE000000000000000), k2

        monkeypatch.setattr(chunk_spill, "id_key_pairs", weak)
    ids, texts, stored = planted()
    corpus = corpus_from_pairs(ids, texts)
    store = _shuffled_store(ids, texts, stored)
    streamed = check_all(CheckIndexSettings(block=64, window=4), store, HashEmbedder(32), corpus)
    in_memory = check_index(CheckIndexSettings(only=ids, window=4), store, HashEmbedder(32), corpus)
    assert _rows(streamed) == _rows(in_memory)
    assert streamed.counts == in_memory.counts and not streamed.ok
    # the in-memory check of ``only`` chunk ids does not scan the store for orphans
    orphans = [f for f in streamed.findings if f.kind == "orphan_vector"]
    assert [f.chunk_ids for f in orphans] == [["orphan-a", "orphan-b"]]
    assert [f for f in streamed.findings if f.kind != "orphan_vector"] == in_memory.findings
    assert streamed.below_threshold == in_memory.below_threshold
    assert streamed.min_cosine == pytest.approx(in_memory.min_cosine, abs=1e-6)
    assert streamed.median_cosine == pytest.approx(in_memory.median_cosine, abs=1e-6)


@pytest.mark.parametrize("m", [1, 2, 7, 1000, 1001])
def test_the_cosine_figures_equal_those_of_the_float64_copy(m: int) -> None:
    """min, median and below-threshold count from the float32 cosines (NaN: not compared)
    are exactly what check_result gave on a float64 copy of the compared ones."""
    rng = np.random.default_rng(m)
    cos = (1 - rng.random(m) ** 3 * 0.01).astype(np.float32)
    cos[rng.random(m) < 0.2] = np.nan
    cos[0] = 0.999  # at the threshold
    kept = cos[~np.isnan(cos)].astype(np.float64)
    want = (float(kept.min()), float(np.median(kept)), int((kept < 0.999).sum()))
    assert cosine_figures(cos, 0.999) == want
    assert cosine_figures(np.full(3, np.nan, np.float32), 0.999) == (None, None, 0)


def test_an_id_twice_among_the_chunks_is_refused_with_both_rows() -> None:
    ids, texts = _chunks(300)
    ids[250] = ids[40]
    store = MemoryStore(ids, FAST16.embed(texts), texts)
    twice = r"chunk id 'doc-00000040' appears twice in .* \(rows 41 and 251\)"
    with pytest.raises(DataFileError, match=twice):
        check_all(CheckIndexSettings(block=64), store, FAST16, None)


def _write(folder: Path, n: int) -> str:
    from tests.fast_hooks import FAST64

    folder.mkdir(parents=True, exist_ok=True)
    schema = pa.schema([("id", pa.string()), ("text", pa.string())])
    vschema = pa.schema([("id", pa.string()), ("vector", pa.list_(pa.float32(), 64))])
    with (
        pq.ParquetWriter(folder / "chunks.parquet", schema) as cw,
        pq.ParquetWriter(folder / "vectors.parquet", vschema) as vw,
    ):
        for start in range(0, n, 100_000):
            ids, texts = _chunks(min(n, start + 100_000))
            ids, texts = ids[start:], texts[start:]
            vec = FAST64.embed(texts).astype(np.float32)
            cw.write_table(pa.table({"id": ids, "text": texts}, schema=schema))
            arr = pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), 64)
            vw.write_table(pa.Table.from_arrays([pa.array(ids), arr], schema=vschema))
    return f"parquet:{folder / 'vectors.parquet'}"


def _check_rss(folder: Path, n: int) -> float:
    """One run's peak RSS (MB); the files are written once a size, the cache every run."""
    if (folder / "vectors.parquet").exists():
        spec = f"parquet:{folder / 'vectors.parquet'}"
    else:
        spec = _write(folder, n)
    shutil.rmtree(folder / "cache", ignore_errors=True)  # a fresh id-map cache every run
    exe = Path(sys.executable).with_name("indexcheck")
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "INDEXCHECK_CACHE_DIR": str(folder / "cache"), "INDEXCHECK_QUIET": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
    args = [str(exe), "check-index", "--all", "--store", spec, "--chunks",
            str(folder / "chunks.parquet"), "--embedder", "py:tests.fast_hooks:FAST64"]  # fmt: skip
    rss, done = peak_rss_mb(args, env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"PASS {n}/{n}" in done.stdout
    return rss


@pytest.mark.slow
def test_check_index_all_rss_does_not_grow_with_the_chunks(tmp_path: Path) -> None:
    n = 200_000
    # the median of three runs a size: the peak of one run moves by up to 30 MB either way
    # here (measured from one build: 255, 256, 271, 275 and 284 MB at 200k; 275-277 MB at
    # 800k), more than the bound itself at 600k chunks (18 MB)
    small = statistics.median(_check_rss(tmp_path / "n", n) for _ in range(3))
    large = statistics.median(_check_rss(tmp_path / "4n", 4 * n) for _ in range(3))
    per_chunk = (large - small) * 2**20 / (3 * n)
    print(f"check-index --all: {small:.0f} MB at {n}, {large:.0f} MB at {4 * n}")
    assert per_chunk <= RSS_PER_CHUNK, (
        f"peak RSS {small:.0f} MB at {n} chunks, {large:.0f} MB at {4 * n}: "
        f"{per_chunk:.0f} bytes a chunk stay in memory (at most {RSS_PER_CHUNK})"
    )
