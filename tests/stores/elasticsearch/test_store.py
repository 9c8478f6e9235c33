"""The Elasticsearch store through the official 8.x client against the loopback emulator
(tests/emulators/search_engine_emulator.py), on indexes LangChain's ElasticsearchStore wrote
on its defaults: planted faults, scores per similarity, the engine's knn with its breadth,
filters against numpy, read-only from the request log, credentials never printed."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.commands.check_index import CheckIndexSettings, check_index
from indexcheck.commands.probe_scale import probe_scale
from indexcheck.errors import AuthError, FilterError, InputError
from indexcheck.inputs.corpus import corpus_from_pairs
from indexcheck.stores import open_store
from indexcheck.testing import HashEmbedder
from tests.builders import search_engines as build
from tests.emulators.search_engine_emulator import Emulator
from tests.store_contract import check_store_contract
from tests.stores.searchengine_support import (
    EMBEDDER,
    N,
    buggy,
    chunks_file,
    corpus,
    fixed_embeddings,
    random_filter,
    truth,
    unit,
    writes,
)

pytest.importorskip("elasticsearch")
pytest.importorskip("langchain_elasticsearch")


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("INDEXCHECK_VECTOR_CACHE", str(tmp_path / "vcache"))
    for name in ("ELASTIC_API_KEY", "ELASTICSEARCH_USERNAME", "ELASTICSEARCH_PASSWORD"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def emu() -> Iterator[Emulator]:
    e = Emulator("elasticsearch", "8.13.4")
    yield e
    e.stop()


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def spec(e: Emulator, index: str = "docs", **extra: Any) -> str:
    tail = "".join(f"&{k}={v}" for k, v in extra.items())
    return f"elasticsearch:{e.url}?index={index}{tail}"


def built(e: Emulator, embedding: Any = None) -> tuple[list[str], list[str], list[dict[str, Any]]]:
    texts, metas = corpus()
    ids = build.langchain_es(e.url, "docs", texts, metas, embedding or build.lc_embeddings())
    return ids, texts, metas


def test_contract_on_the_index_langchain_writes(emu: Emulator) -> None:
    texts = [f"distinct text {i}" for i in range(40)]
    ids = build.langchain_es(emu.url, "docs", texts, None, build.lc_embeddings())
    first = len(emu.requests)
    with open_store(spec(emu)) as store:
        check_store_contract(store, ids, HashEmbedder(32).embed(texts))
        info = store.info()
        assert (info.metric, info.score, info.details["vector_field"]) == (
            "cosine",
            "(1+cos)/2",
            "vector",
        )
        assert info.details["text_field"] == "text" and not store.ordered
    assert writes(emu.requests[first:]) == []


def test_clean_index_passes_and_nothing_is_written(emu: Emulator, tmp_path: Path) -> None:
    ids, texts, _ = built(emu)
    chunks = chunks_file(tmp_path / "c.jsonl", ids, texts)
    first = len(emu.requests)
    for extra in (["--sample", "40", "--seed", "1"], ["--all"]):
        r = run("check-index", "--store", spec(emu), "--embedder", EMBEDDER,
                "--chunks", str(chunks), *extra)  # fmt: skip
        assert r.exit_code == 0, r.output
    log = emu.requests[first:]
    assert writes(log) == [] and log
    # scans page with a point in time on _shard_doc: never from past a page, never _id
    bodies = [b for b in emu.bodies[first:] if isinstance(b, dict)]
    assert all("from" not in b for b in bodies)
    sorts = [json.dumps(b.get("sort")) for b in bodies if "sort" in b]
    assert sorts and all("_shard_doc" in s and "_id" not in s for s in sorts)


def test_shift_is_told_as_one_story_with_positions_from_chunks(
    emu: Emulator, tmp_path: Path
) -> None:
    texts, metas = corpus()
    ids = build.langchain_es(emu.url, "docs", texts, metas, buggy(build.lc_embeddings()))
    chunks = chunks_file(tmp_path / "c.jsonl", ids, texts)
    first = len(emu.requests)
    r = run("check-index", "--store", spec(emu), "--embedder", EMBEDDER, "--all",
            "--chunks", str(chunks), "--json", str(tmp_path / "r.json"))  # fmt: skip
    assert r.exit_code == 1, r.output
    data = json.loads((tmp_path / "r.json").read_text())
    (shift,) = [f for f in data["findings"] if f["kind"] == "shift"]
    assert shift["details"]["start_id"] == ids[34]
    assert [s["trigger_id"] for s in shift["details"]["stretches"]] == [ids[33], ids[70]]
    assert writes(emu.requests[first:]) == []


def test_stale_missing_orphan_and_model_mismatch(emu: Emulator, tmp_path: Path) -> None:
    ids, texts, metas = built(emu)
    # chunk 10's text edited since it was embedded; chunk 20's document deleted
    texts = list(texts)
    texts[10] += " Revised in 2024, see the new appendix on scope."
    es = build.client("elasticsearch", emu.url)
    es.delete(index="docs", id=ids[20])
    es.index(index="docs", id="orphan-1", document={"vector": [0.1] * 32, "text": "left over",
             "metadata": {}})  # fmt: skip
    es.close()
    with open_store(spec(emu)) as store:
        result = check_index(CheckIndexSettings(sample=None), store, HashEmbedder(32),
                             corpus_from_pairs(ids, texts))  # fmt: skip
        status = {c.id: str(c.status) for c in result.chunks if str(c.status) != "ok"}
        assert status == {ids[10]: "stale_vector", ids[20]: "missing_vector"}
        kinds = {f.kind for f in result.findings}
        assert "orphan_vectors" in kinds or any("orphan" in k for k in kinds), kinds
        other_model = HashEmbedder(32, model="other-model")
        other = check_index(CheckIndexSettings(sample=None), store, other_model,
                            corpus_from_pairs(ids, texts))  # fmt: skip
        assert any("mismatch" in f.kind for f in other.findings), [f.kind for f in other.findings]


# -- scores -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("distance", "similarity", "formula"), [
    ("COSINE", "cosine", "(1+cos)/2"),
    ("DOT_PRODUCT", "dot_product", "(1+dot)/2"),
    ("EUCLIDEAN_DISTANCE", "l2_norm", "1/(1+l2^2)"),
    ("MAX_INNER_PRODUCT", "max_inner_product", "1+dot|1/(1-dot)"),
])  # fmt: skip
def test_probe_scale_names_each_similarity(emu: Emulator, distance: str, similarity: str,
                                           formula: str) -> None:  # fmt: skip
    vecs = unit()
    texts = [f"t{i}" for i in range(len(vecs))]
    emb = fixed_embeddings(texts, vecs)
    build.langchain_es(emu.url, "docs", texts, None, emb, distance=distance)
    with open_store(spec(emu, num_candidates=400)) as store:
        info = store.info()
        assert (info.details["similarity"], info.score) == (similarity, formula)
        r = probe_scale(store)
    assert r.ok, r.message
    assert r.transform == formula


def test_int8_default_from_8_14_is_said_and_measured(tmp_path: Path) -> None:
    e = Emulator("elasticsearch", "8.15.0")
    try:
        vecs = unit()
        texts = [f"t{i}" for i in range(len(vecs))]
        emb = fixed_embeddings(texts, vecs)
        ids = build.langchain_es(e.url, "docs", texts, None, emb)
        row = {vid: n for n, vid in enumerate(ids)}
        with open_store(spec(e, num_candidates=400)) as store:
            info = store.info()
            assert info.details["index_options"]["type"] == "int8_hnsw"
            assert "quantised" in info.details["scores"]
            D, I = store.query(vecs[:5], 5)
            cos = np.array([[float(vecs[row[t]] @ vecs[q]) for t in I[q]] for q in range(5)])
            err = np.abs(D - (1 + cos) / 2)
            assert err.max() > 1e-5  # quantised: not exactly (1+cos)/2 ...
            assert err.max() < 0.02  # ... but near it
    finally:
        e.stop()


# -- compare-ann --------------------------------------------------------------------------------


def test_compare_ann_says_its_breadth_and_asks_each_depth(emu: Emulator) -> None:
    built(emu)
    first = len(emu.requests)
    r = run("compare-ann", "--store", spec(emu), "--queries", "10", "-k", "4",
            "--fetch", "4,10", "--sweep", "num_candidates=10,40", "--json", "-")  # fmt: skip
    assert r.exit_code in (0, 1), r.output
    data = json.loads(r.stdout)
    text = json.dumps(data)
    assert "num_candidates" in text
    knns = [b["knn"] for b in emu.bodies[first:] if isinstance(b, dict) and "knn" in b]
    asked = {(k["k"], k["num_candidates"]) for k in knns}
    # every depth is its own request, at each breadth (max(num_candidates, k))
    assert {(4, 10), (10, 10), (4, 40), (10, 40)} <= asked
    assert all(len({json.dumps(k["query_vector"]) for k in knns if k["k"] == d}) >= 10
               for d in (4, 10))  # fmt: skip


# -- filters ---------------------------------------------------------------------------------


def test_seeded_filters_return_exactly_numpys_rows(emu: Emulator) -> None:
    texts, metas = corpus()
    texts = [f"{t} (copy {i})" for i, t in enumerate(texts)]  # no ties among repeats
    ids = build.langchain_es(emu.url, "docs", texts, metas, build.lc_embeddings())
    vecs = HashEmbedder(32).embed(texts)
    rng = random.Random(3)
    queries = vecs[rng.sample(range(N), 10)] + 0.05
    with open_store(spec(emu, num_candidates=N)) as store:
        for n in range(100):
            flt = random_filter(rng)
            q = queries[n % 10]
            D, I = store.query(q[None], 5, filter=flt)
            got = [i for i in I[0] if i is not None]
            assert got == truth("elasticsearch", vecs, metas, ids, q, flt, 5), flt


def test_filters_elasticsearch_cannot_express_name_the_operator(emu: Emulator) -> None:
    es = build.client("elasticsearch", emu.url)
    es.indices.create(
        index="notes",
        mappings={
            "properties": {
                "vector": {"type": "dense_vector", "dims": 4, "similarity": "l2_norm"},
                "text": {"type": "text"},
                "metadata": {"properties": {"note": {"type": "text"}, "code": {"type": "keyword"}}},
            }
        },
    )
    es.index(index="notes", id="a", document={"vector": [1, 0, 0, 0], "text": "x",
             "metadata": {"note": "Kidney Diet", "code": "K-1"}}, refresh=True)  # fmt: skip
    es.close()
    with open_store(spec(emu, "notes")) as store:
        q = np.ones((1, 4), np.float32)
        with pytest.raises(FilterError, match="'\\$eq' on 'note'.*keyword") as err:
            store.query(q, 1, filter={"note": "Kidney Diet"})
        assert err.value.exit_code == 2
        with pytest.raises(FilterError, match="'\\$gt' on 'code'"):
            store.query(q, 1, filter={"code": {"$gt": 3}})
        D, I = store.query(q, 1, filter={"code": "K-1"})  # a keyword field: exact
        assert I[0, 0] == "a"


def test_long_strings_are_not_in_keyword_and_the_filter_says_so(emu: Emulator) -> None:
    built(emu)
    with open_store(spec(emu)) as store:
        with pytest.raises(FilterError, match="ignore_above=256"):
            store.query(np.ones((1, 32), np.float32), 3, filter={"topic": "x" * 300})


# -- layouts, versions, credentials, errors ------------------------------------------------------


def test_llamaindex_layout_is_read_with_no_mapping_given(emu: Emulator) -> None:
    vecs = unit(30, 8)
    ids = [f"node-{i}" for i in range(30)]
    build.llamaindex_es(emu.url, "li", ids, vecs, [f"c{i}" for i in range(30)],
                        [{"topic": f"T{i % 3}"} for i in range(30)])  # fmt: skip
    with open_store(spec(emu, "li")) as store:
        info = store.info()
        assert (info.details["vector_field"], info.details["text_field"]) == (
            "embedding",
            "content",
        )
        check_store_contract(store, ids, vecs)


def test_9x_hides_vectors_from_source_and_the_store_asks_for_them() -> None:
    e = Emulator("elasticsearch", "9.2.0")
    try:
        vecs = unit(20, 8)
        texts = [f"t{i}" for i in range(20)]
        ids = build.langchain_es(
            e.url,
            "docs",
            texts,
            None,
            fixed_embeddings(texts, vecs),
        )
        raw = build.client("elasticsearch", e.url).search(index="docs", size=1)
        assert "vector" not in raw["hits"]["hits"][0]["_source"]  # hidden by default
        with open_store(spec(e)) as store:
            check_store_contract(store, ids, vecs)
    finally:
        e.stop()


def test_vectors_excluded_by_the_mapping_are_named(emu: Emulator) -> None:
    es = build.client("elasticsearch", emu.url)
    es.indices.create(
        index="ex",
        mappings={
            "_source": {"excludes": ["vector"]},
            "properties": {"vector": {"type": "dense_vector", "dims": 4, "similarity": "cosine"}},
        },
    )
    es.index(index="ex", id="a", document={"vector": [1, 0, 0, 0], "text": "x"}, refresh=True)
    es.close()
    with open_store(spec(emu, "ex")) as store:
        with pytest.raises(InputError, match="leaves 'vector' out of _source"):
            list(store.iter_vectors())


def test_credentials_come_from_the_environment_and_are_never_printed(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    built(emu)
    emu.require_auth = ("elastic", "s3cret-pass")
    r = run("probe-scale", "--store", spec(emu))
    assert r.exit_code == 3 and "ELASTICSEARCH_PASSWORD" in r.output
    monkeypatch.setenv("ELASTICSEARCH_USERNAME", "elastic")
    monkeypatch.setenv("ELASTICSEARCH_PASSWORD", "wrong-pass-123")
    r = run("probe-scale", "--store", spec(emu))
    assert r.exit_code == 3 and "wrong-pass-123" not in r.output
    monkeypatch.setenv("ELASTICSEARCH_PASSWORD", "s3cret-pass")
    r = run("probe-scale", "--store", spec(emu), "--json", "-")
    assert r.exit_code == 0, r.output
    assert "s3cret-pass" not in r.output
    r = run("probe-scale", "--store", "elasticsearch:http://elastic:pw@127.0.0.1:1?index=d")
    assert r.exit_code == 2 and "environment" in r.output


def test_errors_name_the_fix(emu: Emulator) -> None:
    built(emu)
    with pytest.raises(InputError, match="no index 'nope'.*fix \\?index="):
        open_store(spec(emu, "nope"))
    from elasticsearch import Elasticsearch

    from indexcheck.stores.elasticsearch.store import ES_ERRORS

    # what a 9.x client sends: its compatibility header, refused by an 8.x server
    nine = Elasticsearch(emu.url)
    accept = {"accept": "application/vnd.elasticsearch+json; compatible-with=9"}
    with pytest.raises(InputError, match="9.x client cannot talk to an 8.x server"):
        ES_ERRORS.call("read the mapping", lambda: nine.perform_request(
            "GET", "/docs/_mapping", headers=accept), where=emu.url, index="docs")  # fmt: skip
    emu.failures.extend([401])
    with pytest.raises(AuthError):
        open_store(spec(emu))
    with open_store(spec(emu)) as store:
        store._sleep = lambda s: None  # type: ignore[method-assign]
        emu.failures.extend([503, 503])  # retried by the base, then answered
        assert store.info().count == N
