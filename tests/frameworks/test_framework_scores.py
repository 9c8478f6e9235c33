"""scales/framework_scores.py against the frameworks themselves.

Each catalogue entry must give, from the exact cosine of a query and a stored vector, the
score the framework hands the application for that pair (``similarity_search_with_
relevance_scores`` for LangChain, ``VectorStoreQueryResult.similarities`` or retriever
scores for LlamaIndex), on indexes the frameworks built.
"""

from __future__ import annotations

import contextlib
import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexcheck.scales.framework_scores import (
    FRAMEWORK_SCORES,
    cos_from_framework_score,
    framework_score_from_cos,
    framework_scores_for,
)
from tests.builders.framework_corpus import (
    ROOT,
    embed_correct,
    framework_corpus,
    langchain_embeddings,
)
from tests.frameworks.readers import read_rows

TOL = 2e-4
K = 6


def questions(n: int = 5) -> list[str]:
    lines = (ROOT / "fixtures" / "questions.jsonl").read_text().splitlines()
    return [json.loads(line)["question"] for line in lines[:n]]


def cos_by_id(rows, q: str) -> dict[str, float]:
    stored = rows.vectors / np.linalg.norm(rows.vectors, axis=1, keepdims=True)
    qv = embed_correct([q])[0]
    return dict(zip(rows.ids, (stored @ qv).tolist(), strict=True))


def assert_scores(entry: str, pairs: list[tuple[float, float]]) -> None:
    """pairs: (exact cosine, the framework's score)."""
    assert pairs
    cos = np.array([c for c, _ in pairs])
    got = np.array([s for _, s in pairs])
    want = framework_score_from_cos(entry, cos)
    np.testing.assert_allclose(want, got, atol=TOL, err_msg=entry)


def id_of_doc(doc) -> str:
    corpus = framework_corpus()
    if getattr(doc, "id", None):
        return str(doc.id)
    return corpus.ids[corpus.texts.index(doc.page_content)]


def langchain_pairs(store, rows) -> list[tuple[float, float]]:
    pairs = []
    for q in questions():
        cos = cos_by_id(rows, q)
        with _quiet():
            hits = store.similarity_search_with_relevance_scores(q, k=K)
        pairs += [(cos[id_of_doc(d)], float(s)) for d, s in hits]
    return pairs


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LangChain warns when a relevance is outside [0, 1]
        yield


@pytest.mark.parametrize(
    ("strategy", "entry"),
    [
        (None, "langchain-faiss-euclidean"),
        ("COSINE", "langchain-faiss-cosine"),
        ("MAX_INNER_PRODUCT", "langchain-faiss-max-inner-product"),
    ],
)
def test_langchain_faiss(framework_index, tmp_path, strategy, entry) -> None:
    from langchain_community.vectorstores import FAISS
    from langchain_community.vectorstores.utils import DistanceStrategy

    rows = read_rows(framework_index("langchain", "faiss", "correct"))
    if strategy is None:
        built = framework_index("langchain", "faiss", "correct")
        store = FAISS.load_local(
            str(built.path), langchain_embeddings("correct"), index_name="docs",
            allow_dangerous_deserialization=True,
        )  # fmt: skip
    else:
        c = framework_corpus()
        store = FAISS.from_texts(
            c.texts, langchain_embeddings("correct"), ids=c.ids,
            distance_strategy=DistanceStrategy[strategy],
        )  # fmt: skip
    assert_scores(entry, langchain_pairs(store, rows))
    assert FRAMEWORK_SCORES[entry].default == (strategy is None)


@pytest.mark.parametrize(
    ("space", "entry"),
    [(None, "langchain-chroma-l2"), ("cosine", "langchain-chroma-cosine"),
     ("ip", "langchain-chroma-ip")],
)  # fmt: skip
def test_langchain_chroma(framework_index, space, entry) -> None:
    from langchain_chroma import Chroma

    rows = read_rows(framework_index("langchain", "chroma", "correct"))
    if space is None:
        built = framework_index("langchain", "chroma", "correct")
        store = Chroma(
            collection_name="langchain", embedding_function=langchain_embeddings("correct"),
            persist_directory=str(built.path),
        )  # fmt: skip
    else:
        c = framework_corpus()
        store = Chroma(
            collection_name=f"lc-{space}", embedding_function=langchain_embeddings("correct"),
            collection_configuration={"hnsw": {"space": space}},
        )  # fmt: skip
        store.add_texts(c.texts, ids=c.ids)
    assert_scores(entry, langchain_pairs(store, rows))


@pytest.mark.parametrize(
    ("strategy", "entry"),
    [("COSINE", "langchain-pgvector-cosine"), ("EUCLIDEAN", "langchain-pgvector-euclidean"),
     ("MAX_INNER_PRODUCT", "langchain-pgvector-max-inner-product")],
)  # fmt: skip
def test_langchain_pgvector(framework_index, strategy, entry) -> None:
    from langchain_postgres import PGVector
    from langchain_postgres.vectorstores import DistanceStrategy

    built = framework_index("langchain", "pgvector", "correct")
    rows = read_rows(built)
    url = built.details["dsn"].replace("postgresql://", "postgresql+psycopg://", 1)
    store = PGVector(
        langchain_embeddings("correct"), connection=url,
        collection_name=built.details["collection"],
        distance_strategy=DistanceStrategy[strategy],
    )  # fmt: skip
    assert_scores(entry, langchain_pairs(store, rows))


