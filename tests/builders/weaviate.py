"""Test-only writers for Weaviate collections in the loopback emulator.

``langchain(emu, name, texts, metadatas, embeddings)`` builds through LangChain's
``WeaviateVectorStore`` on its defaults (text in property ``text``, metadata as properties by
auto-schema, uuid4 ids, ``client.batch.dynamic()``); ``llamaindex(emu, name, nodes)`` through
LlamaIndex's ``WeaviateVectorStore`` (``text`` plus ``_node_content``); ``collection(emu, name,
ids, vectors, ...)`` through the plain v4 client (``collections.create`` and ``insert_many``),
with named vectors, distance, ``ef`` and property tokenization when asked. Each returns the
ids in build order.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import weaviate

from tests.emulators.weaviate_emulator import WeaviateEmulator

FAST = "retries=2&retry_interval=0.001&timeout=5"


def spec(emu: WeaviateEmulator, name: str, extra: str = FAST) -> str:
    """``weaviate:http://127.0.0.1:PORT?collection=NAME&grpc_port=...``."""
    tail = f"&{extra}" if extra else ""
    return f"weaviate:{emu.url}?collection={name}&grpc_port={emu.grpc_port}{tail}"


@contextmanager
def client(emu: WeaviateEmulator) -> Iterator[Any]:
    auth = weaviate.auth.AuthApiKey(emu.api_key) if emu.api_key else None
    c = weaviate.connect_to_custom(
        http_host="127.0.0.1",
        http_port=emu.port,
        http_secure=False,
        grpc_host="127.0.0.1",
        grpc_port=emu.grpc_port,
        grpc_secure=False,
        auth_credentials=auth,
        skip_init_checks=True,
    )
    try:
        yield c
    finally:
        c.close()


def langchain(
    emu: WeaviateEmulator,
    name: str,
    texts: list[str],
    metadatas: list[dict[str, Any]] | None,
    embeddings: Any,
) -> list[str]:
    from langchain_weaviate import WeaviateVectorStore

    with client(emu) as c:
        store = WeaviateVectorStore(
            client=c, index_name=name, text_key="text", embedding=embeddings
        )
        metas = [dict(m) for m in metadatas] if metadatas is not None else None
        return [str(i) for i in store.add_texts(texts, metadatas=metas)]


def llamaindex(emu: WeaviateEmulator, name: str, texts: list[str], embed: Any) -> list[str]:
    from llama_index.core.schema import TextNode
    from llama_index.vector_stores.weaviate import WeaviateVectorStore

    vecs = np.asarray(embed(texts), dtype=np.float32)
    nodes = [TextNode(text=t, embedding=vecs[i].tolist()) for i, t in enumerate(texts)]
    with client(emu) as c:
        store = WeaviateVectorStore(weaviate_client=c, index_name=name)
        return [str(i) for i in store.add(nodes)]


def collection(
    emu: WeaviateEmulator,
    name: str,
    ids: list[str],
    vectors: np.ndarray,
    metadatas: list[dict[str, Any]] | None = None,
    *,
    distance: str = "cosine",
    named: list[str] | None = None,
    ef: int = -1,
    max_connections: int = 32,
    field_text: tuple[str, ...] = (),
    null_state: bool = False,
) -> list[str]:
    """Create ``name`` with the plain v4 client and insert ``vectors`` (the same vector
    under every name of ``named``); ``field_text`` properties get ``field`` tokenization."""
    from weaviate.classes.config import (
        Configure,
        DataType,
        Property,
        Tokenization,
        VectorDistances,
    )
    from weaviate.classes.data import DataObject

    dist = VectorDistances(distance)
    index = Configure.VectorIndex.hnsw(distance_metric=dist, ef=ef, max_connections=max_connections)
    props = [
        Property(name=p, data_type=DataType.TEXT, tokenization=Tokenization.FIELD)
        for p in field_text
    ]
    if named:
        config: Any = [
            Configure.Vectors.self_provided(name=n, vector_index_config=index) for n in named
        ]
    else:
        config = Configure.Vectors.self_provided(vector_index_config=index)
    inverted = Configure.inverted_index(index_null_state=True) if null_state else None
    with client(emu) as c:
        coll = c.collections.create(
            name, properties=props, vector_config=config, inverted_index_config=inverted
        )
        rows = []
        for i, vid in enumerate(ids):
            vec: Any = vectors[i].tolist()
            if named:
                vec = {n: vec for n in named}
            rows.append(
                DataObject(properties=(metadatas or [{}] * len(ids))[i], uuid=vid, vector=vec)
            )
        for start in range(0, len(rows), 500):
            res = coll.data.insert_many(rows[start : start + 500])
            assert not res.errors, res.errors
    return list(ids)
