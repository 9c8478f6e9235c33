"""The Pinecone store against the loopback emulator (tests/emulators/pinecone_emulator.py),
through the official ``pinecone`` SDK, on indexes LangChain's ``PineconeVectorStore`` wrote
on its defaults (uuid4 ids, text in ``metadata["text"]``): the planted faults through the
CLI, the score of each metric, compare-ann, namespaces, errors, and no write ever sent."""

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
from tests.builders import pinecone as builder
from tests.emulators.pinecone_emulator import PineconeEmulator
from tests.store_contract import check_store_contract
from tests.stores import planted_faults as planted
from tests.stores.planted_faults import EMBEDDER, N, check, chunks_file, corpus, lc, run
from tests.util import documented_score

pytest.importorskip("pinecone")
pytest.importorskip("langchain_pinecone")

KEY = "pcsk_SECRET_key_0123456789"
READS = {"/indexes/docs", "/describe_index_stats", "/vectors/list", "/vectors/fetch", "/query"}


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PINECONE_API_KEY", KEY)
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("INDEXCHECK_VECTOR_CACHE", str(tmp_path / "vcache"))


@pytest.fixture
def emu() -> Iterator[PineconeEmulator]:
    with PineconeEmulator(api_key=KEY, exact=True) as e:
        yield e


def indexcheck_requests(emu: PineconeEmulator, since: int) -> list[Any]:
    return emu.requests[since:]


# -- the contract and each metric's score ---------------------------------------------------
@pytest.mark.parametrize(
    ("metric", "score", "higher"),
    [("cosine", "cos", True), ("dotproduct", "dot", True), ("euclidean", "l2^2", False)],
)
def test_contract_and_documented_score(
    emu: PineconeEmulator, metric: str, score: str, higher: bool
) -> None:
    vecs = (np.random.default_rng(3).standard_normal((60, 8)) * 1.5).astype(np.float32)
    ids = [f"chunk-{i:03d}" for i in range(60)]
    builder.upsert(emu, "docs", ids, vecs, metric=metric)
    with open_store(builder.spec(emu, "docs")) as store:
        check_store_contract(store, ids, vecs)
        info = store.info()
        assert (info.backend, info.metric, info.score, info.higher_is_better) == (
            "pinecone", metric, score, higher)  # fmt: skip
        assert info.approximate and not store.has_exact and not store.ordered
        queries = vecs[:5] + 0.2
        D, I = store.query(queries, 6)
        for qi in range(5):
            want = documented_score(score, vecs, queries[qi])
            rows = [ids.index(v) for v in I[qi]]
            np.testing.assert_allclose(D[qi], want[rows], rtol=1e-4, atol=1e-4)
            best = np.argsort(-want if higher else want, kind="stable")[:6]
            assert rows == list(best)
        with pytest.raises(InputError, match="no exact search"):
            store.exact_query(queries, 4)
        with pytest.raises(InputError, match="at most 10000"):
            store.query(queries, 10001)


