"""Streamed check-index --all: equal to the in-memory check, bounded JSON, resumable, engines."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.commands.check_index import CheckIndexSettings, check_index
from indexcheck.commands.check_index.stream import check as check_stream
from indexcheck.commands.check_index.stream.check import check_all
from indexcheck.commands.kit.stats import fault_rate_upper, sample_size_for
from indexcheck.inputs.corpus import corpus_from_pairs
from indexcheck.stores.files.store import write_vectors_file
from indexcheck.testing import HashEmbedder, MemoryStore, positional_cache_bug
from tests.commands.check_index.test_planted_faults import make_corpus


def planted(n: int = 600, d: int = 32) -> tuple[list[str], list[str], np.ndarray]:
    """A positional-cache shift after two repeats, three stale vectors and a far shift."""
    ids, texts = make_corpus(n, {150: 20, 400: 30})
    fresh = HashEmbedder(d).embed(texts)
    stored = positional_cache_bug(texts, fresh)
    for p in (7, 222, 555):
        stored[p] = HashEmbedder(d).embed([texts[p] + " (edited)"])[0]
    stored[90] = fresh[300]  # holds a chunk far outside any window
    return ids, texts, stored


def _rows(r):  # type: ignore[no-untyped-def]
    return [(c.id, c.status, c.holds_vector_of, c.offset) for c in r.chunks]


@pytest.mark.parametrize("block", [7, 4096])
def test_streamed_all_equals_the_in_memory_check(block: int) -> None:
    ids, texts, stored = planted()
    corpus = corpus_from_pairs(ids, texts)
    store = MemoryStore(ids, stored, texts)
    streamed = check_all(CheckIndexSettings(block=block, window=4), store, HashEmbedder(32), corpus)
    in_memory = check_index(CheckIndexSettings(only=ids, window=4), store, HashEmbedder(32), corpus)
    assert _rows(streamed) == _rows(in_memory)
    assert streamed.counts == in_memory.counts and not streamed.ok
    a = [c.cosine for c in streamed.chunks]
    b = [c.cosine for c in in_memory.chunks]
    assert np.allclose(np.asarray(a, float), np.asarray(b, float), atol=1e-6)
    assert [f.to_dict() if hasattr(f, "to_dict") else f for f in streamed.findings] == (
        in_memory.findings
    )
    by_id = {c.id: c for c in streamed.chunks}
    assert by_id[ids[90]].holds_vector_of == ids[300]  # found by the global search


def test_json_rows_are_capped_but_parquet_holds_every_row(tmp_path, monkeypatch) -> None:
    ids, texts, stored = planted()
    monkeypatch.setattr(check_stream, "JSON_ROWS_LIMIT", 100)
    rows = tmp_path / "rows.parquet"
    r = check_all(
        CheckIndexSettings(rows=rows), MemoryStore(ids, stored, texts), HashEmbedder(32), None
    )
    assert r.chunks_truncated and r.checked == 600
    assert all(c.status != "ok" for c in r.chunks) and len(r.chunks) == 600 - r.counts["ok"]
    t = pq.read_table(rows).to_pylist()
    assert [x["id"] for x in t] == ids
    assert {x["id"]: x["status"] for x in t if x["status"] != "ok"} == {
        c.id: c.status for c in r.chunks
    }


def test_fault_rate_bound_is_exact_clopper_pearson() -> None:
    assert fault_rate_upper(0, 100) == pytest.approx(0.02951, abs=1e-5)  # "< 3.0%"
    assert fault_rate_upper(1, 100) == pytest.approx(0.04656, abs=1e-5)
    assert fault_rate_upper(0, 0) is None and fault_rate_upper(5, 5) == 1.0
    assert sample_size_for(0.01) == 299 and sample_size_for(0.03) == 99


def test_sample_targets_the_chunk_after_each_repeat_and_bounds_on_random_rows() -> None:
    ids, texts = make_corpus(1000, {100: 5, 600: 9})
    fresh = HashEmbedder(32).embed(texts)
    store = MemoryStore(ids, fresh, texts)
    r = check_index(
        CheckIndexSettings(sample=100), store, HashEmbedder(32), corpus_from_pairs(ids, texts)
    )
    assert r.ok and r.checked == 100
    targeted = {c.id for c in r.chunks if c.targeted}
    assert targeted == {ids[101], ids[601]}
    assert all(c.targeted is False for c in r.chunks if c.id not in targeted)
    assert r.fault_rate_upper_95 == pytest.approx(fault_rate_upper(0, 98))
    r = check_index(
        CheckIndexSettings(sample=None, max_fault_rate=0.01),
        store,
        HashEmbedder(32),
        corpus_from_pairs(ids, texts),
    )
    assert r.checked == 299 + 2 and r.fault_rate_upper_95 is not None
    assert r.fault_rate_upper_95 < 0.01


def test_cli_prints_the_bound_and_refuses_bad_combinations(small_kb, tmp_path) -> None:
    base = ["check-index", "--store", f"faiss:{small_kb['good']}", "--chunks"]
    base += [str(small_kb["chunks"]), "--embedder", "py:indexcheck.testing:HASH32"]
    r = CliRunner().invoke(cli, [*base, "--sample", "100", "--json", str(tmp_path / "r.json")])
    assert r.exit_code == 0, r.output
    assert "fault rate < " in r.output
    payload = json.loads((tmp_path / "r.json").read_text())
    assert 0 < payload["fault_rate_upper_95"] < 0.04
    r = CliRunner().invoke(cli, [*base, "--rows", str(tmp_path / "x.parquet")])
    assert r.exit_code == 2 and "--rows needs --all" in r.output


def test_engine_ray_without_ray_is_exit_2_with_the_install_line(small_kb, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    args = ["check-index", "--store", f"faiss:{small_kb['good']}", "--chunks"]
    args += [str(small_kb["chunks"]), "--all", "--engine", "ray"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2
    assert "pip install 'indexcheck[ray]'" in r.output


def test_engine_ray_at_an_address_nothing_listens_on_is_exit_3_at_once(small_kb) -> None:
    """ray.init waits minutes (GCS retries) for a head that is not there; the run says so at
    once instead, before any work."""
    import socket
    import time

    with socket.socket() as s:  # a loopback port that was free a moment ago
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = ["check-index", "--store", f"faiss:{small_kb['good']}", "--chunks"]
    args += [str(small_kb["chunks"]), "--all", "--engine", "ray"]
    args += [
        "--embedder",
        "py:indexcheck.testing:HASH32",
        "--ray-address",
        f"127.0.0.1:{port}",
    ]
    started = time.monotonic()
    r = CliRunner().invoke(cli, args)
    assert time.monotonic() - started < 30
    assert r.exit_code == 3, r.output
    assert f"cannot reach the Ray cluster at 127.0.0.1:{port}" in r.output
    assert "check --ray-address" in r.output


COUNTER = """
import os, time
import numpy as np
from indexcheck.testing import HashEmbedder
_h = HashEmbedder(32)
def embed(texts):
    with open(os.environ["COUNTER_FILE"], "a") as f:
        f.write(f"{len(texts)}\\n")
    time.sleep(0.15)
    return _h.embed(texts)
