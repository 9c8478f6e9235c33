"""compare-ann against an independent computation: FAISS HNSW, exact backends, LanceDB
IVF_PQ, the Upstash emulator (nprobe=1, local ground truth and its vector cache), ties,
the efSearch sweep, and the CLI's exit codes and JSON."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import click
import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import Group
from indexcheck.cli.compare_ann import compare_ann_cmd
from indexcheck.commands.compare_ann import (
    CompareAnnSettings,
    QuerySet,
    compare_ann,
    load_query_vectors,
    read_questions,
    sample_queries,
    sweep_ann,
)
from indexcheck.errors import DataFileError, InputError, SpecError
from indexcheck.stores import StoreOptions, open_store
from indexcheck.stores import sweep_spec as with_param
from indexcheck.stores.base import Fetched, StoreInfo, VectorBatch, VectorStore
from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.stores.upstash.store import TOKEN_ENV
from indexcheck.testing import HashEmbedder, MemoryStore
from tests.emulators.upstash_emulator import UpstashEmulator

N, D = 3000, 32


def unit_data(n: int = N, d: int = D, seed: int = 0) -> tuple[list[str], np.ndarray]:
    x = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return [f"c{i:05d}" for i in range(n)], x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def faiss_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    ids, x = unit_data()
    root = tmp_path_factory.mktemp("faiss")
    write_faiss_folder(root / "hnsw", ids, x, index_factory="HNSW8")
    write_faiss_folder(root / "flat", ids, x)
    write_faiss_folder(root / "flat_l2", ids, x * 3, metric="l2")
    return {"hnsw": root / "hnsw", "flat": root / "flat", "flat_l2": root / "flat_l2"}


# -- the independent computation ---------------------------------------------------------


def brute(x: np.ndarray, q: np.ndarray, family: str) -> np.ndarray:
    """float64 (q, n) similarity, higher is nearer, straight from the definitions."""
    x64, q64 = x.astype(np.float64), q.astype(np.float64)
    if family == "cos":
        x64 = x64 / np.linalg.norm(x64, axis=1, keepdims=True)
        q64 = q64 / np.linalg.norm(q64, axis=1, keepdims=True)
    if family == "l2":
        return -(((q64[:, None, :] - x64[None, :, :]) ** 2).sum(-1))
    return q64 @ x64.T


def independent(
    store: VectorStore,
    ids: list[str],
    x: np.ndarray,
    q: np.ndarray,
    family: str,
    k: int,
    depths: Sequence[int],
) -> dict[int, tuple[int, int, int]]:
    """fetch depth -> (recall hits, recall slots, best-chunk misses), the retriever's
    recipe written out query by query: ask f, keep the k nearest by exact similarity."""
    S = brute(x, q, family)
    pos = {v: i for i, v in enumerate(ids)}
    ordered = -np.sort(-S, axis=1)
    out = {}
    for f in depths:
        _, I = store.query(q, f)
        hits = misses = 0
        for r in range(len(q)):
            tol = 1e-5 * max(1.0, abs(ordered[r, 0]), float(q[r] @ q[r]) if family != "cos" else 1)
            cand = list(dict.fromkeys(v for v in I[r] if v is not None))
            if f > k:
                cand = sorted(cand, key=lambda v, r=r: -S[r, pos[v]])
            kept = np.array([S[r, pos[v]] for v in cand[:k]])
            hits += min(k, int((kept >= ordered[r, k - 1] - tol).sum()))
            misses += int(not (kept >= ordered[r, 0] - tol).any())
        out[f] = (hits, k * len(q), misses)
    return out


def assert_matches(result: Any, expected: dict[int, tuple[int, int, int]]) -> None:
    for f, (hits, slots, misses) in expected.items():
        row = result.row(f)
        assert (row.recall_hits, row.recall_slots, row.best_misses) == (hits, slots, misses), f
        assert row.recall_at_k == pytest.approx(hits / slots)
        assert row.best_miss_rate == pytest.approx(misses / row.queries)
        lo, hi = row.best_miss_rate_interval
        assert lo <= row.best_miss_rate <= hi


# -- FAISS -------------------------------------------------------------------------------


def test_faiss_hnsw_low_ef_search_matches_independent_and_misses(
    faiss_dirs: dict[str, Path],
) -> None:
    ids, x = unit_data()
    store = open_store(f"faiss:{faiss_dirs['hnsw']}?efSearch=4")
    qs = sample_queries(store, 200, seed=1)
    assert qs.source == "sampled" and qs.labels[0].startswith("near:")
    cos = np.sum(qs.vectors * x[[ids.index(lab[5:]) for lab in qs.labels]], axis=1)
    cos /= np.linalg.norm(qs.vectors, axis=1)
    np.testing.assert_allclose(cos, 1 / np.sqrt(2), atol=1e-5)  # far from an exact hit
    r = compare_ann(CompareAnnSettings(k=4, fetch=(4, 10, 20)), store, qs)
    assert r.ground_truth == "backend_exact" and r.family == "dot"
    assert_matches(r, independent(store, ids, x, qs.vectors, "dot", 4, (4, 10, 20)))
    assert r.row(4).best_miss_rate > 0.05
    assert r.recommended_fetch is None and not r.ok
    assert "none of the fetch depths tried (4, 10, 20)" in r.recommendation
    # FAISS HNSW stops its search by efSearch, whatever k is asked: depth cannot help
    assert r.row(20).best_misses == r.row(4).best_misses
    assert "fetching deeper does not help this index" in r.recommendation
    worst = r.worst_queries[0]
    assert worst["missed_at_fetch"] == [4, 10, 20] and worst["exact_best_id"] in ids
    # displacement is 0 exactly where the final list is the exact top-k
    assert r.row(4).mean_rank_displacement > 0


def test_faiss_hnsw_sweep_of_ef_search_reaches_the_target(faiss_dirs: dict[str, Path]) -> None:
    ids, x = unit_data()
    spec = f"faiss:{faiss_dirs['hnsw']}?efSearch=4"
    store = open_store(spec)
    qs = sample_queries(store, 200, seed=2)
    base = compare_ann(CompareAnnSettings(k=4, fetch=(4, 10)), store, qs)
    assert base.truth is not None
    sweep = sweep_ann(
        # 200 queries can show 3% (1 miss: 95% upper bound 2.8%), not 1% (PASS is the bound)
        CompareAnnSettings(k=4, fetch=(4, 10), target=0.03, sweep=("efSearch", [4, 16, 128])),
        lambda v: open_store(with_param(spec, "efSearch", v)),
        qs,
        base.truth,
    )
    rates = [run["by_fetch"][0]["best_miss_rate"] for run in sweep["runs"]]
    assert rates[0] == base.row(4).best_miss_rate
    assert rates[0] > rates[1] >= rates[2] and rates[2] <= 0.01
    best = sweep["runs"][2]
    assert best["recommended_fetch"] == 4 and best["value"] == 128
    swept = open_store(with_param(spec, "efSearch", 128))
    (hits, slots, misses) = independent(swept, ids, x, qs.vectors, "dot", 4, (4,))[4]
    assert misses / len(qs.labels) <= 0.01  # the recommendation holds independently
    assert best["by_fetch"][0]["best_misses"] == misses


@pytest.mark.parametrize("which", ["flat", "flat_l2"])
def test_exact_faiss_has_no_misses_at_any_depth(faiss_dirs: dict[str, Path], which: str) -> None:
    store = open_store(f"faiss:{faiss_dirs[which]}")
    qs = sample_queries(store, 100, seed=3)
    r = compare_ann(CompareAnnSettings(k=4), store, qs)
    assert [row.fetch for row in r.by_fetch] == [4, 10, 20, 50]
    for row in r.by_fetch:
        assert (row.best_misses, row.recall_at_k, row.mean_rank_displacement) == (0, 1.0, 0.0)
    assert r.recommended_fetch == 4 and r.ok and r.worst_queries == []
    assert r.family == ("dot" if which == "flat" else "l2")
    r = compare_ann(CompareAnnSettings(k=10), store, qs)  # the default depths adapt to k
    assert [row.fetch for row in r.by_fetch] == [10, 20, 50]


def test_qdrant_local_is_exact(tmp_path: Path) -> None:
    from tests.builders import qdrant as qb

    ids = [str(i) for i in range(400)]
    x = np.random.default_rng(4).standard_normal((400, 16)).astype(np.float32)
    spec = qb.build(tmp_path, ids, x, None, "cosine")
    store = open_store(spec, StoreOptions(trust_pickle=True))
    try:
        q = np.random.default_rng(5).standard_normal((60, 16)).astype(np.float32)
        r = compare_ann(CompareAnnSettings(k=4, fetch=(4, 10)), store, q)
        assert r.ground_truth == "backend_exact" and r.family == "cos"
        assert [row.best_misses for row in r.by_fetch] == [0, 0]
        assert [row.recall_at_k for row in r.by_fetch] == [1.0, 1.0]
    finally:
        store.close()


# -- engines with real approximate search ------------------------------------------------


def test_lancedb_ivf_pq_misses_match_and_over_fetch_reaches_the_target(tmp_path: Path) -> None:
    from tests.builders import lancedb as lb

    ids, x = unit_data(2000, 32, seed=6)
    spec = lb.build(
        tmp_path, ids, x, None, "cosine", index="IVF_PQ", num_partitions=8, num_sub_vectors=4
    )
    store = open_store(spec)
    try:
        qs = sample_queries(store, 200, seed=7)
        depths = (4, 10, 20, 50)
        # 200 queries can show a 3% target (PASS needs the interval's bound within it)
        r = compare_ann(CompareAnnSettings(k=4, fetch=depths, target=0.03), store, qs)
        assert r.ground_truth == "backend_exact" and r.store["approximate"]
        expected = independent(store, ids, x, qs.vectors, "cos", 4, depths)
        assert_matches(r, expected)
        assert r.row(4).best_misses > 0  # PQ distances miss real best chunks
        assert r.row(50).recall_at_k > r.row(4).recall_at_k
        assert r.recommended_fetch is not None and r.ok
        assert expected[r.recommended_fetch][2] / 200 <= 0.03
        assert r.row(r.recommended_fetch).best_miss_rate_interval[1] <= 0.03
        earlier = [f for f in depths if f < r.recommended_fetch]
        assert all(r.row(f).best_miss_rate_interval[1] > 0.03 for f in earlier)
    finally:
        store.close()


class Counting:
    """A store wrapper counting the vectors read through iter_vectors and fetch calls."""

    def __init__(self, inner: VectorStore) -> None:
        self.inner = inner
        self.spec, self.has_exact = inner.spec, inner.has_exact
        self.iter_rows = 0
        self.fetch_calls = 0

    def info(self) -> StoreInfo:
        return self.inner.info()

    def fingerprint(self) -> str:
        return self.inner.fingerprint()

    def fetch(self, ids: Sequence[str]) -> Fetched:
        self.fetch_calls += 1
        return self.inner.fetch(ids)

    def iter_vectors(self, batch: int = 1000) -> Iterator[VectorBatch]:
        for b in self.inner.iter_vectors(batch):
            self.iter_rows += len(b.ids)
            yield b

    def query(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.inner.query(vectors, k)

    def exact_query(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.inner.exact_query(vectors, k)

    def close(self) -> None:
        self.inner.close()


def test_upstash_nprobe_1_local_ground_truth_and_vector_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.builders import upstash as ub

    ids, x = unit_data(1500, 16, seed=8)
    x = x * np.random.default_rng(9).uniform(0.5, 2, (1500, 1)).astype(np.float32)
    with UpstashEmulator(token="tok", nlist=8, nprobe=1) as emu:
        monkeypatch.setenv(TOKEN_ENV, "tok")
        spec = ub.build(tmp_path, ids, x, None, "cosine", emulator=emu)
        cache = tmp_path / "vcache"
        results = []
        for _ in range(2):
            store = Counting(open_store(spec))
            qs = sample_queries(store, 150, seed=10, cache_dir=cache)
            r = compare_ann(CompareAnnSettings(k=4, fetch=(4, 20), cache_dir=cache), store, qs)
            results.append((r, store.iter_rows, store.fetch_calls))
        (r1, rows1, fetch1), (r2, rows2, fetch2) = results
        assert r1.ground_truth == "local_exact" and r1.family == "cos"
        # run 1 reads the store once (sampling fills the cache, the exact search reads it);
        # run 2 reads nothing through iter_vectors; re-ranking still fetches its candidates
        assert rows1 == 1500 and rows2 == 0
        assert r1.vector_cache is not None and r2.vector_cache is not None
        assert r1.vector_cache["hit"] is True and r2.vector_cache["hit"] is True
        assert fetch1 == fetch2 > 0
        assert [asdict_row(x) for x in r1.by_fetch] == [asdict_row(x) for x in r2.by_fetch]
        folder = Path(r1.vector_cache["path"])
        cached = np.load(folder / "vectors.npy")
        cached_ids = [
            json.loads(line) for line in (folder / "ids.jsonl").read_text().split("\n")[:-1]
        ]
        order = [ids.index(i) for i in cached_ids]
        np.testing.assert_array_equal(cached, x[order])
        assert json.loads((folder / "meta.json").read_text())["rows"] == 1500
        expected = independent(open_store(spec), ids, x, qs.vectors, "cos", 4, (4, 20))
        assert_matches(r2, expected)
        assert r2.row(4).best_misses > 0  # one partition of eight: real misses
        # partitions do not change with depth: over-fetching cannot find what was not probed
        assert r2.row(20).best_misses == r2.row(4).best_misses
        assert not r2.ok


def asdict_row(row: Any) -> dict[str, Any]:
    d = dict(vars(row))
    d.pop("ann_seconds")
    return d


# -- ties ---------------------------------------------------------------------------------


class Twins(MemoryStore):
    """Every vector stored twice (a_i, b_i); the normal query answers the exact result
    list shifted by ``drop`` positions, optionally with every id swapped for its twin."""

    def __init__(self, base: np.ndarray, drop: int = 0, swap: bool = False) -> None:
        n = len(base)
        ids = [f"a{i}" for i in range(n)] + [f"b{i}" for i in range(n)]
        super().__init__(ids, np.concatenate([base, base]), metric="ip")
        self.twin = {f"a{i}": f"b{i}" for i in range(n)} | {f"b{i}": f"a{i}" for i in range(n)}
        self.drop, self.swap = drop, swap

    def query(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        Dx, Ix = self.exact_query(vectors, k + self.drop)
        I = Ix[:, self.drop :]
        if self.swap:
            I = np.vectorize(lambda v: self.twin.get(v), otypes=[object])(I)
        return Dx[:, self.drop :], I


def test_a_result_tied_with_the_exact_best_or_kth_is_not_a_miss() -> None:
    base = np.random.default_rng(11).standard_normal((300, 16)).astype(np.float32)
    q = np.random.default_rng(12).standard_normal((80, 16)).astype(np.float32)
    r = compare_ann(CompareAnnSettings(k=4, fetch=(4, 8)), Twins(base, swap=True), q)
    for row in r.by_fetch:
        assert (row.best_misses, row.recall_at_k, row.mean_rank_displacement) == (0, 1.0, 0.0)
    # dropping the first result leaves its twin first: still no best-chunk miss; the 4th
    # kept result is the 5th exact one, below the tied pair at ranks 3-4: recall 3/4
    r = compare_ann(CompareAnnSettings(k=4, fetch=(4,)), Twins(base, drop=1), q)
    assert r.row(4).best_misses == 0
    assert r.row(4).recall_at_k == pytest.approx(0.75)
    # without twins, the same drop misses every best chunk
    store = MemoryStore([f"a{i}" for i in range(300)], base, metric="ip")
    store.query = lambda v, k: tuple(a[:, 1:] for a in store.exact_query(v, k + 1))  # type: ignore[method-assign]
    r = compare_ann(CompareAnnSettings(k=4, fetch=(4,)), store, q)
    assert r.row(4).best_misses == 80 and r.row(4).recall_at_k == pytest.approx(0.75)


# -- inputs --------------------------------------------------------------------------------


def test_query_inputs_and_their_errors(tmp_path: Path) -> None:
    (tmp_path / "q.jsonl").write_text(
        '{"id": "q1", "question": "a?"}\n\n{"id": 2, "question": "b?"}\n'
    )
    assert read_questions(tmp_path / "q.jsonl") == (["q1", "2"], ["a?", "b?"])
    (tmp_path / "q.csv").write_text("id,question\nx,what is it?\n")
    assert read_questions(tmp_path / "q.csv") == (["x"], ["what is it?"])
    (tmp_path / "bad.jsonl").write_text('{"id": 1}\n')
    with pytest.raises(DataFileError, match="needs a non-empty 'id' and 'question'"):
        read_questions(tmp_path / "bad.jsonl")
    np.save(tmp_path / "v.npy", np.ones((3, 4), dtype=np.float64))
    qs = load_query_vectors(tmp_path / "v.npy")
    assert qs.vectors.dtype == np.float32 and qs.labels == ["0", "1", "2"]
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(
        pa.table({"id": ["u", "v"], "embedding": [[1.0, 0.0], [0.0, 1.0]]}), tmp_path / "v.parquet"
    )
    qs = load_query_vectors(tmp_path / "v.parquet")
    assert qs.labels == ["u", "v"] and qs.vectors.shape == (2, 2)
    with pytest.raises(DataFileError, match="does not exist"):
        load_query_vectors(tmp_path / "none.npy")
    store = MemoryStore(["a", "b"], np.eye(2, 4, dtype=np.float32))
    with pytest.raises(InputError, match="smaller than k=4"):
        compare_ann(CompareAnnSettings(k=4, fetch=(2, 10)), store, np.ones((1, 4), np.float32))
    with pytest.raises(InputError, match="dimension 2"):
        compare_ann(
            CompareAnnSettings(), store, QuerySet(np.ones((1, 2), np.float32), ["x"], "vectors")
        )
    with pytest.raises(SpecError, match="no search parameter"):
        with_param("faiss:/x", "ef", 3)
    with pytest.raises(SpecError, match="only faiss"):
        with_param("chroma:/x?collection=c", "ef", 3)


# -- CLI -----------------------------------------------------------------------------------


def invoke(*args: str) -> tuple[int, str, str]:
    group = Group(name="indexcheck", commands={"compare-ann": compare_ann_cmd})
    r = CliRunner().invoke(group, ["compare-ann", *args])
    return r.exit_code, r.stdout, r.stderr


def test_cli_exit_0_with_json_and_report(faiss_dirs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    r = CliRunner().invoke(
        compare_ann_cmd,
        [
            "--store",
            f"faiss:{faiss_dirs['flat']}",
            "--queries",
            "50",
            "--json",
            str(out),
            "--report",
            str(tmp_path / "rep"),
            "--vector-cache",
            str(tmp_path / "vc"),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "CANNOT_FAIL the check cannot fail here" in r.stdout  # a flat index searches exactly
    data = json.loads(out.read_text())
    for key in (
        "k",
        "queries",
        "by_fetch",
        "recommended_fetch",
        "worst_queries",
        "ground_truth",
        "manifest",
        "target",
        "recommendation",
    ):
        assert key in data, key
    assert data["k"] == 4 and data["queries"] == 50 and data["recommended_fetch"] == 4
    assert data["ground_truth"] == "backend_exact"
    row = data["by_fetch"][0]
    assert {
        "fetch",
        "recall_at_k",
        "recall_at_k_interval",
        "best_miss_rate",
        "best_miss_rate_interval",
        "mean_rank_displacement",
    } <= set(row)
    assert row["best_miss_rate_interval"][0] == 0.0 and row["best_miss_rate_interval"][1] > 0
    assert data["manifest"]["command"] == "compare-ann" and data["manifest"]["index_fingerprint"]
    assert (tmp_path / "rep" / "compare-ann.png").stat().st_size > 1000
    assert "compare-ann.png" in (tmp_path / "rep" / "compare-ann.md").read_text()
    assert not (tmp_path / "vc").exists()  # a local FAISS index is never copied to the cache


def test_cli_sweep_that_reaches_the_target_is_the_verdict(
    faiss_dirs: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "r.json"
    code, stdout, _ = invoke(
        "--store",
        f"faiss:{faiss_dirs['hnsw']}?efSearch=2",
        "--queries",
        "100",
        "-k",
        "4",
        "--fetch",
        "4,10",
        "--target",
        "0.04",  # 0 misses in 100 queries: 95% upper bound 3.7%
        "--sweep",
        "efSearch=2,64",
        "--json",
        str(out),
        "--report",
        str(tmp_path / "rep"),
    )
    # as configured no depth reaches the target, but efSearch=64 does: that is the verdict
    assert code == 0
    assert "PASS set efSearch=64 and fetch 4" in stdout
    assert "efSearch=64: best-chunk miss" in stdout
    data = json.loads(out.read_text())
    assert "as configured (efSearch=2) no fetch depth tried reaches it" in data["recommendation"]
    assert data["recommended_fetch"] is None and data["worst_queries"]
    assert data["recommended_setting"] == {"efSearch": 64, "fetch": 4}
    runs = data["sweep"]["runs"]
    assert [run["value"] for run in runs] == [2, 64]
    # efSearch=2 again, through a re-opened store and the shared ground truth: same misses
    assert [x["best_misses"] for x in runs[0]["by_fetch"]] == [
        x["best_misses"] for x in data["by_fetch"]
    ]
    assert runs[1]["recommended_fetch"] == 4
    assert runs[1]["by_fetch"][0]["best_miss_rate"] < data["by_fetch"][0]["best_miss_rate"]


def test_cli_questions_and_query_vectors(tmp_path: Path) -> None:
    texts = [f"note {i} about topic {i % 7}" for i in range(200)]
    ids = [f"n{i}" for i in range(200)]
    write_faiss_folder(tmp_path / "kb", ids, HashEmbedder(32).embed(texts))
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(
        "".join(json.dumps({"id": f"q{i}", "question": texts[i]}) + "\n" for i in range(20))
    )
    out = tmp_path / "r.json"
    code, _, err = invoke(
        "--store",
        f"faiss:{tmp_path / 'kb'}",
        "--questions",
        str(qfile),
        "--embedder",
        "py:indexcheck.testing:HASH32",
        "--json",
        str(out),
    )
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["query_source"] == "questions" and data["queries"] == 20
    assert data["manifest"]["embedder"]["model_id"] == "hash:32"
    np.save(tmp_path / "qv.npy", HashEmbedder(32).embed(texts[:5]))
    code, _, err = invoke(
        "--store",
        f"faiss:{tmp_path / 'kb'}",
        "--query-vectors",
        str(tmp_path / "qv.npy"),
        "--json",
        str(out),
    )
    assert code == 0, err
    assert json.loads(out.read_text())["query_source"] == "vectors"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-k", "4", "--fetch", "2,10"], "smaller than k=4"),
        (["--fetch", "4,x"], "comma-separated integers"),
        (["--sweep", "efSearch"], "PARAM=V1,V2"),
        (["--sweep", "ef=2,4"], "no search parameter ef"),
        (["--query-vectors", "missing.npy"], "does not exist"),
        (["--queries", "5", "--questions", "q.jsonl"], "cannot be combined"),
    ],
)
def test_cli_exit_2_on_bad_input(
    faiss_dirs: dict[str, Path], args: list[str], message: str
) -> None:
    code, _, err = invoke("--store", f"faiss:{faiss_dirs['flat']}", *args)
    assert code == 2
    assert message in err


def test_cli_direct_invocation_usage_error_is_exit_2(faiss_dirs: dict[str, Path]) -> None:
    r = CliRunner().invoke(
        compare_ann_cmd,
        [
            "--store",
            f"faiss:{faiss_dirs['flat']}",
            "--questions",
            "a.jsonl",
            "--query-vectors",
            "b.npy",
        ],
    )
    assert r.exit_code == 2 and "cannot be combined" in r.stderr
    assert isinstance(compare_ann_cmd, click.Command) and compare_ann_cmd.name == "compare-ann"