@pytest.mark.parametrize(
    ("metric", "formula"), [("cosine", "cos"), ("dotproduct", "dot"), ("euclidean", "l2^2")]
)
def test_probe_scale_names_cos_dot_and_squared_l2(
    emu: PineconeEmulator, metric: str, formula: str
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
def langchain_build(emu: PineconeEmulator, **options: Any) -> planted.Build:
    """Build index 'docs' through LangChain's PineconeVectorStore on its defaults."""
    texts, metas = corpus()

    def build(embeddings: Any) -> tuple[str, list[str]]:
        ids = builder.langchain(emu, "docs", texts, metas, embeddings, **options)
        return builder.spec(emu, "docs"), ids

    return build


def test_clean_langchain_index_passes_and_nothing_is_written(
    emu: PineconeEmulator, tmp_path: Path
) -> None:
    build = langchain_build(emu)
    seen: dict[str, int] = {}

    def counted(embeddings: Any) -> tuple[str, list[str]]:
        spec, ids = build(embeddings)
        assert all(len(i) == 36 for i in ids)  # LangChain's uuid4 ids
        seen.update(writes=len(emu.writes()), since=len(emu.requests))
        return spec, ids

    planted.clean_passes(counted, tmp_path)  # --all reads the texts from "text"
    assert len(emu.writes()) == seen["writes"]
    assert {q.path for q in emu.requests[seen["since"] :]} <= READS
    assert {q.method for q in emu.requests[seen["since"] :] if q.path == "/query"} <= {"POST"}


def test_positional_shift_is_told_as_one_story_from_chunks_positions(
    emu: PineconeEmulator, tmp_path: Path
) -> None:
    planted.shift_is_one_story(langchain_build(emu), tmp_path)


def test_stale_missing_and_orphan_are_found(emu: PineconeEmulator, tmp_path: Path) -> None:
    planted.stale_missing_and_orphan(langchain_build(emu), tmp_path)


def test_model_mismatch_is_named(emu: PineconeEmulator, tmp_path: Path) -> None:
    planted.model_mismatch(langchain_build(emu), tmp_path)


# -- compare-ann on the emulator's HNSW -------------------------------------------------------
def test_compare_ann_measures_the_graphs_misses(tmp_path: Path) -> None:
    vecs = np.random.default_rng(11).standard_normal((800, 16)).astype(np.float32)
    metas = [{"topic": f"t{i % 5}"} for i in range(800)]
    with PineconeEmulator(api_key=KEY, m=6, ef=10) as emu:
        builder.upsert(emu, "docs", [f"v{i:04d}" for i in range(800)], vecs, metas)
        writes = len(emu.writes())
        out = tmp_path / "ann.json"
        r = run("compare-ann", "--store", builder.spec(emu, "docs"), "--queries", "30", "-k", "10",
                "--json", str(out))  # fmt: skip
        assert r.exit_code in (0, 1), r.output
        data = json.loads(out.read_text())
        assert data["manifest"]["store"]["backend"] == "pinecone"
        recall = data["by_fetch"][0]["recall_at_k"]
        assert 0.3 < recall < 1.0  # real misses, measured against exact truth
        assert len(emu.writes()) == writes


# -- namespaces -------------------------------------------------------------------------------
def test_two_namespaces_on_one_host_are_never_mixed(emu: PineconeEmulator, tmp_path: Path) -> None:
    texts, metas = corpus()
    ids = [f"c{i:03d}" for i in range(N)]  # the same ids in both namespaces
    from langchain_pinecone import PineconeVectorStore

    host = emu.add_index("docs", 32, "cosine")
    for ns, emb in (("good", lc()), ("bad", lc(buggy=True))):
        PineconeVectorStore(embedding=emb, host=host, namespace=ns,
                            pinecone_api_key=KEY).add_texts(texts, ids=ids)  # fmt: skip
    good, bad = builder.spec(emu, "docs", "good"), builder.spec(emu, "docs", "bad")
    with open_store(good) as g, open_store(bad) as b:
        assert g.fingerprint() != b.fingerprint()
        assert g.spec != b.spec and "namespace=good" in g.spec
        assert g.info().count == b.info().count == N
        assert not np.allclose(g.fetch([ids[50]]).vectors, b.fetch([ids[50]]).vectors)
    chunks = chunks_file(tmp_path / "c.jsonl", ids, texts)
    for spec, code in ((bad, 1), (good, 0), (bad, 1), (good, 0)):  # the vector cache is warm
        r, _ = check(spec, chunks)
        assert r.exit_code == code, (spec, r.output)
    r = run("check-index", "--store", builder.spec(emu, "docs", "nope"), "--embedder", EMBEDDER)
    assert r.exit_code == 2 and "'bad', 'good'" in r.output


def test_default_namespace_is_empty_or_default(emu: PineconeEmulator) -> None:
    vecs = np.eye(8, dtype=np.float32)
    builder.upsert(emu, "docs", [f"e{i}" for i in range(8)], vecs)
    for spec in (builder.spec(emu, "docs"), builder.spec(emu, "docs", "__default__")):
        with open_store(spec) as store:
            assert store.info().count == 8 and store.info().details["namespace"] == ""


# -- errors, the key, limits ------------------------------------------------------------------
def test_the_key_is_never_printed_and_a_refused_key_exits_3(
    emu: PineconeEmulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    builder.upsert(emu, "docs", ["a", "b"], np.eye(2, 32, dtype=np.float32))
    spec = builder.spec(emu, "docs")
    out = tmp_path / "r.json"
    r = run("probe-scale", "--store", spec, "--json", str(out))
    assert KEY not in r.output and KEY not in out.read_text()
    with open_store(spec) as store:
        assert KEY not in repr(store) + store.spec + str(store.info())
    monkeypatch.setenv("PINECONE_API_KEY", "pcsk_WRONG_key")
    r = run("check-index", "--store", spec, "--embedder", EMBEDDER)
    assert r.exit_code == 3 and "PINECONE_API_KEY" in r.output and "WRONG" not in r.output
    monkeypatch.delenv("PINECONE_API_KEY")
    r = run("check-index", "--store", spec, "--embedder", EMBEDDER)
    assert r.exit_code == 2 and "PINECONE_API_KEY is not set" in r.output


def test_429_is_retried_after_retry_after_and_404_names_the_index(emu: PineconeEmulator) -> None:
    builder.upsert(emu, "docs", ["a", "b"], np.eye(2, 8, dtype=np.float32))
    waits: list[float] = []
    from indexcheck.stores.params import StoreSpec
    from indexcheck.stores.pinecone.store import PineconeStore

    store = PineconeStore.from_spec(StoreSpec.parse(builder.spec(emu, "docs")), sleep=waits.append)
    store.info()
    emu.fail_next(2, 429, retry_after=0.25)
    assert store.fetch(["a"]).found.tolist() == [True]
    assert store.retries == 2 and waits == [0.25, 0.25]
    emu.fail_next(3, 503)
    with pytest.raises(Exception, match="failed after 2 retries"):
        store.fetch(["a"])
    with pytest.raises(InputError, match="not found.*index name"):
        open_store(builder.spec(emu, "nosuch")).info()
    with pytest.raises(AuthError):
        with open_store(builder.spec(emu, "docs")) as s:
            emu.fail_next(1, 401)
            s.info()


def test_pod_index_reads_by_id_and_refuses_a_full_read(
    emu: PineconeEmulator, tmp_path: Path
) -> None:
    texts, metas = corpus()
    ids = builder.langchain(emu, "docs", texts, metas, lc(), pod=True)
    spec = builder.spec(emu, "docs")
    with open_store(spec) as store:
        assert store.info().details["kind"] == "pod" and store.fetch(ids[:2]).found.all()
    r, _ = check(spec, chunks_file(tmp_path / "c.jsonl", ids, texts))
    assert r.exit_code == 2 and "serverless indexes only" in r.output
    chunks = chunks_file(tmp_path / "c.jsonl", ids, texts)
    r = run("check-index", "--store", spec, "--chunks", str(chunks), "--embedder", EMBEDDER,
            "--sample", "30")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert not any(q.body and q.body.get("filter") for q in emu.requests
                   if q.path == "/describe_index_stats")  # fmt: skip


def test_bad_specs_exit_2_before_any_request(emu: PineconeEmulator) -> None:
    for bad, match in (
        ("pinecone:https://docs-abc.svc.pinecone.io", "index name"),
        ("pinecone:Docs_1", "lowercase"),
        ("pinecone:docs?host=localhost:5080", "must be a URL"),
        ("pinecone:docs?api_key=x", "PINECONE_API_KEY only"),
        ("pinecone:docs?batch=5000", "batch"),
    ):
        with pytest.raises(SpecError, match=match):
            open_store(bad)
    assert emu.requests == []


def test_missing_extra_names_the_pip_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pinecone", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'indexcheck\[pinecone\]'"):
        open_store("pinecone:docs")
