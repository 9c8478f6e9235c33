"""The Weaviate store against the loopback emulator (tests/emulators/weaviate_emulator.py),
through the official ``weaviate-client`` v4, on collections LangChain's and LlamaIndex's
``WeaviateVectorStore`` wrote on their defaults and ones the plain client wrote (named
vectors, each distance): the planted faults through the CLI, the distance and certainty of
each metric, compare-ann on the HNSW, errors and the key, and no write ever sent."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("weaviate")
pytest.importorskip("langchain_weaviate")

from indexcheck.commands.probe_scale import probe_scale  # noqa: E402
from indexcheck.errors import AuthError, InputError, MissingDependencyError, SpecError  # noqa: E402
from indexcheck.stores import open_store  # noqa: E402
from indexcheck.testing import HashEmbedder  # noqa: E402
from tests.builders import weaviate as builder  # noqa: E402
from tests.emulators.weaviate_emulator import WeaviateEmulator  # noqa: E402
from tests.store_contract import check_store_contract  # noqa: E402
from tests.stores.planted_faults import (  # noqa: E402
    EMBEDDER,
    OTHER_EMBEDDER,
    assert_shift_story,
    assert_stale_missing_orphan,
    check,
    chunks_file,
    corpus,
    lc,
    run,
    stale_missing_orphan,
)
from tests.util import documented_score  # noqa: E402

KEY = "wv-SECRET-key-0123456789"
READS = {"/v1/meta", "/v1/schema/Docs", "Search", "Aggregate"}


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEAVIATE_API_KEY", KEY)
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("INDEXCHECK_VECTOR_CACHE", str(tmp_path / "vcache"))


@pytest.fixture
def emu() -> Iterator[WeaviateEmulator]:
    with WeaviateEmulator(api_key=KEY, exact=True) as e:
        yield e


def uuids(n: int) -> list[str]:
    return [str(uuid.UUID(int=i + 1)) for i in range(n)]


# -- the contract and each metric's score -----------------------------------------------------
@pytest.mark.parametrize(
    ("distance", "score", "formula", "higher"),
    [
        ("cosine", "distance", "1-cos", False),
        ("cosine", "certainty", "(1+cos)/2", True),
        ("dot", "distance", "-dot", False),
        ("l2-squared", "distance", "l2^2", False),
    ],
)
def test_contract_and_documented_score(
    emu: WeaviateEmulator, distance: str, score: str, formula: str, higher: bool
) -> None:
    vecs = (np.random.default_rng(3).standard_normal((60, 8)) * 1.5).astype(np.float32)
    ids = uuids(60)
    builder.collection(emu, "Docs", ids, vecs, distance=distance)
    with open_store(builder.spec(emu, "Docs") + f"&score={score}") as store:
        check_store_contract(store, ids, vecs)
        info = store.info()
        assert (info.backend, info.score, info.higher_is_better) == ("weaviate", formula, higher)
        assert info.approximate and not store.has_exact and not store.ordered
        queries = vecs[:5] + 0.2
        D, I = store.query(queries, 6)
        for qi in range(5):
            want = documented_score(formula, vecs, queries[qi])
            rows = [ids.index(v) for v in I[qi]]
            np.testing.assert_allclose(D[qi], want[rows], rtol=1e-4, atol=1e-4)
            assert rows == list(np.argsort(-want if higher else want, kind="stable")[:6])
        with pytest.raises(InputError, match="no exact search"):
            store.exact_query(queries, 4)
        with pytest.raises(InputError, match="at most 10000"):
            store.query(queries, 10001)


@pytest.mark.parametrize(
    ("distance", "score", "formula"),
    [
        ("cosine", "distance", "1-cos"),
        ("cosine", "certainty", "(1+cos)/2"),
        ("dot", "distance", "-dot"),
        ("l2-squared", "distance", "l2^2"),
    ],
)
def test_probe_scale_names_distance_and_certainty(
    emu: WeaviateEmulator, distance: str, score: str, formula: str
) -> None:
    vecs = (np.random.default_rng(7).standard_normal((200, 16)) * 2).astype(np.float32)
    builder.collection(emu, "Docs", uuids(200), vecs, distance=distance)
    spec = builder.spec(emu, "Docs") + f"&score={score}"
    with open_store(spec) as store:
        r = probe_scale(store)
    assert r.ok, r.message
    assert r.transform == formula
    before = len(emu.writes())
    out = run("probe-scale", "--store", spec, "--json", "-")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["transform"] == formula
    assert len(emu.writes()) == before


@pytest.mark.parametrize("distance", ["dot", "l2-squared"])
def test_certainty_is_refused_where_weaviate_has_none(emu: WeaviateEmulator, distance: str) -> None:
    builder.collection(emu, "Docs", uuids(10), np.eye(10, 4, dtype=np.float32), distance=distance)
    r = run("probe-scale", "--store", builder.spec(emu, "Docs") + "&score=certainty")
    assert r.exit_code == 2 and "certainty for cosine only" in r.output, r.output


# -- the planted faults, through the CLI, on framework builds -----------------------------
def test_clean_langchain_index_passes_and_nothing_is_written(
    emu: WeaviateEmulator, tmp_path: Path
) -> None:
    texts, metas = corpus()
    ids = builder.langchain(emu, "Docs", texts, metas, lc())
    writes, since = len(emu.writes()), len(emu.requests)
    spec = builder.spec(emu, "Docs")
    r = run("check-index", "--store", spec, "--embedder", EMBEDDER, "--all")  # texts from "text"
    assert r.exit_code == 0, r.output
    r, data = check(spec, chunks_file(tmp_path / "c.jsonl", ids, texts))
    assert r.exit_code == 0, r.output
    assert data["manifest"]["store"]["backend"] == "weaviate"
    r = run("check-index", "--store", spec, "--embedder", EMBEDDER, "--sample", "30")
    assert r.exit_code == 0, r.output
    assert len(emu.writes()) == writes
    assert {q.path for q in emu.requests[since:]} <= READS
    assert {q.method for q in emu.requests[since:] if q.kind == "rest"} == {"GET"}


def test_positional_shift_is_told_as_one_story_from_chunks_positions(
    emu: WeaviateEmulator, tmp_path: Path
) -> None:
    texts, metas = corpus()
    ids = builder.langchain(emu, "Docs", texts, metas, lc(buggy=True))
    r, data = check(builder.spec(emu, "Docs"), chunks_file(tmp_path / "c.jsonl", ids, texts))
    assert r.exit_code == 1, r.output
    assert_shift_story(data, ids)


def test_stale_missing_and_orphan_are_found(emu: WeaviateEmulator, tmp_path: Path) -> None:
    texts, metas = corpus()
    ids = builder.langchain(emu, "Docs", texts, metas, lc())
    absent = [str(uuid.UUID(int=999)), "not-a-uuid"]
    listed_ids, listed = stale_missing_orphan(ids, texts, absent)
    r, data = check(
        builder.spec(emu, "Docs"), chunks_file(tmp_path / "c.jsonl", listed_ids, listed)
    )
    assert r.exit_code == 1, r.output
    assert_stale_missing_orphan(data, ids, absent)


def test_model_mismatch_is_named(emu: WeaviateEmulator, tmp_path: Path) -> None:
    texts, metas = corpus()
    ids = builder.langchain(emu, "Docs", texts, metas, lc(OTHER_EMBEDDER))
    r, data = check(builder.spec(emu, "Docs"), chunks_file(tmp_path / "c.jsonl", ids, texts))
    assert r.exit_code == 1, r.output
    kinds = {f["kind"] for f in data["findings"]}
    assert "model_mismatch" in kinds and not kinds & {"shift", "stale_vector"}, kinds


def test_nan_zero_and_wrong_dimension_vectors_are_found(
    emu: WeaviateEmulator, tmp_path: Path
) -> None:
    texts, _ = corpus()
    emb = HashEmbedder(32)
    vecs = np.asarray(emb.embed(texts[:40]), dtype=np.float32)
    vecs[3] = np.nan
    vecs[7] = 0.0
    ids = uuids(40)
    builder.collection(emu, "Docs", ids, vecs, [{"text": t} for t in texts[:40]])
    # a shorter vector, planted behind the server's dimension check
    emu.collections["Docs"].objects[ids[9]].vectors["default"] = vecs[9][:16].copy()
    r, data = check(builder.spec(emu, "Docs"), chunks_file(tmp_path / "c.jsonl", ids, texts[:40]))
    assert r.exit_code == 1, r.output
    status = {c["id"]: c["status"] for c in data["chunks"] if c["status"] != "ok"}
    assert set(status) == {ids[3], ids[7], ids[9]}, status


def test_llamaindex_collection_reads_back_with_no_mapping(
    emu: WeaviateEmulator, tmp_path: Path
) -> None:
    pytest.importorskip("llama_index.vector_stores.weaviate")
    texts, _ = corpus()
    emb = HashEmbedder(32)
    ids = builder.llamaindex(emu, "Nodes", texts[:40], emb.embed)
    spec = builder.spec(emu, "Nodes")
    with open_store(spec) as store:
        got = store.fetch(ids[:3])
        assert got.found.all() and got.texts is not None
        assert all(t is not None and texts[i] in t for i, t in enumerate(got.texts))
    r = run("check-index", "--store", spec, "--embedder", EMBEDDER, "--all")
    assert r.exit_code == 0, r.output
    r, _ = check(spec, chunks_file(tmp_path / "c.jsonl", ids, texts[:40]))
    assert r.exit_code == 0, r.output


def test_sweep_diagnose_and_diff_index_run_read_only(emu: WeaviateEmulator, tmp_path: Path) -> None:
    texts, metas = corpus()
    ids = builder.langchain(emu, "Docs", texts, metas, lc())
    builder.langchain(emu, "Rebuilt", texts, metas, lc(buggy=True))
    questions = tmp_path / "q.jsonl"
    rows = [{"id": f"q{i}", "question": texts[i], "expected": [ids[i]]} for i in range(0, 60, 3)]
    rows += [{"id": f"o{i}", "question": f"a cooking recipe {i}", "in_scope": False}
             for i in range(10)]  # fmt: skip
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    chunks = chunks_file(tmp_path / "c.jsonl", ids, texts)
    writes, spec = len(emu.writes()), builder.spec(emu, "Docs")
    r = run("sweep-threshold", "--store", spec, "--embedder", EMBEDDER, "--questions",
            str(questions), "--json", "-")  # fmt: skip
    assert r.exit_code == 0, r.output
    sweep = json.loads(r.stdout)
    assert sweep["scale"]["transform"] == "1-cos" and sweep["separable"]
    r = run("diagnose", "--store", spec, "--embedder", EMBEDDER, "--questions", str(questions),
            "--chunks", str(chunks), "--json", "-")  # fmt: skip
    assert r.exit_code == 1, r.output  # out-of-scope questions answered: no threshold given
    assert json.loads(r.stdout)["counts"]["OK"] == 20
    r = run("diff-index", "--old", spec, "--new", builder.spec(emu, "Rebuilt"), "--json", "-")
    assert r.exit_code == 1, r.output
    assert json.loads(r.stdout)["counts"]["shift"] > 0
    assert len(emu.writes()) == writes


def test_a_full_read_streams_one_cursor_page_at_a_time(emu: WeaviateEmulator) -> None:
    vecs = np.random.default_rng(4).standard_normal((250, 8)).astype(np.float32)
    ids = uuids(250)
    builder.collection(emu, "Docs", ids, vecs)
    with open_store(builder.spec(emu, "Docs") + "&batch=40") as store:
        store.info()
        since = len(emu.requests)
        blocks = store.iter_vectors(batch=100)
        first = next(blocks)
        pages = [r.body for r in emu.requests[since:] if r.path == "Search"]
        assert len(first.ids) == 40 and len(pages) == 1  # one page asked, one page held
        rest = list(blocks)
    pages = [r.body for r in emu.requests[since:] if r.path == "Search"]
    assert {p.limit for p in pages} == {40} and all(len(b.ids) <= 40 for b in rest)
    got = first.ids + [i for b in rest for i in b.ids]
    assert got == sorted(ids)  # the cursor's uuid order, every object once


# -- compare-ann on the emulator's HNSW, ef as the breadth --------------------------------------
def test_compare_ann_measures_the_graphs_misses_at_the_collections_ef(tmp_path: Path) -> None:
    vecs = np.random.default_rng(11).standard_normal((800, 16)).astype(np.float32)
    recalls = {}
    with WeaviateEmulator(api_key=KEY) as emu:
        for name, ef in (("Low", 10), ("High", 400)):
            builder.collection(emu, name, uuids(800), vecs, ef=ef, max_connections=8)
            writes = len(emu.writes())
            out = tmp_path / f"{name}.json"
            r = run("compare-ann", "--store", builder.spec(emu, name), "--queries", "30",
                    "-k", "10", "--json", str(out))  # fmt: skip
            assert r.exit_code in (0, 1), r.output
            data = json.loads(out.read_text())
            assert data["manifest"]["store"]["backend"] == "weaviate"
            recalls[name] = data["by_fetch"][0]["recall_at_k"]
            assert len(emu.writes()) == writes
        with open_store(builder.spec(emu, "Low")) as store:
            assert store.info().details["search_breadth"] == "ef 10"
    assert 0.3 < recalls["Low"] < 1.0  # real misses, measured against exact truth
    assert recalls["High"] > recalls["Low"]


# -- named vectors, errors, the key -------------------------------------------------------------
def test_named_vectors_need_a_target_and_read_the_one_named(emu: WeaviateEmulator) -> None:
    vecs = np.random.default_rng(5).standard_normal((20, 8)).astype(np.float32)
    builder.collection(emu, "Docs", uuids(20), vecs, named=["title", "body"])
    with pytest.raises(InputError, match="target_vector= with one of them"):
        open_store(builder.spec(emu, "Docs")).info()
    with pytest.raises(InputError, match="no named vector 'nope'"):
        open_store(builder.spec(emu, "Docs") + "&target_vector=nope").info()
    with open_store(builder.spec(emu, "Docs") + "&target_vector=body") as store:
        assert store.info().details["target_vector"] == "body"
        np.testing.assert_allclose(store.fetch(uuids(2)).vectors, vecs[:2], rtol=1e-6)
        _, I = store.query(vecs[:1], 1)
        assert I[0, 0] == uuids(1)[0]
    sent = [r.body for r in emu.requests if r.path == "Search" and r.body.HasField("near_vector")]
    assert list(sent[-1].near_vector.targets.target_vectors) == ["body"]


def test_a_multi_tenant_collection_needs_a_tenant(emu: WeaviateEmulator) -> None:
    from weaviate.classes.config import Configure

    with builder.client(emu) as c:
        c.collections.create("Shared", multi_tenancy_config=Configure.multi_tenancy(enabled=True))
    r = run("check-index", "--store", builder.spec(emu, "Shared"), "--embedder", EMBEDDER)
    assert r.exit_code == 2 and "pass ?tenant=" in r.output, r.output


def test_the_key_is_never_printed_and_a_refused_key_exits_3(
    emu: WeaviateEmulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    builder.collection(emu, "Docs", uuids(4), np.eye(4, 32, dtype=np.float32))
    spec = builder.spec(emu, "Docs")
    out = tmp_path / "r.json"
    r = run("probe-scale", "--store", spec, "--json", str(out))
    assert KEY not in r.output and KEY not in out.read_text()
    with open_store(spec) as store:
        assert KEY not in repr(store) + store.spec + str(store.info())
    monkeypatch.setenv("WEAVIATE_API_KEY", "wv-WRONG-key")
    r = run("check-index", "--store", spec, "--embedder", EMBEDDER)
    assert r.exit_code == 3 and "WEAVIATE_API_KEY" in r.output and "WRONG" not in r.output
    monkeypatch.delenv("WEAVIATE_API_KEY")
    r = run("check-index", "--store", spec, "--embedder", EMBEDDER)
    assert r.exit_code == 3 and "WEAVIATE_API_KEY" in r.output, r.output


def test_transient_failures_are_retried_and_a_missing_collection_is_named(
    emu: WeaviateEmulator,
) -> None:
    builder.collection(emu, "Docs", uuids(4), np.eye(4, 8, dtype=np.float32))
    with open_store(builder.spec(emu, "Docs")) as store:
        store.info()
        emu.fail_next(2, "RESOURCE_EXHAUSTED")
        assert store.fetch(uuids(1)).found.tolist() == [True]
        assert store.retries == 2
        emu.fail_next(3, "RESOURCE_EXHAUSTED")
        with pytest.raises(Exception, match="failed after 2 retries"):
            store.fetch(uuids(1))
    with open_store(builder.spec(emu, "Docs")) as store:
        emu.fail_next(1, 503)
        assert store.info().count == 4  # the schema read, retried after a 503
    with pytest.raises(InputError, match="collection was not found"):
        open_store(builder.spec(emu, "Nosuch")).info()
    with pytest.raises(AuthError):
        with open_store(builder.spec(emu, "Docs")) as s:
            emu.fail_next(1, 401)
            s.info()


def test_bad_specs_exit_2_before_any_request(emu: WeaviateEmulator) -> None:
    for bad, match in (
        ("weaviate:localhost:8080?collection=Docs", "REST URL"),
        ("weaviate:http://localhost:8080", "name the collection"),
        ("weaviate:http://u:p@localhost:8080?collection=Docs", "WEAVIATE_API_KEY"),
        ("weaviate:http://localhost:8080?collection=Docs&api_key=x", "WEAVIATE_API_KEY only"),
        ("weaviate:http://localhost:8080?collection=Docs&score=similarity", "score"),
        ("weaviate:http://localhost:8080?collection=Docs&batch=20000", "batch"),
    ):
        with pytest.raises(SpecError, match=match):
            open_store(bad)
    assert emu.requests == []


def test_missing_extra_names_the_pip_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "weaviate", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'indexcheck\[weaviate\]'"):
        open_store("weaviate:http://localhost:8080?collection=Docs")
