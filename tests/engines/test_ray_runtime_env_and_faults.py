"""--engine ray on a real multi-node cluster that has only Ray: the user's ``py:`` embedder
reaches the workers through the job's runtime_env (INDEXCHECK_RAY_RUNTIME_ENV, a
``working_dir`` the driver uploads), the stored vectors of a JSON Lines and a LanceDB store
are read and compared on the workers, and a worker process killed halfway leaves the rows
and the manifest's counts as the local engine's (Ray retries the lost block once).

Each run joins the cluster itself (``--ray-address``): Ray takes a local ``working_dir``
only at ``ray.init``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.engines.runs import check_all, same_result

pytestmark = pytest.mark.slow

N, D = 1200, 32

#: a hashing embedder; with a KILL_MARKER path set, the worker process (not the driver)
#: that embeds its KILL_AT-th block kills itself with SIGKILL, once (the marker file first)
EMBEDDER = """
import hashlib, os, signal
import numpy as np
calls = 0
def embed(texts):
    global calls
    calls += 1
    marker = os.environ.get("INDEXCHECK_TEST_KILL_MARKER")
    worker = str(os.getpid()) != os.environ.get("INDEXCHECK_TEST_DRIVER_PID")
    at = int(os.environ.get("INDEXCHECK_TEST_KILL_AT", "0"))
    if marker and worker and calls == at and not os.path.exists(marker):
        open(marker, "w").write(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    out = np.empty((len(texts), 32), np.float32)
    for i, t in enumerate(texts):
        seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little")
        out[i] = np.random.default_rng(seed).standard_normal(32)
    return out
"""


@pytest.fixture
def only_in_working_dir(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """``py:wd_only_embedder:embed``: importable here and, through the runtime_env's
    working_dir, on the workers, and nowhere else."""
    wd = tmp_path / "wd"
    wd.mkdir()
    (wd / "wd_only_embedder.py").write_text(EMBEDDER)
    monkeypatch.syspath_prepend(str(wd))
    monkeypatch.setenv("INDEXCHECK_RAY_RUNTIME_ENV", json.dumps({"working_dir": str(wd)}))
    yield "py:wd_only_embedder:embed"
    sys.modules.pop("wd_only_embedder", None)


def _corpus() -> tuple[list[str], list[str], np.ndarray]:
    import wd_only_embedder  # type: ignore[import-not-found]

    ids = [f"c{i}" for i in range(N)]
    texts = [f"chunk {i} about topic {i % 17}" for i in range(N)]
    vec = wd_only_embedder.embed(texts)
    wd_only_embedder.calls = 0
    return ids, texts, vec


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _spy(monkeypatch) -> tuple[list[str], list[int]]:  # type: ignore[no-untyped-def]
    from indexcheck.engines.ray.engine import RayEngine, RemoteFresh

    compared: list[str] = []
    pulled: list[int] = []
    real, real_block = RayEngine.compare_on_workers, RemoteFresh._block

    def spy(self, embedder, source, compare, block):  # type: ignore[no-untyped-def]
        compared.append(compare.store)
        return real(self, embedder, source, compare, block)

    def pull(self, j):  # type: ignore[no-untyped-def]
        pulled.append(j)
        return real_block(self, j)

    monkeypatch.setattr(RayEngine, "compare_on_workers", spy)
    monkeypatch.setattr(RemoteFresh, "_block", pull)
    return compared, pulled


def test_a_py_embedder_only_in_the_working_dir_runs_on_the_workers_jsonl_store(
    nodes, only_in_working_dir, tmp_path, monkeypatch
) -> None:
    ids, texts, vec = _corpus()
    vec[300:340] = vec[301:341].copy()  # a shift
    vec[900] = -vec[900]  # a stale vector
    _jsonl(
        tmp_path / "v.jsonl",
        [{"id": i, "vector": v.tolist()} for i, v in zip(ids, vec, strict=True)],
    )
    _jsonl(tmp_path / "c.jsonl", [{"id": i, "text": t} for i, t in zip(ids, texts, strict=True)])
    store = f"jsonl:{tmp_path / 'v.jsonl'}"
    args = ["--store", store, "--chunks", str(tmp_path / "c.jsonl")]
    args += ["--embedder", only_in_working_dir]
    local = check_all(args, tmp_path, "local", rows="jsonl")
    assert local[0] == 1 and local[2]["counts"]["shift"] == 40
    compared, pulled = _spy(monkeypatch)
    same_result(local, check_all(args, tmp_path, "ray", nodes.address, rows="jsonl"))
    assert compared == [store] and pulled == []  # compared there, and searched there too


def test_a_clean_lancedb_store_is_compared_on_the_workers_and_no_fresh_vector_travels(
    nodes, only_in_working_dir, tmp_path, monkeypatch
) -> None:
    pytest.importorskip("lancedb")
    from tests.builders.lancedb import build

    ids, texts, vec = _corpus()
    store = build(tmp_path, ids, vec, None)
    _jsonl(tmp_path / "c.jsonl", [{"id": i, "text": t} for i, t in zip(ids, texts, strict=True)])
    args = ["--store", store, "--chunks", str(tmp_path / "c.jsonl")]
    args += ["--embedder", only_in_working_dir]
    local = check_all(args, tmp_path, "local", rows="jsonl")
    assert local[0] == 0
    compared, pulled = _spy(monkeypatch)
    same_result(local, check_all(args, tmp_path, "ray", nodes.address, rows="jsonl"))
    assert compared == [store] and pulled == []


def test_a_worker_killed_halfway_gives_the_same_rows_and_counts_each_block_once(
    nodes, only_in_working_dir, tmp_path, monkeypatch
) -> None:
    ids, texts, vec = _corpus()
    vec[500:520] = vec[502:522].copy()
    _jsonl(tmp_path / "c.jsonl", [{"id": i, "text": t} for i, t in zip(ids, texts, strict=True)])
    import pyarrow as pa
    import pyarrow.parquet as pq

    arr = pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), D)
    pq.write_table(pa.table({"id": ids, "vector": arr}), tmp_path / "v.parquet")
    args = ["--store", f"parquet:{tmp_path / 'v.parquet'}", "--chunks", str(tmp_path / "c.jsonl")]
    args += ["--embedder", only_in_working_dir]
    local = check_all(args, tmp_path, "local", rows="jsonl")
    marker = tmp_path / "killed"
    monkeypatch.setenv("INDEXCHECK_TEST_KILL_MARKER", str(marker))
    monkeypatch.setenv("INDEXCHECK_TEST_DRIVER_PID", str(os.getpid()))
    monkeypatch.setenv("INDEXCHECK_TEST_KILL_AT", "3")  # a worker's third block of twelve
    remote = check_all(args, tmp_path, "ray", nodes.address, rows="jsonl")
    assert marker.exists()  # a worker process died halfway through the run
    same_result(local, remote)
