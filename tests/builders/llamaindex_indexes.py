"""Test-only: LlamaIndex-built indexes on the framework corpus, with LlamaIndex's defaults.

Every builder makes ``TextNode``s (id = chunk id, metadata ``file`` and ``title``) and
builds ``VectorStoreIndex(nodes, embed_model=..., storage_context=...)``; LlamaIndex then
embeds each node's ``get_content(MetadataMode.EMBED)``: the metadata header and the text.
``mode`` is one of ``framework_corpus.MODES``. Each returns a :class:`Built`.

- ``build_simple``: the default ``SimpleVectorStore``, ``storage_context.persist(DIR)``;
- ``build_faiss``: ``FaissVectorStore(faiss.IndexFlatL2(d))`` as LlamaIndex's docs show,
  persisted the same way (the faiss file is written as ``default__vector_store.json``);
- ``build_chroma``: ``ChromaVectorStore`` over a ``chromadb.PersistentClient`` collection
  made with Chroma's defaults (space l2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.builders.framework_corpus import framework_corpus, llamaindex_embedding


@dataclass
class Built:
    """Where a framework put the index, and the spec indexcheck should open it with."""

    framework: str
    layout: str
    mode: str
    path: Path | None
    spec: str
    ids: list[str]
    details: dict[str, Any] = field(default_factory=dict)


def make_nodes(metadata: bool = True) -> list[Any]:
    from llama_index.core.schema import TextNode

    c = framework_corpus()
    return [
        TextNode(id_=i, text=t, metadata=dict(m) if metadata else {})
        for i, t, m in zip(c.ids, c.texts, c.metadata, strict=True)
    ]


def build_simple(root: Path, mode: str, metadata: bool = True) -> Built:
    from llama_index.core import VectorStoreIndex

    folder = root / f"li-simple-{mode}{'' if metadata else '-bare'}"
    nodes = make_nodes(metadata)
    index = VectorStoreIndex(nodes, embed_model=llamaindex_embedding(mode))
    index.storage_context.persist(str(folder))
    return Built(
        "llamaindex", "simple", mode, folder, f"llamaindex:{folder}", [n.id_ for n in nodes]
    )


def build_faiss(root: Path, mode: str) -> Built:
    import faiss
    from llama_index.core import StorageContext, VectorStoreIndex
    from llama_index.vector_stores.faiss import FaissVectorStore

    folder = root / f"li-faiss-{mode}"
    nodes = make_nodes()
    store = FaissVectorStore(faiss_index=faiss.IndexFlatL2(384))
    ctx = StorageContext.from_defaults(vector_store=store)
    index = VectorStoreIndex(nodes, embed_model=llamaindex_embedding(mode), storage_context=ctx)
    index.storage_context.persist(str(folder))
    return Built(
        "llamaindex", "faiss", mode, folder, f"llamaindex:{folder}", [n.id_ for n in nodes]
    )


def build_chroma(root: Path, mode: str) -> Built:
    import chromadb
    from llama_index.core import StorageContext, VectorStoreIndex
    from llama_index.vector_stores.chroma import ChromaVectorStore

    folder = root / f"li-chroma-{mode}"
    client = chromadb.PersistentClient(path=str(folder))
    collection = client.get_or_create_collection("llamaindex")
    store = ChromaVectorStore(chroma_collection=collection)
    ctx = StorageContext.from_defaults(vector_store=store)
    nodes = make_nodes()
    VectorStoreIndex(nodes, embed_model=llamaindex_embedding(mode), storage_context=ctx)
    spec = f"chroma:{folder}?collection=llamaindex"
    return Built("llamaindex", "chroma", mode, folder, spec, [n.id_ for n in nodes],
                 {"collection": "llamaindex"})  # fmt: skip


def read_chroma_rows(built: Built) -> dict[str, Any]:
    """ids, embeddings, documents and metadatas from the Chroma collection (test helper)."""
    import chromadb

    client = chromadb.PersistentClient(path=str(built.path))
    col = client.get_collection(built.details["collection"])
    got = col.get(ids=built.ids, include=["embeddings", "documents", "metadatas"])
    order = {i: k for k, i in enumerate(got["ids"])}
    idx = [order[i] for i in built.ids]
    return {
        "ids": list(built.ids),
        "embeddings": [got["embeddings"][k] for k in idx],
        "documents": [got["documents"][k] for k in idx],
        "metadatas": [got["metadatas"][k] for k in idx],
    }


def build_pgvector(dsn: str, mode: str) -> Built:
    """``llama_index.vector_stores.postgres.PGVectorStore.from_params`` with its defaults:
    table ``data_<name>`` (id bigserial, text, metadata_ json with ``_node_content``,
    node_id, embedding)."""
    import asyncio
    from urllib.parse import urlsplit

    from llama_index.core import StorageContext, VectorStoreIndex
    from llama_index.vector_stores.postgres import PGVectorStore

    parts = urlsplit(dsn)
    name = f"li_{mode}"
    store = PGVectorStore.from_params(
        database=parts.path.lstrip("/"), host=parts.hostname, port=str(parts.port),
        user=parts.username, password=parts.password, table_name=name, embed_dim=384,
    )  # fmt: skip
    ctx = StorageContext.from_defaults(vector_store=store)
    nodes = make_nodes()
    VectorStoreIndex(nodes, embed_model=llamaindex_embedding(mode), storage_context=ctx)
    asyncio.run(store.close())
    base = dsn.split("?", 1)[0]
    spec = f"pgvector:{base}?table=data_{name}&id=node_id&text=text&order=id"
    return Built("llamaindex", "pgvector", mode, None, spec, [n.id_ for n in nodes],
                 {"table": f"data_{name}", "dsn": dsn})  # fmt: skip
