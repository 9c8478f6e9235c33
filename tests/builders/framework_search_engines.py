"""Test-only: the framework corpus indexed into Elasticsearch and OpenSearch by LangChain and
LlamaIndex themselves, on their defaults, through the loopback emulator
(tests/emulators/search_engine_emulator.py).

- LangChain ``ElasticsearchStore`` (dense_vector ``vector``, ``text``, ``metadata``; the
  emulated 8.15 server maps it ``int8_hnsw`` as real 8.14+ servers do) and
  ``OpenSearchVectorSearch`` (``vector_field``, nmslib/l2, its defaults);
- LlamaIndex ``ElasticsearchStore`` and ``OpensearchVectorStore`` over
  ``OpensearchVectorClient`` (``embedding``, ``content``, ``metadata`` holding the node as
  ``_node_content``): LlamaIndex embeds each node's metadata header and text.

Each build returns a :class:`~tests.builders.llamaindex_indexes.Built` whose spec opens it.
"""

from __future__ import annotations

import warnings
from typing import Any

from tests.builders.framework_corpus import (
    framework_corpus,
    langchain_embeddings,
    llamaindex_embedding,
)
from tests.builders.llamaindex_indexes import Built, make_nodes

#: where the layout lives: elasticsearch or opensearch
SCHEMES = ("elasticsearch", "opensearch")


def _spec(scheme: str, url: str, index: str) -> str:
    return f"{scheme}:{url}?index={index}"


def build_langchain(scheme: str, url: str, mode: str) -> Built:
    """LangChain's store for ``scheme`` on its defaults, ids given (the corpus ids)."""
    c = framework_corpus()
    index = f"lc-{mode}"
    if scheme == "elasticsearch":
        from langchain_elasticsearch import ElasticsearchStore

        store = ElasticsearchStore(
            index_name=index, embedding=langchain_embeddings(mode), es_url=url
        )
        store.add_texts(c.texts, metadatas=c.metadata, ids=c.ids)
        store.client.close()
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from langchain_community.vectorstores import OpenSearchVectorSearch

        os_store = OpenSearchVectorSearch(
            opensearch_url=url, index_name=index, embedding_function=langchain_embeddings(mode)
        )
        os_store.add_texts(c.texts, metadatas=c.metadata, ids=c.ids)
    return Built("langchain", scheme, mode, None, _spec(scheme, url, index), list(c.ids))


def build_llamaindex(scheme: str, url: str, mode: str) -> Built:
    """LlamaIndex's store for ``scheme`` under ``VectorStoreIndex`` on its defaults."""
    from llama_index.core import StorageContext, VectorStoreIndex

    index = f"li-{mode}"
    nodes = make_nodes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        if scheme == "elasticsearch":
            from llama_index.vector_stores.elasticsearch import ElasticsearchStore

            store: Any = ElasticsearchStore(index_name=index, es_url=url)
        else:
            from llama_index.vector_stores.opensearch import (
                OpensearchVectorClient,
                OpensearchVectorStore,
            )

            store = OpensearchVectorStore(OpensearchVectorClient(url, index, 384))
        ctx = StorageContext.from_defaults(vector_store=store)
        VectorStoreIndex(nodes, embed_model=llamaindex_embedding(mode), storage_context=ctx)
    return Built(
        "llamaindex", scheme, mode, None, _spec(scheme, url, index), [n.id_ for n in nodes]
    )
