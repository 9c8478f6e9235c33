"""probe-scale against every real backend and each metric it offers: the probe names the
formula the backend reports, on unit-norm and (where the backend keeps them) raw vectors,
within a few dozen queries, without writing to the index."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.probe_scale import convert_threshold_cmd, probe_scale_cmd
from indexcheck.commands.probe_scale import CATALOGUE, probe_scale
from indexcheck.stores import StoreOptions, open_store
from tests.util import tree_digest

N, D = 200, 16


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))


def vectors(unit: bool, n: int = N) -> np.ndarray:
    x = np.random.default_rng(7).standard_normal((n, D)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True) if unit else 2 * x


def build(backend: str, root: Path, metric: str, unit: bool, n: int = N, **kw: Any) -> str:
    ids = [f"doc-{i:03d}" for i in range(n)]
    vecs = vectors(unit, n)
    if backend == "faiss":
        from indexcheck.stores.faiss.store import write_faiss_folder

        write_faiss_folder(root / "faiss", ids, vecs, metric=metric)
        return f"faiss:{root / 'faiss'}"
    if backend == "parquet":
        from indexcheck.stores.files.store import write_vectors_file

        write_vectors_file(root / "v.parquet", ids, vecs)
        return f"parquet:{root / 'v.parquet'}?metric={metric}"
    if backend == "qdrant":
        kw.setdefault("id_mode", "payload")
    builder = importlib.import_module(f"tests.builders.{backend}")
    spec: str = builder.build(root, ids, vecs, None, metric, **kw)
    return spec


def writes_seen(backend: str) -> int:
    if backend != "upstash":
        return 0
    from tests.builders.upstash import shared_emulator

    return len(shared_emulator().writes())


# backend, its metric name, the formula it reports, unit-norm vectors?
CASES = [
    ("faiss", "ip", "dot", True),
    ("faiss", "ip", "dot", False),
    ("faiss", "l2", "l2^2", True),
    ("faiss", "l2", "l2^2", False),
    ("parquet", "cosine", "cos", False),
    ("parquet", "ip", "dot", False),
    ("parquet", "l2", "l2^2", True),
    ("upstash", "cosine", "(1+cos)/2", True),
    ("upstash", "euclidean", "1/(1+l2^2)", True),
    ("upstash", "dot", "(1+dot)/2", True),
    ("upstash", "euclidean", "1/(1+l2^2)", False),
    ("pgvector", "cosine", "1-cos", True),
    ("pgvector", "l2", "l2", True),
    ("pgvector", "ip", "-dot", True),
    ("pgvector", "ip", "-dot", False),
    ("chroma", "cosine", "1-cos", True),
    ("chroma", "l2", "l2^2", True),
    ("chroma", "ip", "1-dot", True),
    ("chroma", "ip", "1-dot", False),
    ("qdrant", "cosine", "cos", True),
    ("qdrant", "dot", "dot", True),
    ("qdrant", "dot", "dot", False),
    ("qdrant", "l2", "l2", True),
    ("milvus", "cosine", "cos", True),
    ("milvus", "ip", "dot", True),
    ("milvus", "ip", "dot", False),
    ("milvus", "l2", "l2^2", True),
    ("lancedb", "cosine", "1-cos", True),
    ("lancedb", "l2", "l2^2", False),
    ("lancedb", "dot", "1-dot", True),
    ("lancedb", "dot", "1-dot", False),
]


@pytest.mark.parametrize(
    "backend, metric, formula, unit",
    CASES,
    ids=[f"{b}-{m}-{'unit' if u else 'raw'}" for b, m, _, u in CASES],
)
def test_probe_names_the_backends_formula(
    backend: str, metric: str, formula: str, unit: bool, tmp_path: Path
) -> None:
    root = tmp_path / "idx"
    root.mkdir()
    spec = build(backend, root, metric, unit)
    digest, writes = tree_digest(root), writes_seen(backend)
    store = open_store(spec, StoreOptions(trust_pickle=True))
    try:
        r = probe_scale(store)
        documented = store.info().score
    finally:
        store.close()
    assert r.ok, r.message
    assert (r.transform, r.equivalent, r.search) == (formula, [], "query")
    assert documented == formula  # the store's documentation agrees with the measurement
    assert r.higher_is_better is CATALOGUE[formula].higher_is_better
    assert r.normalized is unit
    assert r.queries_made == 16 and len(r.pairs) >= 100
    assert tree_digest(root) == digest and writes_seen(backend) == writes


def test_qdrant_normalises_cosine_vectors_so_they_count_as_unit(tmp_path: Path) -> None:
    store = open_store(build("qdrant", tmp_path, "cosine", unit=False), StoreOptions(True))
    r = probe_scale(store)
    store.close()
    assert (r.ok, r.transform, r.normalized, r.to_cosine_formula) == (True, "cos", True, "cos = s")


@pytest.mark.parametrize("index", ["ivfflat", None])
def test_pgvector_other_access_paths_report_the_same_scale(
    index: str | None, tmp_path: Path
) -> None:
    store = open_store(build("pgvector", tmp_path, "cosine", True, index=index))
    r = probe_scale(store, probes=8)
    store.close()
    assert (r.ok, r.transform, r.queries_made) == (True, "1-cos", 8)


def test_qdrant_manhattan_is_unknown_and_never_misnamed(tmp_path: Path) -> None:
    spec = build("qdrant", tmp_path, "l1", True)
    out = tmp_path / "l1.json"
    r = CliRunner().invoke(probe_scale_cmd, ["--store", spec, "--trust-pickle", "--json", str(out)])
    assert r.exit_code == 1, r.output
    assert "FAIL" in r.stdout and "no known formula explains the scores" in r.stdout
    data = json.loads(out.read_text())
    assert data["ok"] is False and data["transform"] is None and data["to_cosine"] is None
    assert data["higher_is_better"] is False  # from the order the results come back in
    assert [c["fits"] for c in data["candidates"]] == [False] * 5
    assert data["queries_made"] == 16 and data["manifest"]["store"]["metric"] == "Manhattan"


PQ_ROWS = 300  # LanceDB's PQ training wants 256 rows or more
PQ = {"num_partitions": 2, "num_sub_vectors": 4}


def test_lancedb_quantized_index_is_measured_on_its_exact_search(tmp_path: Path) -> None:
    spec = build("lancedb", tmp_path, "l2", True, PQ_ROWS, index="IVF_PQ", **PQ)
    store = open_store(spec)
    r = probe_scale(store)
    store.close()
    assert (r.ok, r.transform, r.search) == (True, "l2^2", "exact_query")
    assert r.approximate_residual is not None and r.approximate_residual > 1e-3
    assert r.queries_made == 32  # the normal search, then the exact one


def test_lancedb_indexed_cosine_is_not_named_when_its_two_searches_disagree(
    tmp_path: Path,
) -> None:
    # with an IVF index LanceDB's cosine distances come out near 2-2cos (quantized), while
    # its exact search gives 1-cos: the probe must not pick either
    spec = build("lancedb", tmp_path, "cosine", True, PQ_ROWS, index="IVF_PQ", **PQ)
    store = open_store(spec)
    r = probe_scale(store)
    store.close()
    assert not r.ok and r.transform is None
    assert "the exact search fits 1-cos" in r.message


def test_cli_on_upstash_and_the_threshold_of_the_veterinary_case(tmp_path: Path) -> None:
    spec = build("upstash", tmp_path, "cosine", True)
    r = CliRunner().invoke(probe_scale_cmd, ["--store", spec, "--probes", "12", "--json", "-"])
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    assert (data["transform"], data["to_cosine"], data["from_cosine"]) == (
        "(1+cos)/2",
        "cos = 2*s-1",
        "s = (1+cos)/2",
    )
    assert data["queries_made"] == 12 and data["manifest"]["store"]["backend"] == "upstash"
    assert "token" not in r.stdout.lower()
    r = CliRunner().invoke(convert_threshold_cmd, ["0.80", "--store", spec])
    assert r.exit_code == 0, r.stderr
    assert "0.8 on (1+cos)/2 (keep scores >= 0.8) = 0.6 on cos" in r.stdout
