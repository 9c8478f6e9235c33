"""``check-index --all --engine ray --cache FILE`` stopped halfway resumes: the driver reads
the blocks, sends only the cache's misses to the embedding actors and commits each block as
it comes back, so a driver killed (SIGKILL) halfway keeps what it committed; the rerun
embeds only the rest (what the first run lost is at most the blocks that were in flight, two
per actor) and its rows and findings are the local engine's; a third run with the same
cache sends no text beyond the cache's audit sample."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.engines import ray_hash_embedder
from tests.engines.conftest import WORKER_NODES
from tests.engines.ray_counting_embedder import counted
from tests.engines.runs import Run, check_all

pytestmark = pytest.mark.slow  # the package's cluster

N, BLOCK = 1200, 40
EMBEDDER = "py:tests.engines.ray_counting_embedder:embed"
#: blocks the driver keeps in flight with three one-CPU nodes (RayEngine.inflight: 2 per CPU)
IN_FLIGHT = 2 * WORKER_NODES


def _pair(folder: Path) -> list[str]:
    ids = [f"c{i}" for i in range(N)]
    texts = [f"chunk {i} about topic {i % 17}" for i in range(N)]
    vec = ray_hash_embedder.embed(texts)
    vec[500:520] = vec[502:522].copy()  # a shift
    vec[900] = -vec[900]  # a stale vector
    arr = pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), vec.shape[1])
    pq.write_table(pa.table({"id": ids, "vector": arr}), folder / "vectors.parquet")
    pq.write_table(pa.table({"id": ids, "text": texts}), folder / "chunks.parquet")
    return ["--store", f"parquet:{folder / 'vectors.parquet'}", "--chunks",
            str(folder / "chunks.parquet"), "--embedder", EMBEDDER]  # fmt: skip


def _ray_cli(
    args: list[str], folder: Path, address: str, name: str, sleep: float = 0
) -> tuple[list[str], dict[str, str]]:
    """The CLI's ``check-index --all --engine ray --cache`` command and its environment; the
    embedder counts its texts in ``<name>.count`` and sleeps ``sleep`` s a call."""
    env = {**os.environ, "PYTHONPATH": os.getcwd(), "INDEXCHECK_QUIET": "1",
           "INDEXCHECK_TEST_COUNTER_FILE": str(folder / f"{name}.count"),
           "INDEXCHECK_TEST_EMBED_SLEEP": str(sleep)}  # fmt: skip
    cmd = [sys.executable, "-c", "from indexcheck.cli import main; main()", "check-index",
           *args, "--all", "--block-size", str(BLOCK), "--cache", str(folder / "c.sqlite"),
           "--engine", "ray", "--ray-address", address, "--rows", str(folder / f"{name}.parquet"),
           "--json", str(folder / f"{name}.json")]  # fmt: skip
    return cmd, env


def _complete(
    args: list[str], folder: Path, address: str, name: str, local: Run
) -> tuple[dict[str, Any], int]:
    """A whole Ray run's --json report and the texts its embedder got, once its exit code,
    rows, findings and counts are checked to be the local run's."""
    cmd, env = _ray_cli(args, folder, address, name)
    out = subprocess.run(cmd, env=env, capture_output=True)
    assert out.returncode == local[0], out.stderr.decode()[-2000:]
    report = json.loads((folder / f"{name}.json").read_text())
    assert pq.read_table(folder / f"{name}.parquet").to_pylist() == local[1]
    assert report["findings"] == local[2]["findings"]
    assert report["counts"] == local[2]["counts"]
    return report, counted(folder / f"{name}.count")


def test_a_ray_run_killed_halfway_resumes_from_the_cache(nodes, tmp_path) -> None:
    args = _pair(tmp_path)
    local = check_all(args, tmp_path, "local", block=BLOCK)
    assert local[0] == 1 and local[2]["counts"]["shift"] == 20
    first = tmp_path / "first.count"
    cmd, env = _ray_cli(args, tmp_path, nodes.address, "first", sleep=0.1)
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while counted(first) < N // 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    time.sleep(0.5)  # a block an actor had already started is counted too
    done_before = counted(first)
    assert N // 2 <= done_before < N, proc.stderr.read().decode()[-2000:]  # type: ignore[union-attr]

    report, embedded = _complete(args, tmp_path, nodes.address, "second", local)
    audited = report["manifest"]["cache_audit"]["texts"]
    probes = report["diagnosis_embeddings"]  # the prefix probes, which the cache does not keep
    assert probes == local[2]["diagnosis_embeddings"]
    lost = embedded - audited - probes - (N - done_before)  # embedded by both runs
    assert 0 <= lost <= IN_FLIGHT * BLOCK, (lost, done_before, audited)
    assert audited >= 3

    report, embedded = _complete(args, tmp_path, nodes.address, "third", local)
    audited = report["manifest"]["cache_audit"]["texts"]
    assert audited > 0 and report["manifest"]["embedding"]["texts"] == audited + probes
    # only the driver's audit and prefix probes (as on the local engine): no block was sent
    assert embedded == audited + probes