embed.dimension = 32
"""


def _embedded(counter: Path) -> int:
    if not counter.exists():
        return 0
    return sum(int(x) for x in counter.read_text().split())


def test_a_killed_run_resumes_from_the_cache_losing_at_most_one_block(tmp_path) -> None:
    n, block = 3000, 250
    ids, texts = make_corpus(n, {})
    (tmp_path / "counting_emb.py").write_text(textwrap.dedent(COUNTER))
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text(
        "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in zip(ids, texts, strict=True))
    )
    write_vectors_file(tmp_path / "vectors.parquet", ids, HashEmbedder(32).embed(texts))
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.getcwd()}",
           "INDEXCHECK_QUIET": "1"}  # fmt: skip
    cmd = [sys.executable, "-c", "from indexcheck.cli import main; main()", "check-index",
           "--store", f"parquet:{tmp_path / 'vectors.parquet'}", "--chunks", str(chunks),
           "--all", "--embedder", "py:counting_emb:embed", "--cache", str(tmp_path / "c.sqlite"),
           "--block-size", str(block)]  # fmt: skip
    first = tmp_path / "first.count"
    proc = subprocess.Popen(cmd, env={**env, "COUNTER_FILE": str(first)})
    deadline = time.monotonic() + 60
    while _embedded(first) < n // 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = _embedded(first)
    assert n // 2 <= done_before < n
    second = tmp_path / "second.count"
    report = tmp_path / "second.json"
    out = subprocess.run([*cmd, "--json", str(report)], env={**env, "COUNTER_FILE": str(second)},
                         capture_output=True)  # fmt: skip
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    audited = json.loads(report.read_text())["manifest"]["cache_audit"]["texts"]  # about 1%
    assert audited >= 3
    re_embedded = _embedded(second) - audited - (n - done_before)  # the first run's texts
    assert 0 <= re_embedded <= block


@pytest.mark.slow
def test_ray_engine_gives_the_local_result(ray_cluster, tmp_path) -> None:
    from indexcheck.embedders.cache import CachedEmbedder, EmbeddingCache
    from indexcheck.engines import LocalEngine, RayEngine

    ids, texts, stored = planted()
    corpus = corpus_from_pairs(ids, texts)
    store = MemoryStore(ids, stored, texts)
    here = HashEmbedder(32)
    local = check_all(CheckIndexSettings(block=64), store, here, corpus, engine=LocalEngine())
    engine = RayEngine()
    cached = CachedEmbedder(HashEmbedder(32), EmbeddingCache(tmp_path / "c.sqlite"))
    remote = check_all(CheckIndexSettings(block=64), store, cached, corpus, engine=engine)
    # what the workers embedded is counted on the driver (it was 0 before): each distinct
    # text at least once; a repeat whose first copy is still in flight may be sent again
    # (and the probes that test the unexplained chunks for another prefix, both sides)
    probes = local.diagnosis_embeddings
    assert probes == remote.diagnosis_embeddings
    assert len(set(texts)) + probes <= cached.stats.texts <= here.stats.texts
    assert here.stats.texts == len(texts) + probes
    assert cached.stats.requests > 0 and cached.stats.tokens > 0
    assert _rows(remote) == _rows(local) and remote.findings == local.findings
    a = np.asarray([c.cosine for c in remote.chunks], float)
    b = np.asarray([c.cosine for c in local.chunks], float)
    assert np.allclose(a, b, atol=1e-6, equal_nan=True)
    # the driver kept the cache: a second run sends no text to the cluster
    assert cached.split(texts)[1] == []
    assert list(engine.map(abs, [-1, 2, -3])) == [1, 2, 3]


@pytest.mark.slow
def test_exact_ground_truth_blocks_on_ray_merge_as_locally(ray_cluster) -> None:
    from indexcheck.commands.kit.exact import engine_scope, exact_topk
    from indexcheck.engines import RayEngine

    rng = np.random.default_rng(3)
    base = rng.standard_normal((5000, 24)).astype(np.float32)
    base[4000] = base[10]  # a tie across blocks: the vector seen first must win on both
    xq = rng.standard_normal((40, 24)).astype(np.float32)
    xq[0] = base[10]
    ids = [f"v{i}" for i in range(len(base))]

    def blocks():  # type: ignore[no-untyped-def]
        for s in range(0, len(base), 700):
            yield ids[s : s + 700], base[s : s + 700]

    for family in ("cos", "dot", "l2"):
        d_local, i_local = exact_topk(blocks(), xq, 10, family)
        with engine_scope(RayEngine()):
            d_ray, i_ray = exact_topk(blocks(), xq, 10, family)
        assert (i_ray == i_local).all() and np.allclose(d_ray, d_local, atol=1e-6)
    assert i_local[0, 0] == "v10"


def test_progress_bar_shows_done_total_on_a_terminal_and_is_quiet_otherwise(
    monkeypatch,
) -> None:
    import io

    from rich.console import Console

    from indexcheck.cli import progress as bars

    buf = io.StringIO()
    term = Console(file=buf, force_terminal=True, width=120)
    monkeypatch.setattr(bars, "err_console", term)
    monkeypatch.delenv("INDEXCHECK_QUIET", raising=False)
    with bars.progress_bars() as (_say, tick):
        tick("embedding", 0, 10)
        tick("embedding", 10, 10)
    assert "embedding" in buf.getvalue() and "10/10" in buf.getvalue()
    monkeypatch.setenv("INDEXCHECK_QUIET", "1")
    buf.truncate(0)
    with bars.progress_bars() as (_say, tick):
        tick("embedding", 5, 10)
    assert buf.getvalue().strip("\x00") == ""
