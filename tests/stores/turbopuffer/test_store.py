"""The turbopuffer store against the loopback emulator (tests/emulators/turbopuffer_emulator.py),
through the official ``turbopuffer`` SDK, on namespaces LangChain's ``TurbopufferVectorStore``
wrote on its defaults (uuid4 ids, text in ``content``) and the SDK wrote as its docs show (text
in ``text``): the planted faults through the CLI, the score of each metric, compare-ann against
turbopuffer's own kNN, errors, and no write ever sent."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from indexcheck.commands.probe_scale import probe_scale
from indexcheck.errors import AuthError, InputError, MissingDependencyError, SpecError
from indexcheck.stores import open_store
from indexcheck.testing import HashEmbedder
from tests.emulators.turbopuffer_emulator import TurbopufferEmulator
from tests.store_contract import check_store_contract
from tests.util import documented_score

pytest.importorskip("turbopuffer")
pytest.importorskip("langchain_turbopuffer")

from tests.builders import turbopuffer as builder  # noqa: E402  (needs the SDK)
from tests.stores import planted_faults as planted  # noqa: E402
from tests.stores.planted_faults import EMBEDDER, N, check, chunks_file, corpus, lc, run  # noqa: E402

KEY = "tpuf_SECRET_key_0123456789"
READ_PATHS = {"/v2/namespaces/docs/query", "/v1/namespaces/docs/schema"}


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TURBOPUFFER_API_KEY", KEY)
    monkeypatch.delenv("TURBOPUFFER_REGION", raising=False)
    monkeypatch.delenv("TURBOPUFFER_BASE_URL", raising=False)
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("INDEXCHECK_VECTOR_CACHE", str(tmp_path / "vcache"))


@pytest.fixture
def emu() -> Iterator[TurbopufferEmulator]:
    with TurbopufferEmulator(api_key=KEY, exact=True) as e:
        yield e


# -- the contract and each metric's score ---------------------------------------------------
@pytest.mark.parametrize(
    ("metric", "score"), [("cosine_distance", "1-cos"), ("euclidean_squared", "l2^2")]
)
def test_contract_and_documented_score(emu: TurbopufferEmulator, metric: str, score: str) -> None:
    vecs = (np.random.default_rng(3).standard_normal((60, 8)) * 1.5).astype(np.float32)
    ids = [f"chunk-{i:03d}" for i in range(60)]
    builder.upsert(emu, "docs", ids, vecs, texts=[f"text {i}" for i in range(60)], metric=metric)
    with open_store(builder.spec(emu, "docs")) as store:
        check_store_contract(store, ids, vecs)
        info = store.info()
        assert (info.backend, info.metric, info.score, info.higher_is_better) == (
            "turbopuffer", metric, score, False)  # fmt: skip
        assert info.approximate and store.has_exact and not store.ordered
        assert store.fetch(ids[:2]).texts == ["text 0", "text 1"]
        queries = vecs[:5] + 0.2
        for D, I in (store.query(queries, 6), store.exact_query(queries, 6)):
            for qi in range(5):
                want = documented_score(score, vecs, queries[qi])
                rows = [ids.index(v) for v in I[qi]]
                np.testing.assert_allclose(D[qi], want[rows], rtol=1e-4, atol=1e-4)
                assert rows == list(np.argsort(want, kind="stable")[:6])
        with pytest.raises(InputError, match="at most 10000"):
            store.query(queries, 10001)
    bodies = [r.body for r in emu.requests if r.path.endswith("/query") and r.body.get("rank_by")]
    assert {b["rank_by"][1] for b in bodies if b["rank_by"][0] == "vector"} == {"ANN", "kNN"}


@pytest.mark.parametrize(
    ("metric", "formula"), [("cosine_distance", "1-cos"), ("euclidean_squared", "l2^2")]
)
def test_probe_scale_names_one_minus_cos_and_squared_l2(
    emu: TurbopufferEmulator, metric: str, formula: str
) -> None:
    vecs = (np.random.default_rng(7).standard_normal((200, 16)) * 2).astype(np.float32)
    builder.upsert(emu, "docs", [f"doc-{i:03d}" for i in range(200)], vecs, metric=metric)
    spec = builder.spec(emu, "docs")
    with open_store(spec) as store:
        r = probe_scale(store)
    assert r.ok, r.message
    assert r.transform == formula
    before = len(emu.writes())
    out = run("probe-scale", "--store", spec, "--json", "-")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["transform"] == formula
    assert len(emu.writes()) == before


# -- the planted faults, through the CLI, on a LangChain build ------------------------------
def langchain_build(emu: TurbopufferEmulator) -> planted.Build:
    """Build namespace 'docs' through LangChain's TurbopufferVectorStore on its defaults."""
    texts, metas = corpus()

    def build(embeddings: Any) -> tuple[str, list[str]]:
        ids = builder.langchain(emu, "docs", texts, metas, embeddings)
        return builder.spec(emu, "docs"), ids

    return build


