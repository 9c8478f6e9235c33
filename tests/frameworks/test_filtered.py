"""LangChain- and LlamaIndex-built indexes with metadata, filtered by that metadata: the
store's filtered search returns what the framework's own filtered search returns (LangChain
``FAISS.similarity_search_with_score_by_vector(filter=...)``, LlamaIndex
``SimpleVectorStore.query`` with the translated ``MetadataFilters``), and exact truth
under the filter equals numpy over the matching rows."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from indexcheck.commands.compare_ann import CompareAnnSettings, compare_ann
from indexcheck.commands.kit.filtered_truth import filtered_ground_truth
from indexcheck.filters import evaluate, parse_filter, translate
from indexcheck.stores import StoreOptions, open_store
from tests.builders import langchain_indexes, llamaindex_indexes
from tests.builders.framework_corpus import embed_correct, framework_corpus

pytest.importorskip("langchain_community")
pytest.importorskip("llama_index.core")

K = 4


def _filters() -> list[dict[str, Any]]:
    files = Counter(m["file"] for m in framework_corpus().metadata)
    common, rare = files.most_common()[0][0], files.most_common()[-1][0]
    # $nin, not $ne: LangChain's FAISS filter spells "not equal" $neq
    return [{"file": common}, {"file": {"$in": [rare, common]}}, {"file": {"$nin": [common]}}]


def _queries() -> np.ndarray:
    return embed_correct(["how do I rotate the keys", "what does the cache hold"])


def _numpy_top(store: Any, f: dict[str, Any], metric: str) -> list[list[str]]:
    c = framework_corpus()
    batch = next(iter(store.iter_vectors(10_000)))
    vec = {i: v for i, v in zip(batch.ids, batch.vectors, strict=True)}
    rows = np.flatnonzero(evaluate(parse_filter(f), c.metadata))
    ids = [c.ids[r] for r in rows]
    x = np.stack([vec[i] for i in ids])
    q = _queries()
    if metric == "l2":
        score = -((q[:, None, :] - x[None, :, :]) ** 2).sum(axis=2)
    else:
        score = q @ x.T / np.linalg.norm(x, axis=1) / np.linalg.norm(q, axis=1)[:, None]
    return [[ids[j] for j in np.argsort(-s, kind="stable")[:K]] for s in score]


@pytest.fixture(scope="module")
def lc_faiss(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return langchain_indexes.build_faiss(tmp_path_factory.mktemp("lc"), "correct")


@pytest.fixture(scope="module")
def li_simple(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return llamaindex_indexes.build_simple(tmp_path_factory.mktemp("li"), "correct")


@pytest.mark.parametrize("i", range(3))
def test_langchain_faiss_filter_matches_langchain(lc_faiss: Any, i: int) -> None:
    from langchain_community.vectorstores import FAISS

    from tests.builders.framework_corpus import langchain_embeddings

    f = _filters()[i]
    lc = FAISS.load_local(
        str(lc_faiss.path),
        langchain_embeddings("correct"),
        index_name="docs",
        allow_dangerous_deserialization=True,
    )
    with open_store(lc_faiss.spec, StoreOptions(trust_pickle=True)) as store:
        _, Ix = store.query(_queries(), K, f)
        truth, ft = filtered_ground_truth(store, _queries(), [f, f], K, "l2")
        numpy_top = _numpy_top(store, f, "l2")
    for qi, q in enumerate(_queries()):
        docs = lc.similarity_search_with_score_by_vector(q.tolist(), k=K, filter=f)
        assert [d.id for d, _ in docs] == list(Ix[qi]), f
    assert truth.ids.tolist() == numpy_top
    assert ft.matching[0] == int(evaluate(parse_filter(f), framework_corpus().metadata).sum())


@pytest.mark.parametrize("i", range(3))
def test_llamaindex_filter_matches_llamaindex(li_simple: Any, i: int) -> None:
    from llama_index.core import StorageContext
    from llama_index.core.vector_stores.types import VectorStoreQuery

    f = _filters()[i]
    ctx = StorageContext.from_defaults(persist_dir=str(li_simple.path))
    native = translate(parse_filter(f), "llamaindex")
    with open_store(li_simple.spec) as store:
        _, Ix = store.query(_queries(), K, f)
        truth, _ = filtered_ground_truth(store, _queries(), [f, f], K, "cos")
        numpy_top = _numpy_top(store, f, "cos")
    for qi, q in enumerate(_queries()):
        got = ctx.vector_store.query(
            VectorStoreQuery(query_embedding=q.tolist(), similarity_top_k=K, filters=native)
        )
        assert list(got.ids or []) == list(Ix[qi]), f
    assert truth.ids.tolist() == numpy_top


def test_compare_ann_on_langchain_faiss_with_a_filter(lc_faiss: Any, tmp_path: Path) -> None:
    f = _filters()[0]
    with open_store(lc_faiss.spec, StoreOptions(trust_pickle=True)) as store:
        result = compare_ann(CompareAnnSettings(k=K, fetch=[K], filters=[f, f]), store, _queries())
    row = result.by_fetch[0]
    assert row.recall_at_k == 1.0 and row.short_result_rate == 0.0  # a flat index
    assert result.filters and result.filters[0]["filter"] == {"file": {"$eq": f["file"]}}
