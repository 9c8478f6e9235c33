"""The built-in stores, embedders and judges, registered through the plugin hooks.

They register exactly as a third-party plugin does (:mod:`indexcheck.plugins`), by
``"module:attr"`` path, so nothing here imports an SDK. The built-in commands register in
``indexcheck/cli/app.py`` through ``register_commands``.
"""

from __future__ import annotations

from .hookspecs import Register, hookimpl

#: scheme -> "module:Class" of the built-in stores
STORES: dict[str, str] = {
    "faiss": "indexcheck.stores.faiss.store:FaissStore",
    "langchain-faiss": "indexcheck.stores.faiss.store:FaissStore",
    "parquet": "indexcheck.stores.files.store:ParquetStore",
    "jsonl": "indexcheck.stores.files.store:JsonlStore",
    "upstash": "indexcheck.stores.upstash.store:UpstashStore",
    "pgvector": "indexcheck.stores.pgvector.store:PgvectorStore",
    "chroma": "indexcheck.stores.chroma.store:ChromaStore",
    "qdrant": "indexcheck.stores.qdrant.store:QdrantStore",
    "milvus": "indexcheck.stores.milvus.store:MilvusStore",
    "lancedb": "indexcheck.stores.lancedb.store:LanceDBStore",
    "llamaindex": "indexcheck.stores.llamaindex.store:LlamaIndexStore",
    "sqlitevec": "indexcheck.stores.sqlitevec.store:SqliteVecStore",
    "pinecone": "indexcheck.stores.pinecone.store:PineconeStore",
    "redis": "indexcheck.stores.redis.store:RedisStore",
    "elasticsearch": "indexcheck.stores.elasticsearch.store:ElasticsearchStore",
    "opensearch": "indexcheck.stores.opensearch.store:OpenSearchStore",
    "weaviate": "indexcheck.stores.weaviate.store:WeaviateStore",
    "turbopuffer": "indexcheck.stores.turbopuffer.store:TurbopufferStore",
    "mongodb": "indexcheck.stores.mongodb.store:MongoStore",
}

#: scheme -> "module:function" of the built-in embedders, each ``open(rest) -> Embedder``
EMBEDDERS: dict[str, str] = {
    "minilm": "indexcheck.embedders:open_minilm",
    "mistral": "indexcheck.embedders:open_mistral",
    "st": "indexcheck.embedders:open_st",
    "py": "indexcheck.embedders:open_py",
}

#: scheme -> "module:function" of the built-in judges, each ``open(rest) -> Judge``
JUDGES: dict[str, str] = {
    "mistral": "indexcheck.judges:open_mistral_judge",
    "openai": "indexcheck.judges:open_openai_judge",
    "py": "indexcheck.judges:open_py_judge",
}


def _register_all(register: Register, table: dict[str, str]) -> None:
    for scheme, target in table.items():
        register(scheme, target)


@hookimpl
def register_stores(register: Register) -> None:
    _register_all(register, STORES)


@hookimpl
def register_embedders(register: Register) -> None:
    _register_all(register, EMBEDDERS)


@hookimpl
def register_judges(register: Register) -> None:
    _register_all(register, JUDGES)
