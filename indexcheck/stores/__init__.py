"""Vector store backends, one module each, opened from a spec string.

Each backend module defines ``open_store(spec: StoreSpec, options: StoreOptions) ->
VectorStore`` and imports its SDK lazily, so ``import indexcheck`` stays light.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from ..errors import SpecError
from .base import Fetched, StoreInfo, StoreSpec, VectorBatch, VectorStore

__all__ = [
    "BACKENDS",
    "Fetched",
    "StoreInfo",
    "StoreOptions",
    "StoreSpec",
    "VectorBatch",
    "VectorStore",
    "open_store",
]

#: scheme -> module under indexcheck.stores
BACKENDS: dict[str, str] = {
    "faiss": "faiss_store",
    "langchain-faiss": "faiss_store",
    "parquet": "parquet",
    "jsonl": "parquet",
    "upstash": "upstash",
    "pgvector": "pgvector",
    "chroma": "chroma",
    "qdrant": "qdrant",
    "milvus": "milvus",
    "lancedb": "lancedb",
}


@dataclass(frozen=True)
class StoreOptions:
    """Options that are not part of the spec string."""

    trust_pickle: bool = False


def open_store(spec: str, options: StoreOptions | None = None) -> VectorStore:
    """Open a store from ``scheme:location?params``; raises SpecError for unknown schemes."""
    parsed = StoreSpec.parse(spec)
    module_name = BACKENDS.get(parsed.scheme)
    if module_name is None:
        known = ", ".join(sorted(BACKENDS))
        raise SpecError(f"unknown store '{parsed.scheme}' in '{spec}'; use one of: {known}")
    module = importlib.import_module(f"{__name__}.{module_name}")
    store: VectorStore = module.open_store(parsed, options or StoreOptions())
    return store
