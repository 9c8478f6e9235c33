"""diff-index's re-embedded new texts and compare-ann's exact ground truth take --engine ray
through the CLI, with the same result as the local engine on a small index."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.testing import HashEmbedder

pytestmark = pytest.mark.slow


def _untimed(data: Any) -> Any:
    """``data`` without the ``*_seconds`` figures (wall clock differs run to run)."""
    if isinstance(data, dict):
        return {k: _untimed(v) for k, v in data.items() if not k.endswith("_seconds")}
    if isinstance(data, list):
        return [_untimed(v) for v in data]
    return data


def _both(args: list[str], tmp_path: Path, monkeypatch) -> tuple[Any, Any]:  # type: ignore[no-untyped-def]
    from indexcheck.engines import RayEngine

    used: list[str] = []
    real = RayEngine.__init__

    def spy(self, *a, **k):  # type: ignore[no-untyped-def]
        used.append("ray")
        real(self, *a, **k)

    monkeypatch.setattr(RayEngine, "__init__", spy)
    out = []
    for engine in ("local", "ray"):
        report = tmp_path / f"{engine}.json"
        r = CliRunner().invoke(cli, [*args, "--engine", engine, "--json", str(report)])
        assert r.exit_code in (0, 1), r.output
        data = json.loads(report.read_text())
        data.pop("manifest")
        out.append((r.exit_code, _untimed(data)))
    assert used == ["ray"]
    return out[0], out[1]


def test_diff_index_new_texts_on_ray_equal_the_local_engine(
    ray_cluster, tmp_path, monkeypatch
) -> None:
    ids = [f"c{i}" for i in range(150)]
    texts = [f"Fact number {i} about subject {i % 9}." for i in range(150)]
    vecs = HashEmbedder(32).embed(texts)
    write_faiss_folder(tmp_path / "old", ids, vecs, texts)
    added = [f"Added fact {k} about topic {k % 7}." for k in range(300)]
    good = HashEmbedder(32).embed(added)
    good[3] = good[4]  # holds another new text's vector
    good[[10, 250]] = HashEmbedder(32).embed(["edited 10", "edited 250"])  # stale
    new_ids = ids + [f"new{k}" for k in range(300)]
    write_faiss_folder(tmp_path / "new", new_ids, np.vstack([vecs, good]), texts + added)
    args = [
        "diff-index",
        "--old",
        f"faiss:{tmp_path / 'old'}",
        "--new",
        f"faiss:{tmp_path / 'new'}",
    ]
    args += ["--embedder", "py:indexcheck.testing:HASH32", "--sample-new", "300"]
    local, remote = _both(args, tmp_path, monkeypatch)
    assert local[0] == 1 and remote == local
    kinds = {f["kind"] for f in local[1]["findings"]}
    assert {"shift", "stale_vector"} <= kinds


def test_compare_ann_exact_truth_on_ray_equals_the_local_engine(
    ray_cluster, tmp_path, monkeypatch
) -> None:
    x = np.random.default_rng(0).standard_normal((3000, 24)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    ids = [f"c{i:05d}" for i in range(3000)]
    write_faiss_folder(tmp_path / "hnsw", ids, x, index_factory="HNSW8")
    arr = pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), x.shape[1])
    pq.write_table(pa.table({"id": ids, "vector": arr}), tmp_path / "true.parquet")
    args = ["compare-ann", "--store", f"faiss:{tmp_path / 'hnsw'}", "--queries", "60"]
    args += ["--truth-store", f"parquet:{tmp_path / 'true.parquet'}"]
    local, remote = _both(args, tmp_path, monkeypatch)
    assert remote == local
    assert local[1]["ground_truth"] == "true_exact"  # the exact search over blocks