@pytest.mark.parametrize(
    ("strategy", "entry"),
    [("COSINE_DISTANCE", "langchain-pgvectorstore-cosine"),
     ("EUCLIDEAN", "langchain-pgvectorstore-euclidean"),
     ("INNER_PRODUCT", "langchain-pgvectorstore-inner-product")],
)  # fmt: skip
def test_langchain_pgvectorstore(framework_index, strategy, entry) -> None:
    from langchain_postgres import PGEngine, PGVectorStore
    from langchain_postgres.v2.indexes import DistanceStrategy

    built = framework_index("langchain", "pgvectorstore", "correct")
    rows = read_rows(built)
    chunk_of = {u: c for c, u in built.details["uuid_of"].items()}
    url = built.details["dsn"].replace("postgresql://", "postgresql+psycopg://", 1)
    engine = PGEngine.from_connection_string(url=url)
    store = PGVectorStore.create_sync(
        engine=engine, table_name=built.details["table"],
        embedding_service=langchain_embeddings("correct"),
        distance_strategy=DistanceStrategy[strategy],
    )  # fmt: skip
    pairs = []
    for q in questions():
        cos = cos_by_id(rows, q)
        with _quiet():
            hits = store.similarity_search_with_relevance_scores(q, k=K)
        pairs += [(cos[chunk_of[d.id]], float(s)) for d, s in hits]
    assert_scores(entry, pairs)


def test_llamaindex_simple(framework_index) -> None:
    from llama_index.core import StorageContext, load_index_from_storage

    from tests.builders.framework_corpus import llamaindex_embedding

    built = framework_index("llamaindex", "simple", "correct")
    rows = read_rows(built)
    ctx = StorageContext.from_defaults(persist_dir=str(built.path))
    index = load_index_from_storage(ctx, embed_model=llamaindex_embedding("correct"))
    retriever = index.as_retriever(similarity_top_k=K)
    pairs = []
    for q in questions():
        cos = cos_by_id(rows, q)
        pairs += [(cos[h.node.node_id], float(h.score)) for h in retriever.retrieve(q)]
    assert_scores("llamaindex-simple", pairs)


@pytest.mark.parametrize("layout", ["faiss", "chroma"])
def test_llamaindex_vector_store_similarities(framework_index, layout) -> None:
    from llama_index.core.vector_stores.types import VectorStoreQuery

    built = framework_index("llamaindex", layout, "correct")
    rows = read_rows(built)
    if layout == "faiss":
        from llama_index.vector_stores.faiss import FaissVectorStore

        store = FaissVectorStore.from_persist_dir(str(built.path))
        # faiss rows -> node ids, as the index keeps them
        from indexcheck.inputs.formats.llamaindex import read_persist_dir

        row_id = dict(enumerate(read_persist_dir(built.path).ids))
    else:
        import chromadb
        from llama_index.vector_stores.chroma import ChromaVectorStore

        col = chromadb.PersistentClient(path=str(built.path)).get_collection("llamaindex")
        store = ChromaVectorStore(chroma_collection=col)
        row_id = None
    pairs = []
    for q in questions():
        cos = cos_by_id(rows, q)
        qv = embed_correct([q])[0].tolist()
        res = store.query(VectorStoreQuery(query_embedding=qv, similarity_top_k=K))
        ids = [row_id[int(i)] for i in res.ids] if row_id is not None else res.ids
        pairs += [(cos[i], float(s)) for i, s in zip(ids, res.similarities, strict=True)]
    assert_scores(f"llamaindex-{layout}-l2", pairs)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(FRAMEWORK_SCORES)), st.floats(-0.999, 0.999))
def test_round_trip_where_monotone(name: str, cos: float) -> None:
    entry = FRAMEWORK_SCORES[name]
    if not entry.relevance.monotone and cos <= 0:
        return  # the documented branch holds for cos > 0
    s = framework_score_from_cos(name, np.array([cos]))
    back = cos_from_framework_score(name, s)
    assert math.isclose(float(back[0]), cos, abs_tol=1e-6), (name, cos, s, back)


def test_catalogue_shape() -> None:
    for backend in ("faiss", "chroma", "pgvector", "llamaindex"):
        entries = framework_scores_for(backend)
        assert entries and entries[0].default
    for entry in FRAMEWORK_SCORES.values():
        assert entry.relevance.variable in ("cos", "dot", "l2")
        assert entry.source and entry.function
    # the documented inversion: a closer match gets a lower relevance
    s = framework_score_from_cos("langchain-faiss-max-inner-product", np.array([0.9, 0.5]))
    assert s[0] < s[1]


def test_llamaindex_pgvector(framework_index) -> None:
    import asyncio
    from urllib.parse import urlsplit

    from llama_index.core.vector_stores.types import VectorStoreQuery
    from llama_index.vector_stores.postgres import PGVectorStore

    built = framework_index("llamaindex", "pgvector", "correct")
    rows = read_rows(built)
    parts = urlsplit(built.details["dsn"])
    store = PGVectorStore.from_params(
        database=parts.path.lstrip("/"), host=parts.hostname, port=str(parts.port),
        user=parts.username, password=parts.password,
        table_name=built.details["table"].removeprefix("data_"), embed_dim=384,
    )  # fmt: skip
    pairs = []
    try:
        for q in questions():
            cos = cos_by_id(rows, q)
            qv = embed_correct([q])[0].tolist()
            res = store.query(VectorStoreQuery(query_embedding=qv, similarity_top_k=K))
            ids = [n.node_id for n in res.nodes]
            pairs += [(cos[i], float(s)) for i, s in zip(ids, res.similarities, strict=True)]
    finally:
        asyncio.run(store.close())
    assert_scores("llamaindex-pgvector", pairs)