def test_clean_langchain_namespace_passes_and_nothing_is_written(
    emu: TurbopufferEmulator, tmp_path: Path
) -> None:
    build = langchain_build(emu)
    seen: dict[str, int] = {}

    def counted(embeddings: Any) -> tuple[str, list[str]]:
        spec, ids = build(embeddings)
        assert all(len(i) == 36 for i in ids)  # LangChain's uuid4 ids
        seen.update(writes=len(emu.writes()), since=len(emu.requests))
        return spec, ids

    spec, ids, texts = planted.clean_passes(counted, tmp_path)  # texts from "content"
    _, metas = corpus()
    with open_store(spec) as store:  # read back with no mapping
        b = next(store.iter_vectors(batch=500))
        pos = ids.index(b.ids[0])
        assert b.texts is not None and b.texts[0] == texts[pos]
        assert b.metadata is not None and b.metadata[0] == metas[pos]
    assert len(emu.writes()) == seen["writes"]
    sent = emu.requests[seen["since"] :]
    assert {(q.method, q.path) for q in sent} <= {
        ("POST", p) if p.endswith("query") else ("GET", p) for p in READ_PATHS
    }
    assert all(not (q.body or {}).get(w) for q in sent for w in ("upsert_rows", "deletes"))


def test_every_command_reads_the_namespace_and_writes_nothing(
    emu: TurbopufferEmulator, tmp_path: Path
) -> None:
    texts, metas = corpus()
    ids = builder.langchain(emu, "docs", texts, metas, lc())
    builder.langchain(emu, "docs2", texts[:100], metas[:100], lc())
    chunks = chunks_file(tmp_path / "c.jsonl", ids, texts)
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(
        json.dumps({"id": f"q{i}", "question": texts[i], "expected": [ids[i]]}) + "\n"
        for i in range(0, N, 7)))  # fmt: skip
    writes, since = len(emu.writes()), len(emu.requests)
    spec, other = builder.spec(emu, "docs"), builder.spec(emu, "docs2")
    emb = ("--embedder", EMBEDDER)
    for args in (
        ("sweep-threshold", "--store", spec, "--questions", str(questions), *emb),
        ("diagnose", "--store", spec, "--questions", str(questions), "--chunks", str(chunks),
         *emb),
        ("compare-ann", "--store", spec, "--queries", "10", "-k", "5"),
        ("compare-ann", "--store", spec, "--queries", "10", "-k", "5",
         "--filter", '{"topic": "t1"}'),
        ("diff-index", "--old", spec, "--new", other),
    ):  # fmt: skip
        out = tmp_path / f"{args[0]}.json"
        r = run(*args, "--json", str(out))
        assert r.exit_code in (0, 1), (args[0], r.output)
        assert json.loads(out.read_text())["manifest"]["store"]["backend"] == "turbopuffer" or (
            args[0] == "diff-index"
        )
    assert len(emu.writes()) == writes
    assert all(q.method in ("GET", "POST") and (q.method == "GET" or q.path.endswith("/query"))
               for q in emu.requests[since:])  # fmt: skip


