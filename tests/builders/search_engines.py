"""Elasticsearch and OpenSearch test indexes written as users write them: LangChain's
``ElasticsearchStore`` and ``OpenSearchVectorSearch`` on their defaults (the strategy or
engine and space given where a test needs another), LlamaIndex's Elasticsearch store
on its defaults, and faults planted through the official clients (test-only writes)."""

from __future__ import annotations

import warnings
from typing import Any


def lc_embeddings(spec: str = "py:indexcheck.testing:HASH32") -> Any:
    from indexcheck.integrations.langchain.embeddings import embeddings

    return embeddings(spec)


def langchain_es(
    url: str, index: str, texts: list[str], metas: list[dict[str, Any]] | None,
    embedding: Any, distance: str | None = None,
) -> list[str]:  # fmt: skip
    """LangChain ``ElasticsearchStore.add_texts`` on defaults (``distance``: a
    ``distance_strategy`` such as ``DOT_PRODUCT``); the ids it returns."""
    from langchain_elasticsearch import ElasticsearchStore

    kw: dict[str, Any] = {} if distance is None else {"distance_strategy": distance}
    store = ElasticsearchStore(index_name=index, embedding=embedding, es_url=url, **kw)
    ids: list[str] = store.add_texts(texts, metas)
    store.client.close()
    return ids


def langchain_os(
    url: str, index: str, texts: list[str], metas: list[dict[str, Any]] | None,
    embedding: Any, **kw: Any,
) -> list[str]:  # fmt: skip
    """LangChain ``OpenSearchVectorSearch.add_texts`` (defaults: nmslib, l2; ``engine=``,
    ``space_type=`` where given); the ids it returns."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from langchain_community.vectorstores import OpenSearchVectorSearch

    store = OpenSearchVectorSearch(opensearch_url=url, index_name=index,
                                   embedding_function=embedding, **kw)  # fmt: skip
    ids: list[str] = store.add_texts(texts, metas, **kw)
    return ids


def client(flavor: str, url: str) -> Any:
    """The official client of ``flavor`` for test-only writes."""
    if flavor == "elasticsearch":
        from elasticsearch import Elasticsearch

        return Elasticsearch(url)
    from opensearchpy import OpenSearch

    return OpenSearch(hosts=[url])


def llamaindex_es(
    url: str, index: str, ids: list[str], vectors: Any, texts: list[str],
    metas: list[dict[str, Any]],
) -> None:  # fmt: skip
    """LlamaIndex's own ``ElasticsearchStore.add`` of nodes carrying their vectors (its
    layout: ``embedding`` dense_vector, ``content``, ``metadata`` with the node under
    ``_node_content``, ``doc_id`` and ``ref_doc_id``)."""
    from llama_index.core.schema import TextNode
    from llama_index.vector_stores.elasticsearch import ElasticsearchStore

    nodes = [
        TextNode(id_=i, text=t, metadata=dict(m), embedding=[float(x) for x in v])
        for i, v, t, m in zip(ids, vectors, texts, metas, strict=True)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        ElasticsearchStore(index_name=index, es_url=url).add(nodes)
