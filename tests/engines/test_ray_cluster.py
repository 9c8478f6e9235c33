"""check-index --all --engine ray on a real multi-node Ray cluster on this machine (the
package's, conftest.py).

The default model is opened on each worker from its spec (it does not pickle); the rows and
findings equal the local engine's on a shifted LangChain FAISS index (texts read here, blocks
sent to the actor pool) and on a Parquet pair (chunks read, embedded and compared with the
stored vectors on the workers by Ray Data). A
hosted embedder behind the loopback emulator never has more than --concurrency requests in
flight across the cluster, and one 429's Retry-After holds every worker.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from tests.builders.framework_corpus import framework_corpus, shifted_vectors
from tests.builders.langchain_indexes import build_faiss
from tests.emulators.mistral_emulator import MistralEmulator, expected_vector

pytestmark = pytest.mark.slow


def _check(args: list[str], out: Path, engine: str) -> tuple[int, Any, Any, str]:
    rows, report = out / f"rows-{engine}.parquet", out / f"{engine}.json"
    full = ["check-index", *args, "--all", "--rows", str(rows), "--json", str(report)]
    r = CliRunner().invoke(cli, [*full, "--engine", engine])
    payload = json.loads(report.read_text()) if report.exists() else None
    table = pq.read_table(rows).to_pylist() if rows.exists() else None
    return r.exit_code, table, payload, r.output


def _same(local: tuple[int, Any, Any, str], remote: tuple[int, Any, Any, str]) -> None:
    assert remote[0] == local[0], remote[3]
    assert remote[1] == local[1]
    assert remote[2]["findings"] == local[2]["findings"]
    assert remote[2]["counts"] == local[2]["counts"]


def test_default_model_on_a_shifted_langchain_faiss_index(ray_cluster, tmp_path) -> None:
    built = build_faiss(tmp_path, "shifted")
    args = ["--store", built.spec, "--trust-pickle"]  # its texts: read here, blocks sent
    local = _check(args, tmp_path, "local")
    assert local[0] == 1 and any(f["kind"] == "shift" for f in local[2]["findings"])
    _same(local, _check(args, tmp_path, "ray"))


def _parquet_pair(folder: Path) -> list[str]:
    c = framework_corpus()
    vec = shifted_vectors(c.texts).astype(np.float32)
    arr = pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), vec.shape[1])
    pq.write_table(pa.table({"id": c.ids, "vector": arr}), folder / "vectors.parquet")
    pq.write_table(pa.table({"id": c.ids, "text": c.texts}), folder / "chunks.parquet")
    return [f"parquet:{folder / 'vectors.parquet'}", str(folder / "chunks.parquet")]


def test_default_model_on_a_parquet_pair_is_read_and_compared_on_the_workers(
    ray_cluster, tmp_path, monkeypatch
) -> None:
    from indexcheck.engines.ray.engine import RayEngine

    store, chunks = _parquet_pair(tmp_path)
    args = ["--store", store, "--chunks", chunks, "--block-size", "16"]
    local = _check(args, tmp_path, "local")
    assert local[0] == 1
    compared: list[str] = []
    real = RayEngine.compare_on_workers

    def spy(self, embedder, source, compare, block):  # type: ignore[no-untyped-def]
        compared.append(compare.store)
        return real(self, embedder, source, compare, block)

    monkeypatch.setattr(RayEngine, "compare_on_workers", spy)
    _same(local, _check(args, tmp_path, "ray"))
    assert compared == [store]  # Ray Data read the chunks and compared them on the workers


def test_a_model_the_workers_cannot_import_is_exit_2_naming_the_runtime_env(
    ray_cluster, tmp_path, monkeypatch
) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "only_here_hook.py").write_text(
        "import numpy as np\ndef embed(texts):\n    return np.ones((len(texts), 384), np.float32)\n"
    )
    monkeypatch.syspath_prepend(str(hooks))  # the driver sees it; the workers do not
    store, chunks = _parquet_pair(tmp_path)
    args = ["--store", store, "--chunks", chunks, "--embedder", "py:only_here_hook:embed"]
    code, _rows, _payload, output = _check(args, tmp_path, "ray")
    assert code == 2, output
    assert "a Ray worker cannot import" in output and "only_here_hook" in output
    assert "runtime_env" in output and "Traceback" not in output
    sys.modules.pop("only_here_hook", None)


def test_hosted_embedder_is_paced_across_the_cluster(ray_cluster, tmp_path, monkeypatch) -> None:
    c = framework_corpus()
    vec = np.stack([expected_vector(t) for t in c.texts])
    arr = pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), vec.shape[1])
    pq.write_table(pa.table({"id": c.ids, "vector": arr, "text": c.texts}), tmp_path / "v.parquet")
    store = f"parquet:{tmp_path / 'v.parquet'}"
    with MistralEmulator(api_key="k") as emu:
        monkeypatch.setenv("MISTRAL_API_KEY", "k")
        monkeypatch.setenv("MISTRAL_SERVER_URL", emu.url)
        emu.delay_s = 0.15
        emu.fail(429, times=1, retry_after=2)
        args = ["--store", store, "--embedder", "mistral", "--block-size", "4"]
        args += ["--concurrency", "2"]
        code, _rows, _payload, output = _check(args, tmp_path, "ray")
        assert code == 0, output
        log = [r for r in emu.requests if r["path"] == "/v1/embeddings"]
        assert len(log) >= len(c.texts) // 4
        assert emu.max_in_flight <= 2  # three actors, one gate of two slots
        answered = log[0]["t"] + emu.delay_s  # the 429 answered the first request
        # once the gate knew (a moment after the answer), no worker sent a request until
        # its Retry-After had passed
        after = [r["t"] for r in log[1:] if r["t"] > answered + 0.3]
        assert after and min(after) >= answered + 2 - 0.1
