"""MongoDB Atlas collections written by the frameworks, through the wire-protocol emulator
(tests/emulators/mongodb_emulator.py): LangChain's ``MongoDBAtlasVectorSearch`` and
LlamaIndex's ``MongoDBAtlasVectorSearch``, each on its defaults."""

from __future__ import annotations

from typing import Any

import numpy as np


def client(url: str) -> Any:
    from pymongo import MongoClient

    return MongoClient(url, serverSelectionTimeoutMS=5000)


def langchain_mongo(
    url: str, db: str, coll: str, texts: list[str], metas: list[dict[str, Any]] | None,
    embedding: Any, similarity: str = "cosine", filters: list[str] | None = None,
    batch_size: int | None = None,
) -> list[str]:  # fmt: skip
    """``MongoDBAtlasVectorSearch.add_texts`` on defaults (ObjectId ids it makes), after the
    vector index it creates (``create_vector_search_index``: ``similarity`` the
    ``relevance_score_fn``, ``filters`` the filter paths; ``batch_size`` of ``add_texts``,
    default 100: one embedding call per 100 texts); the ids it returns."""
    from langchain_mongodb import MongoDBAtlasVectorSearch

    c = client(url)
    try:
        store = MongoDBAtlasVectorSearch(c[db][coll], embedding, relevance_score_fn=similarity)
        dim = len(embedding.embed_query(texts[0]))
        store.create_vector_search_index(dimensions=dim, filters=filters)
        kw = {} if batch_size is None else {"batch_size": batch_size}
        return list(store.add_texts(texts, metas, **kw))
    finally:
        c.close()


def llamaindex_mongo(
    url: str, db: str, coll: str, ids: list[str], vectors: np.ndarray, texts: list[str],
    metas: list[dict[str, Any]], filters: list[str] | None = None,
) -> None:  # fmt: skip
    """LlamaIndex's ``MongoDBAtlasVectorSearch.add`` of TextNodes with given embeddings,
    and the vector index it creates (``create_vector_search_index``, cosine, ``filters``
    the filter paths, ``metadata.KEY`` for its layout)."""
    from llama_index.core.schema import TextNode
    from llama_index.vector_stores.mongodb import MongoDBAtlasVectorSearch
    from pymongo import AsyncMongoClient

    c = client(url)
    ac: Any = AsyncMongoClient(url)
    try:
        store = MongoDBAtlasVectorSearch(
            mongodb_client=c, async_mongodb_client=ac, db_name=db, collection_name=coll
        )
        store.create_vector_search_index(
            dimensions=int(vectors.shape[1]), path="embedding", similarity="cosine",
            filters=filters,
        )  # fmt: skip
        nodes = [
            TextNode(id_=i, text=t, metadata=m, embedding=v.tolist())
            for i, t, m, v in zip(ids, texts, metas, vectors, strict=True)
        ]
        store.add(nodes)
    finally:
        c.close()
