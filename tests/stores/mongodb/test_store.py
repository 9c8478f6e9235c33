"""The MongoDB Atlas store through pymongo against the wire-protocol emulator
(tests/emulators/mongodb_emulator.py), on collections LangChain's MongoDBAtlasVectorSearch
and LlamaIndex's wrote on their defaults: planted faults, scores per similarity, the
engine's ANN with its numCandidates and its exact search, read-only from the command log,
credentials never printed."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.commands.check_index import CheckIndexSettings, check_index
from indexcheck.commands.probe_scale import probe_scale
from indexcheck.errors import AuthError, BackendUnavailableError, FilterError, InputError
from indexcheck.inputs.corpus import corpus_from_pairs
from indexcheck.stores import open_store
from indexcheck.testing import HashEmbedder
from tests.builders import mongodb as build
from tests.builders.search_engines import lc_embeddings
from tests.emulators.mongodb_emulator import Emulator, writes
from tests.store_contract import check_store_contract
from tests.stores.searchengine_support import (
    EMBEDDER,
    N,
    buggy,
    chunks_file,
    corpus,
    fixed_embeddings,
    unit,
)

pytest.importorskip("pymongo")
pytest.importorskip("langchain_mongodb")

SECRET = "s3cret-Pa55word"


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("INDEXCHECK_VECTOR_CACHE", str(tmp_path / "vcache"))
    for name in ("MONGODB_URI", "MONGODB_PASSWORD"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def emu() -> Iterator[Emulator]:
    e = Emulator()
    yield e
    e.stop()


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def spec(e: Emulator, coll: str = "docs", **extra: Any) -> str:
    tail = "".join(f"&{k}={v}" for k, v in extra.items())
    return f"mongodb:{e.url}?db=rag&collection={coll}{tail}"


def built(e: Emulator, embedding: Any = None) -> tuple[list[str], list[str]]:
    texts, metas = corpus()
    ids = build.langchain_mongo(e.url, "rag", "docs", texts, metas, embedding or lc_embeddings())
    return ids, texts


# -- the planted-fault suite on LangChain's defaults ------------------------------------------


def test_contract_on_the_collection_langchain_writes(emu: Emulator) -> None:
    texts = [f"distinct text {i}" for i in range(40)]
    ids = build.langchain_mongo(emu.url, "rag", "docs", texts, None, lc_embeddings())
    first = len(emu.commands)
    with open_store(spec(emu)) as store:
        check_store_contract(store, ids, HashEmbedder(32).embed(texts))
        info = store.info()
        assert (info.metric, info.score, info.details["vector_field"]) == (
            "cosine",
            "(1+cos)/2",
            "embedding",
        )
        assert info.details["text_field"] == "text" and info.details["writer"] == "langchain"
        assert not store.ordered and info.approximate
    log = emu.commands[first:]
    assert writes(log) == [] and any(c[0] == "getMore" for c in log)  # scans page by getMore


def test_clean_index_passes_and_nothing_is_written(emu: Emulator, tmp_path: Path) -> None:
    ids, texts = built(emu)
    chunks = chunks_file(tmp_path / "c.jsonl", ids, texts)
    first = len(emu.commands)
    for extra in (["--sample", "40", "--seed", "1"], ["--all"]):
        r = run("check-index", "--store", spec(emu), "--embedder", EMBEDDER,
                "--chunks", str(chunks), *extra)  # fmt: skip
        assert r.exit_code == 0, r.output
    log = emu.commands[first:]
    assert writes(log) == [] and log
    # the full read is one server cursor sorted on _id, one batch held
    finds = [b for b in emu.bodies[first:] if "find" in b and not b.get("filter")
             and "limit" not in b]  # fmt: skip
    assert finds and all(b.get("sort") == {"_id": 1} and b.get("batchSize") for b in finds)


def test_shift_is_told_as_one_story_with_positions_from_chunks(
    emu: Emulator, tmp_path: Path
) -> None:
    texts, metas = corpus()
    ids = build.langchain_mongo(emu.url, "rag", "docs", texts, metas, buggy(lc_embeddings()),
                                batch_size=1000)  # fmt: skip
    chunks = chunks_file(tmp_path / "c.jsonl", ids, texts)
    first = len(emu.commands)
    r = run("check-index", "--store", spec(emu), "--embedder", EMBEDDER, "--all",
            "--chunks", str(chunks), "--json", str(tmp_path / "r.json"))  # fmt: skip
    assert r.exit_code == 1, r.output
    data = json.loads((tmp_path / "r.json").read_text())
    (shift,) = [f for f in data["findings"] if f["kind"] == "shift"]
    assert shift["details"]["start_id"] == ids[34]
    assert [s["trigger_id"] for s in shift["details"]["stretches"]] == [ids[33], ids[70]]
    assert writes(emu.commands[first:]) == []


def test_on_langchains_default_batches_the_shift_ends_at_the_batch_edge(
    emu: Emulator, tmp_path: Path
) -> None:
    """langchain-mongodb embeds 100 texts per call (add_texts' batch_size), so the seed bug
    restarts at chunk 100: 34-69 hold their neighbour's vector, 71-99 the one two before,
    100 on are right. Each step of the offset follows a repeated text (33, 70), the
    positional cache's signature: ONE finding names that cache (never a duplicated or a
    dropped item), says the shift stops at 99, and blames exactly the shifted chunks."""
    texts, metas = corpus()
    ids = build.langchain_mongo(emu.url, "rag", "docs", texts, metas, buggy(lc_embeddings()))
    chunks = chunks_file(tmp_path / "c.jsonl", ids, texts)
    r = run("check-index", "--store", spec(emu), "--embedder", EMBEDDER, "--all",
            "--chunks", str(chunks), "--json", str(tmp_path / "r.json"))  # fmt: skip
    assert r.exit_code == 1, r.output
    data = json.loads((tmp_path / "r.json").read_text())
    (shift,) = [f for f in data["findings"] if f["kind"] == "shift"]
    d = shift["details"]
    assert (d["start_id"], d["model"]) == (ids[34], "skip_repeat")
    assert [s["trigger_id"] for s in d["stretches"]] == [ids[33], ids[70]]
    first_line = shift["message"].split(". ")[0]
    assert "positional cache that skips repeats" in first_line and "position 99" in first_line
    assert "duplicated" not in first_line and "dropped" not in first_line
    want = {ids[p] for p in [*range(34, 70), *range(71, 100)]}
    assert set(shift["chunk_ids"]) == want
    assert {c["id"] for c in data["chunks"] if c["status"] == "shift"} == want


def test_stale_missing_orphan_and_model_mismatch(emu: Emulator) -> None:
    ids, texts = built(emu)
    texts = list(texts)
    texts[10] += " Revised in 2024, see the new appendix on scope."
    from bson import ObjectId

    c = build.client(emu.url)
    c["rag"]["docs"].delete_one({"_id": ObjectId(ids[20])})
    c["rag"]["docs"].insert_one({"_id": "orphan-1", "embedding": [0.1] * 32, "text": "left"})
    c.close()
    with open_store(spec(emu)) as store:
        result = check_index(CheckIndexSettings(sample=None), store, HashEmbedder(32),
                             corpus_from_pairs(ids, texts))  # fmt: skip
        status = {c.id: str(c.status) for c in result.chunks if str(c.status) != "ok"}
        assert status == {ids[10]: "stale_vector", ids[20]: "missing_vector"}
        kinds = {f.kind for f in result.findings}
        assert any("orphan" in k for k in kinds), kinds
        other = check_index(CheckIndexSettings(sample=None), store,
                            HashEmbedder(32, model="other-model"),
                            corpus_from_pairs(ids, texts))  # fmt: skip
        assert any("mismatch" in f.kind for f in other.findings), [f.kind for f in other.findings]


def test_nan_zero_and_wrong_dimension_vectors_are_named(emu: Emulator) -> None:
    ids, texts = built(emu)
    from bson import ObjectId

    c = build.client(emu.url)
    coll = c["rag"]["docs"]
    coll.update_one({"_id": ObjectId(ids[5])}, {"$set": {"embedding": [float("nan")] * 32}})
    coll.update_one({"_id": ObjectId(ids[6])}, {"$set": {"embedding": [0.0] * 32}})
    coll.update_one({"_id": ObjectId(ids[7])}, {"$set": {"embedding": [0.5] * 16}})
    c.close()
    with open_store(spec(emu)) as store:
        result = check_index(CheckIndexSettings(sample=None), store, HashEmbedder(32),
                             corpus_from_pairs(ids, texts))  # fmt: skip
    status = {c.id: str(c.status) for c in result.chunks if str(c.status) != "ok"}
    assert status == {ids[5]: "non_finite", ids[6]: "zero_vector", ids[7]: "dimension_mismatch"}


# -- scores, ANN, exact -----------------------------------------------------------------------


@pytest.mark.parametrize(("similarity", "formula"), [
    ("cosine", "(1+cos)/2"), ("dotProduct", "(1+dot)/2"), ("euclidean", "1/(1+l2)"),
])  # fmt: skip
def test_probe_scale_names_each_similarity(emu: Emulator, similarity: str, formula: str) -> None:
    vecs = unit()
    if similarity == "euclidean":  # not unit length: the formula must hold on raw distances
        vecs = vecs * np.random.default_rng(1).uniform(0.5, 2.0, (len(vecs), 1)).astype(np.float32)
    texts = [f"t{i}" for i in range(len(vecs))]
    emb = fixed_embeddings(texts, vecs)
    build.langchain_mongo(emu.url, "rag", "docs", texts, None, emb, similarity=similarity)
    with open_store(spec(emu, num_candidates=400)) as store:
        info = store.info()
        assert (info.details["similarity"], info.score) == (similarity, formula)
        r = probe_scale(store)
    assert r.ok, r.message
    assert r.transform == formula


def test_compare_ann_sends_numcandidates_per_depth_and_exact_true(emu: Emulator) -> None:
    built(emu)
    first = len(emu.commands)
    r = run("compare-ann", "--store", spec(emu), "--queries", "10", "-k", "4",
            "--fetch", "4,10", "--sweep", "num_candidates=10,40", "--json", "-")  # fmt: skip
    assert r.exit_code in (0, 1), r.output
    assert "num_candidates" in r.stdout
    stages = [b["pipeline"][0]["$vectorSearch"] for b in emu.bodies[first:]
              if "aggregate" in b and "$vectorSearch" in b["pipeline"][0]]  # fmt: skip
    asked = {(s["limit"], s.get("numCandidates")) for s in stages if not s.get("exact")}
    assert {(4, 10), (10, 10), (4, 40), (10, 40)} <= asked
    exact = [s for s in stages if s.get("exact")]
    assert exact and all("numCandidates" not in s for s in exact)
    assert writes(emu.commands[first:]) == []


def test_a_narrow_breadth_misses_what_exact_search_finds(emu: Emulator) -> None:
    vecs = unit(1000, 16, seed=3)
    texts = [f"t{i}" for i in range(len(vecs))]
    emb = fixed_embeddings(texts, vecs)
    build.langchain_mongo(emu.url, "rag", "docs", texts, None, emb)
    q = unit(50, 16, seed=9)
    with open_store(spec(emu, num_candidates=10)) as narrow:
        _, ann = narrow.query(q, 10)
        _, exact = narrow.exact_query(q, 10)
    recall = np.mean([len(set(a) & set(e)) / 10 for a, e in zip(ann, exact, strict=True)])
    assert recall < 0.99  # a real HNSW at efSearch=10 misses neighbours
    with open_store(spec(emu, num_candidates=1000)) as wide:
        _, wide_ann = wide.query(q, 10)
    assert all(list(a) == list(e) for a, e in zip(wide_ann, exact, strict=True))


# -- every command, read-only -----------------------------------------------------------------


def test_every_command_runs_and_sends_no_write(emu: Emulator, tmp_path: Path) -> None:
    texts, metas = corpus()
    ids = build.langchain_mongo(emu.url, "rag", "docs", texts, metas, lc_embeddings(),
                                filters=["topic"])  # fmt: skip
    chunks = chunks_file(tmp_path / "c.jsonl", ids, texts)
    qs = tmp_path / "q.jsonl"
    qs.write_text("".join(json.dumps({"id": f"q{i}", "question": texts[i], "expected": [ids[i]]})
                          + "\n" for i in range(0, 40, 4)))  # fmt: skip
    first = len(emu.commands)
    s = spec(emu)
    cmds = [
        ["probe-scale", "--store", s],
        ["sweep-threshold", "--store", s, "--embedder", EMBEDDER, "--questions", str(qs)],
        ["diagnose", "--store", s, "--embedder", EMBEDDER, "--questions", str(qs),
         "--chunks", str(chunks)],
        ["diff-index", "--old", s, "--new", s, "--chunks-old", str(chunks),
         "--chunks-new", str(chunks)],
        ["compare-ann", "--store", s, "--queries", "5", "-k", "3",
         "--filter", '{"topic": "T1"}'],
    ]  # fmt: skip
    for args in cmds:
        r = run(*args)
        assert r.exit_code in (0, 1), (args[0], r.output)
    log = emu.commands[first:]
    assert writes(log) == [], writes(log)
    assert {"createSearchIndexes", "update"} <= {c[0] for c in writes(emu.commands[:first])}
    assert {c[0] for c in log} >= {"find", "aggregate", "count"}


def test_a_filter_on_a_path_the_index_does_not_declare_exits_2_naming_it(
    emu: Emulator,
) -> None:
    built(emu)  # LangChain's default index declares no filter paths
    r = run("compare-ann", "--store", spec(emu), "--queries", "3", "-k", "3",
            "--filter", '{"year": {"$gte": 2010}}')  # fmt: skip
    assert r.exit_code == 2, r.output
    assert "'$gte' on 'year'" in r.output and '"type": "filter"' in r.output
    # sent anyway, Atlas's refusal maps through the one error table to exit 2
    from indexcheck.stores.mongodb.errors import MONGODB_ERRORS

    c = build.client(emu.url)
    stage = {"index": "vector_index", "path": "embedding", "queryVector": [0.1] * 32,
             "numCandidates": 10, "limit": 3, "filter": {"year": 2010}}  # fmt: skip
    with pytest.raises(InputError, match="needs to be indexed as filter"):
        MONGODB_ERRORS.call("search", lambda: list(c["rag"]["docs"].aggregate(
            [{"$vectorSearch": stage}])), where="x", namespace="rag.docs")  # fmt: skip
    c.close()


# -- layouts, credentials, errors -------------------------------------------------------------


def test_llamaindex_layout_is_read_with_no_mapping_given(emu: Emulator) -> None:
    pytest.importorskip("llama_index.vector_stores.mongodb")
    vecs = unit(30, 8)
    ids = [f"node-{i}" for i in range(30)]
    build.llamaindex_mongo(emu.url, "rag", "li", ids, vecs, [f"c{i}" for i in range(30)],
                           [{"topic": f"T{i % 3}"} for i in range(30)],
                           filters=["metadata.topic"])  # fmt: skip
    with open_store(spec(emu, "li")) as store:
        info = store.info()
        assert (info.details["vector_field"], info.details["metadata_field"]) == (
            "embedding",
            "metadata",
        )
        assert info.details["writer"] == "llamaindex"
        check_store_contract(store, ids, vecs)
        b = next(store.iter_vectors(5))
        assert b.metadata is not None and b.metadata[0]["topic"] == "T0"
        assert b.texts is not None and b.texts[0] is not None and "c0" in b.texts[0]
        # the portable filter's field lands under LlamaIndex's metadata sub-document
        _, I = store.query(vecs[:1], 30, filter={"topic": "T1"})
        assert {i for i in I[0] if i is not None} == {ids[i] for i in range(1, 30, 3)}


def test_credentials_come_from_the_environment_and_are_never_printed(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    built(emu)
    host = emu.url.removeprefix("mongodb://")
    r = run("probe-scale", "--store", f"mongodb:mongodb://reader:{SECRET}@{host}?db=rag&"
            "collection=docs")  # fmt: skip
    assert r.exit_code == 2 and "MONGODB_PASSWORD" in r.output and SECRET not in r.output
    monkeypatch.setenv("MONGODB_PASSWORD", SECRET)
    r = run("probe-scale", "--store", f"mongodb:mongodb://reader@{host}?db=rag&collection=docs")
    assert r.exit_code == 3, r.output
    assert "refused the credentials" in r.output and "MONGODB_PASSWORD" in r.output
    assert SECRET not in r.output
    monkeypatch.delenv("MONGODB_PASSWORD")
    monkeypatch.setenv("MONGODB_URI", emu.url)
    out = tmp_path / "r.json"
    r = run("probe-scale", "--store", "mongodb:?db=rag&collection=docs", "--json", str(out))
    assert r.exit_code == 0, r.output
    assert "$MONGODB_URI" in out.read_text() and emu.url not in out.read_text()


def test_without_pymongo_the_error_names_the_pip_install(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pymongo", None)
    r = run("probe-scale", "--store", spec(emu))
    assert r.exit_code == 2 and "pip install 'indexcheck[mongodb]'" in r.output, r.output


def test_errors_name_the_fix(emu: Emulator) -> None:
    built(emu)
    with pytest.raises(InputError, match="no vector search index 'nope'"):
        open_store(spec(emu, index="nope"))
    r = run("probe-scale", "--store", "mongodb:mongodb://127.0.0.1:1?db=rag&collection=docs"
            "&timeout=0.3")  # fmt: skip
    assert r.exit_code == 3 and "no MongoDB server answered" in r.output
    r = run("probe-scale", "--store", "mongodb:http://x?db=rag&collection=docs")
    assert r.exit_code == 2 and "mongodb://" in r.output
    with open_store(spec(emu)) as store:
        with pytest.raises(FilterError):
            store.query(np.ones((1, 32), np.float32), 3, filter={"nope": 1})
    with pytest.raises(AuthError):
        from indexcheck.stores.mongodb.errors import MONGODB_ERRORS

        c = build.client(f"mongodb://u:{SECRET}@{emu.url.removeprefix('mongodb://')}")
        try:
            MONGODB_ERRORS.call("read", c.server_info, where="x", namespace="rag.docs")
        finally:
            c.close()


def test_a_retryable_code_is_retried_by_the_base_and_others_are_not(emu: Emulator) -> None:
    built(emu)
    with open_store(spec(emu)) as store:
        store._sleep = lambda s: None  # type: ignore[method-assign]
        emu.failures.extend([(262, "ExceededTimeLimit"), (262, "ExceededTimeLimit")])
        assert store.info().count == N
        emu.failures.append((8000, "AtlasError"))
        with pytest.raises(BackendUnavailableError, match="code 8000: injected AtlasError"):
            store.info()