def test_positional_shift_is_told_as_one_story_from_chunks_positions(
    emu: TurbopufferEmulator, tmp_path: Path
) -> None:
    planted.shift_is_one_story(langchain_build(emu), tmp_path)


def test_stale_missing_and_orphan_are_found(emu: TurbopufferEmulator, tmp_path: Path) -> None:
    planted.stale_missing_and_orphan(langchain_build(emu), tmp_path)


def test_model_mismatch_is_named(emu: TurbopufferEmulator, tmp_path: Path) -> None:
    planted.model_mismatch(langchain_build(emu), tmp_path)


def test_nan_zero_and_short_vectors_are_found(emu: TurbopufferEmulator, tmp_path: Path) -> None:
    texts, metas = corpus()
    ids = [f"c{i:03d}" for i in range(N)]
    vecs = HashEmbedder(32).embed(texts)
    vecs[20] = 0.0  # a zero vector is a valid write
    builder.upsert(emu, "docs", ids, vecs, texts=texts)
    # turbopuffer refuses a vector of another length on write; NaN cannot travel in JSON:
    # both are planted in the emulator's storage, as a corrupted namespace would hold them
    with pytest.raises(Exception, match="dimension"):
        builder.upsert(emu, "docs", ["short"], np.ones((1, 8), np.float32))
    rows = emu.namespaces["docs"].rows
    rows["c030"]["vector"] = np.full(32, np.nan, np.float32)
    rows["c040"]["vector"] = rows["c040"]["vector"][:16].copy()
    r, data = check(builder.spec(emu, "docs"), chunks_file(tmp_path / "c.jsonl", ids, texts))
    assert r.exit_code == 1, r.output
    status = {c["id"]: c["status"] for c in data["chunks"] if c["status"] != "ok"}
    assert status == {"c020": "zero_vector", "c030": "non_finite", "c040": "dimension_mismatch"}


# -- compare-ann on the emulator's HNSW, against turbopuffer's own kNN ------------------------
def test_compare_ann_measures_the_graphs_misses_against_knn(tmp_path: Path) -> None:
    vecs = np.random.default_rng(11).standard_normal((800, 16)).astype(np.float32)
    with TurbopufferEmulator(api_key=KEY, m=6, ef=10) as emu:
        builder.upsert(emu, "docs", [f"v{i:04d}" for i in range(800)], vecs)
        writes = len(emu.writes())
        out = tmp_path / "ann.json"
        r = run("compare-ann", "--store", builder.spec(emu, "docs"), "--queries", "30", "-k", "10",
                "--json", str(out))  # fmt: skip
        assert r.exit_code in (0, 1), r.output
        data = json.loads(out.read_text())
        assert data["manifest"]["store"]["backend"] == "turbopuffer"
        recall = data["by_fetch"][0]["recall_at_k"]
        assert 0.3 < recall < 1.0  # real misses, measured against exact truth
        ranks = [
            r.body["rank_by"][1]
            for r in emu.requests
            if r.path.endswith("/query") and r.body.get("rank_by", [""])[0] == "vector"
        ]
        assert "kNN" in ranks and "ANN" in ranks  # the truth is turbopuffer's exhaustive search
        assert len(emu.writes()) == writes


# -- paging: a full read streams pages by id ------------------------------------------------
def test_a_full_read_pages_by_id_with_flat_memory(emu: TurbopufferEmulator) -> None:
    vecs = np.random.default_rng(1).standard_normal((250, 8)).astype(np.float32)
    ids = [f"p{i:04d}" for i in range(250)]
    builder.upsert(emu, "docs", ids[::-1], vecs[::-1])
    since = len(emu.requests)
    with open_store(builder.spec(emu, "docs", extra="batch=100")) as store:
        blocks = list(store.iter_vectors(batch=1000))
    assert [len(b.ids) for b in blocks] == [100, 100, 50]
    assert [i for b in blocks for i in b.ids] == ids  # id order, not write order
    pages = [
        r.body for r in emu.requests[since:] if r.body and r.body.get("rank_by") == ["id", "asc"]
    ]
    assert [p.get("filters") for p in pages] == [None, ["id", "Gt", "p0099"], ["id", "Gt", "p0199"]]
    assert all(p["top_k"] == 100 for p in pages)


