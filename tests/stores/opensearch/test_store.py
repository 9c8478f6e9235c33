"""The OpenSearch store through opensearch-py against the loopback emulator, behaving as
OpenSearch 2.11 to 3.1 (tests/emulators/search_engine_emulator.py), on indexes LangChain's
OpenSearchVectorSearch and LlamaIndex's OpensearchVectorStore wrote: the score per space,
engine and version measured (and the engine a mapping leaves to the server's default),
ef_search as the breadth, filters against numpy (and the short results of nmslib's
post-filter), planted faults, read-only from the request log, credentials never printed."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.commands.probe_scale import probe_scale
from indexcheck.errors import InputError
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

pytest.importorskip("opensearchpy")
pytest.importorskip("langchain_community")


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("INDEXCHECK_VECTOR_CACHE", str(tmp_path / "vcache"))
    for name in ("OPENSEARCH_USERNAME", "OPENSEARCH_PASSWORD"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def emu() -> Iterator[Emulator]:
    e = Emulator("opensearch", "2.19.1")
    yield e
    e.stop()


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def spec(e: Emulator, index: str = "docs", **extra: Any) -> str:
    return f"opensearch:{e.url}?index={index}" + "".join(f"&{k}={v}" for k, v in extra.items())


def test_contract_on_langchains_default_index(emu: Emulator) -> None:
    texts = [f"distinct text {i}" for i in range(40)]
    ids = build.langchain_os(emu.url, "docs", texts, None, build.lc_embeddings())
    first = len(emu.requests)
    with open_store(spec(emu)) as store:
        check_store_contract(store, ids, HashEmbedder(32).embed(texts))
        info = store.info()
        assert (info.metric, info.score) == ("l2", "1/(1+l2^2)")
        assert (info.details["vector_field"], info.details["engine"]) == ("vector_field", "nmslib")
        assert "512" in info.details["search_breadth"]
    assert writes(emu.requests[first:]) == []


@pytest.mark.parametrize(("version", "engine", "space", "formula"), [
    ("2.11.1", "nmslib", "cosinesimil", "1/(2-cos)"),
    ("2.11.1", "faiss", "cosinesimil", "1/(2-cos)"),
    ("2.11.1", "lucene", "cosinesimil", "(1+cos)/2"),
    ("2.19.1", "nmslib", "cosinesimil", "(1+cos)/2"),
    ("2.19.1", "faiss", "cosinesimil", "(1+cos)/2"),
    ("2.19.1", "faiss", "l2", "1/(1+l2^2)"),
    ("2.11.1", "lucene", "innerproduct", "1+dot|1/(1-dot)"),
    ("2.19.1", "faiss", "innerproduct", "1+dot|1/(1-dot)"),
    ("3.1.0", "faiss", "cosinesimil", "(1+cos)/2"),
    ("3.1.0", "lucene", "cosinesimil", "(1+cos)/2"),
    ("3.1.0", "faiss", "innerproduct", "1+dot|1/(1-dot)"),
])  # fmt: skip
def test_probe_scale_measures_each_space_engine_and_version(
    version: str, engine: str, space: str, formula: str
) -> None:
    e = Emulator("opensearch", version)
    try:
        vecs = unit()
        texts = [f"t{i}" for i in range(len(vecs))]
        build.langchain_os(e.url, "docs", texts, None, fixed_embeddings(texts, vecs), engine=engine,
                           space_type=space)  # fmt: skip
        with open_store(spec(e)) as store:
            assert store.info().score == formula
            r = probe_scale(store)
        assert r.ok, r.message
        assert r.transform == formula
    finally:
        e.stop()


def test_ef_search_is_the_breadth_compare_ann_measures(emu: Emulator) -> None:
    texts, metas = corpus()
    build.langchain_os(emu.url, "docs", texts, metas, build.lc_embeddings(), engine="faiss",
                       space_type="cosinesimil")  # fmt: skip
    first = len(emu.requests)
    r = run("compare-ann", "--store", spec(emu), "--queries", "10", "-k", "4", "--fetch",
            "4,10", "--sweep", "ef_search=4,64", "--json", "-")  # fmt: skip
    assert r.exit_code in (0, 1), r.output
    assert "ef_search" in r.stdout
    knns = [next(iter(b["query"]["knn"].values())) for b in emu.bodies[first:]
            if isinstance(b, dict) and "knn" in (b.get("query") or {})]  # fmt: skip
    asked = {(q["k"], (q.get("method_parameters") or {}).get("ef_search")) for q in knns}
    # the index as set (the index setting's ef_search), then each swept breadth, per depth
    assert {(4, None), (10, None), (4, 4), (10, 4), (4, 64), (10, 64)} <= asked
    assert writes(emu.requests[first:]) == []


def test_ef_search_before_2_16_is_refused_naming_the_setting() -> None:
    e = Emulator("opensearch", "2.11.1")
    try:
        build.langchain_os(e.url, "docs", ["a", "b"], None, build.lc_embeddings())
        r = run("probe-scale", "--store", spec(e, ef_search=64))
        assert r.exit_code == 2 and "knn.algo_param.ef_search" in r.output
    finally:
        e.stop()


def test_seeded_filters_equal_numpy_on_faiss_and_nmslib_comes_back_short(emu: Emulator) -> None:
    texts, metas = corpus()
    texts = [f"{t} (copy {i})" for i, t in enumerate(texts)]
    ids = build.langchain_os(emu.url, "docs", texts, metas, build.lc_embeddings(),
                             engine="faiss", space_type="cosinesimil")  # fmt: skip
    build.langchain_os(emu.url, "nms", texts, metas, build.lc_embeddings(),
                       engine="nmslib", space_type="cosinesimil")  # fmt: skip
    vecs = HashEmbedder(32).embed(texts)
    rng = random.Random(5)
    queries = vecs[rng.sample(range(N), 10)] + 0.05
    short = 0
    with open_store(spec(emu, ef_search=N)) as faiss_store, \
            open_store(spec(emu, "nms", ef_search=N)) as nmslib:  # fmt: skip
        for n in range(60):
            flt = random_filter(rng)
            q = queries[n % 10]
            want = truth("opensearch", vecs, metas, ids, q, flt, 5)
            _, I = faiss_store.query(q[None], 5, filter=flt)
            assert [i for i in I[0] if i is not None] == want, flt
            _, J = nmslib.query(q[None], 5, filter=flt)
            got = [i for i in J[0] if i is not None]
            short += len(got) < len(want)
    assert short > 0  # nmslib filters after the knn: fewer than k come back


def test_shift_is_one_story_and_nothing_is_written(emu: Emulator, tmp_path: Path) -> None:
    texts, metas = corpus()
    ids = build.langchain_os(emu.url, "docs", texts, metas, buggy(build.lc_embeddings()))
    chunks = chunks_file(tmp_path / "c.jsonl", ids, texts)
    first = len(emu.requests)
    r = run("check-index", "--store", spec(emu), "--embedder", EMBEDDER, "--all", "--chunks",
            str(chunks), "--json", str(tmp_path / "r.json"))  # fmt: skip
    assert r.exit_code == 1, r.output
    (shift,) = [f for f in json.loads((tmp_path / "r.json").read_text())["findings"]
                if f["kind"] == "shift"]  # fmt: skip
    assert shift["details"]["start_id"] == ids[34]
    assert [s["trigger_id"] for s in shift["details"]["stretches"]] == [ids[33], ids[70]]
    assert writes(emu.requests[first:]) == []
    assert any(p.endswith("/_search/scroll") for _, p, _ in emu.requests[first:])


def test_credentials_from_the_environment_never_printed(
    emu: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    build.langchain_os(emu.url, "docs", ["a", "b", "c"], None, build.lc_embeddings())
    emu.require_auth = ("admin", "Sup3r-secret!")
    r = run("probe-scale", "--store", spec(emu))
    assert r.exit_code == 3 and "OPENSEARCH_PASSWORD" in r.output
    monkeypatch.setenv("OPENSEARCH_USERNAME", "admin")
    monkeypatch.setenv("OPENSEARCH_PASSWORD", "Sup3r-secret!")
    with open_store(spec(emu)) as store:
        assert "Sup3r" not in repr(store) + store.spec and store.info().count == 3
    with pytest.raises(InputError, match="no index 'nope'"):
        open_store(spec(emu, "nope"))


@pytest.mark.parametrize(("version", "engine", "formula", "where"), [
    ("2.17.1", "nmslib", "1/(2-cos)", "after"),
    ("2.18.0", "nmslib", "1/(2-cos)", "after"),  # 2.18's faiss had no cosinesimil
    ("2.19.1", "faiss", "(1+cos)/2", "inside"),
    ("3.1.0", "faiss", "(1+cos)/2", "inside"),
])  # fmt: skip
def test_an_engine_the_mapping_leaves_out_is_the_servers_default_for_its_version(
    version: str, engine: str, formula: str, where: str
) -> None:
    e = Emulator("opensearch", version)
    try:
        vecs = unit(120)
        c = build.client("opensearch", e.url)
        c.indices.create(index="raw", body={
            "settings": {"index.knn": True},
            "mappings": {"properties": {
                "vec": {"type": "knn_vector", "dimension": 16, "space_type": "cosinesimil"},
                "text": {"type": "text"}}},
        })  # fmt: skip
        for i, v in enumerate(vecs):
            c.index(index="raw", id=f"d{i}", body={"vec": v.tolist(), "text": f"t{i}"})
        c.indices.refresh(index="raw")
        with open_store(spec(e, "raw")) as store:
            info = store.info()
            assert info.details["engine"].startswith(f"{engine} (not named in the mapping")
            assert info.details["filtering"].startswith(where)
            assert "server's default" in info.details["search_breadth"]
            assert info.score == formula
            r = probe_scale(store)
        assert r.ok and r.transform == formula, r.message
    finally:
        e.stop()


def test_llamaindex_layout_on_opensearch_3_is_read_with_no_mapping_given() -> None:
    """LlamaIndex's OpensearchVectorStore on its defaults (faiss, l2, ``embedding``,
    ``content``, the node in ``metadata._node_content``) on a 3.x server, where LangChain's
    own default engine (nmslib) can no longer create an index."""
    pytest.importorskip("llama_index.vector_stores.opensearch")
    from llama_index.core.schema import TextNode
    from llama_index.vector_stores.opensearch import OpensearchVectorClient, OpensearchVectorStore

    e = Emulator("opensearch", "3.1.0")
    try:
        vecs = unit(30, 8)
        ids = [f"node-{i}" for i in range(30)]
        nodes = [
            TextNode(id_=i, text=f"c{k}", metadata={"topic": f"T{k % 3}"}, embedding=v.tolist())
            for k, (i, v) in enumerate(zip(ids, vecs, strict=True))
        ]
        OpensearchVectorStore(OpensearchVectorClient(e.url, "li", 8)).add(nodes)
        first = len(e.requests)
        with open_store(spec(e, "li")) as store:
            info = store.info()
            assert (info.details["vector_field"], info.details["text_field"]) == (
                "embedding", "content")  # fmt: skip
            assert (info.details["engine"], info.score) == ("faiss", "1/(1+l2^2)")
            assert "= 100 (the index setting" in info.details["search_breadth"]
            check_store_contract(store, ids, vecs)
            got = store.fetch(ids[:1])
            assert got.texts == ["topic: T0\n\nc0"]  # what LlamaIndex embedded
        assert writes(e.requests[first:]) == []
        with pytest.raises(Exception, match="nmslib"):
            build.langchain_os(e.url, "lc", ["a", "b"], None, build.lc_embeddings())
    finally:
        e.stop()