# -- errors, the key, limits ------------------------------------------------------------------
def test_the_key_is_never_printed_and_a_refused_key_exits_3(
    emu: TurbopufferEmulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    builder.upsert(emu, "docs", ["a", "b"], np.eye(2, 32, dtype=np.float32))
    spec = builder.spec(emu, "docs")
    out = tmp_path / "r.json"
    r = run("probe-scale", "--store", spec, "--json", str(out))
    assert KEY not in r.output and KEY not in out.read_text()
    with open_store(spec) as store:
        assert KEY not in repr(store) + store.spec + str(store.info())
    monkeypatch.setenv("TURBOPUFFER_API_KEY", "tpuf_WRONG_key")
    r = run("check-index", "--store", spec, "--embedder", EMBEDDER)
    assert r.exit_code == 3 and "TURBOPUFFER_API_KEY" in r.output and "WRONG" not in r.output
    monkeypatch.delenv("TURBOPUFFER_API_KEY")
    r = run("check-index", "--store", spec, "--embedder", EMBEDDER)
    assert r.exit_code == 2 and "TURBOPUFFER_API_KEY is not set" in r.output


def test_429_is_retried_after_retry_after_and_404_names_the_namespace(
    emu: TurbopufferEmulator,
) -> None:
    builder.upsert(emu, "docs", ["a", "b"], np.eye(2, 8, dtype=np.float32))
    waits: list[float] = []
    from indexcheck.stores.params import StoreSpec
    from indexcheck.stores.turbopuffer.store import TurbopufferStore

    store = TurbopufferStore.from_spec(StoreSpec.parse(builder.spec(emu, "docs")),
                                       sleep=waits.append)  # fmt: skip
    store.info()
    emu.fail_next(2, 429, retry_after=0.25)
    assert store.fetch(["a"]).found.tolist() == [True]
    assert store.retries == 2 and waits == [0.25, 0.25]
    emu.fail_next(3, 503)
    with pytest.raises(Exception, match="failed after 2 retries"):
        store.fetch(["a"])
    store.close()
    with pytest.raises(InputError, match="not found.*namespace name"):
        open_store(builder.spec(emu, "nosuch")).info()
    r = run("check-index", "--store", builder.spec(emu, "nosuch"), "--embedder", EMBEDDER)
    assert r.exit_code == 2 and "nosuch" in r.output
    with pytest.raises(AuthError):
        with open_store(builder.spec(emu, "docs")) as s:
            emu.fail_next(1, 401)
            s.info()


def test_bad_specs_exit_2_before_any_request(emu: TurbopufferEmulator) -> None:
    for bad, match in (
        ("turbopuffer:https://gcp-us-central1.turbopuffer.com/docs", "namespace"),
        ("turbopuffer:docs", "region"),
        ("turbopuffer:docs?region=gcp-us-central1&base_url=http://x", "not both"),
        ("turbopuffer:docs?base_url=localhost:8080", "must be a URL"),
        ("turbopuffer:docs?api_key=x", "TURBOPUFFER_API_KEY only"),
        ("turbopuffer:docs?batch=20000", "batch"),
        ("turbopuffer:docs?metric=cosine", "metric"),
    ):
        with pytest.raises((SpecError, InputError), match=match):
            open_store(bad)
    assert emu.requests == []


def test_region_names_the_vendor_host(monkeypatch: pytest.MonkeyPatch) -> None:
    with open_store("turbopuffer:docs?region=gcp-us-central1") as store:
        assert store.where == "namespace 'docs' (gcp-us-central1.turbopuffer.com)"
    monkeypatch.setenv("TURBOPUFFER_REGION", "aws-us-east-1")
    with open_store("turbopuffer:docs") as store:
        assert "aws-us-east-1.turbopuffer.com" in store.where


def test_missing_extra_names_the_pip_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "turbopuffer", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'indexcheck\[turbopuffer\]'"):
        open_store("turbopuffer:docs?region=gcp-us-central1")
