"""Vector store backends, one module each, opened from a spec string.

Schemes resolve through the entry point group ``indexcheck.stores``: indexcheck registers
its own stores there (see pyproject.toml), and ``pip install indexcheck-foo`` adds a
scheme the same way. An entry point names a :class:`BaseStore` subclass (opened with
``cls.open(spec, options)``) or a function ``open_store(spec, options)``. A source
checkout that was never installed falls back to :data:`BACKENDS`. SDKs are imported
lazily, so ``import indexcheck`` stays light.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from ..errors import SpecError
from .base import BaseStore, Fetched, StoreInfo, StoreSpec, VectorBatch, VectorStore
from .params import Choice, Float, Int, Param, Str, with_params

__all__ = [
    "BACKENDS",
    "ENTRY_POINT_GROUP",
    "BaseStore",
    "Choice",
    "Fetched",
    "Float",
    "Int",
    "Param",
    "Str",
    "StoreInfo",
    "StoreOptions",
    "StoreSpec",
    "VectorBatch",
    "VectorStore",
    "open_store",
    "store_class",
    "sweep_spec",
    "with_params",
]

ENTRY_POINT_GROUP = "indexcheck.stores"

#: scheme -> "module:Class" of the built-in stores (the same as their entry points)
BACKENDS: dict[str, str] = {
    "faiss": "indexcheck.stores.faiss_store:FaissStore",
    "langchain-faiss": "indexcheck.stores.faiss_store:FaissStore",
    "parquet": "indexcheck.stores.parquet:ParquetStore",
    "jsonl": "indexcheck.stores.parquet:JsonlStore",
    "upstash": "indexcheck.stores.upstash:UpstashStore",
    "pgvector": "indexcheck.stores.pgvector:PgvectorStore",
    "chroma": "indexcheck.stores.chroma:ChromaStore",
    "qdrant": "indexcheck.stores.qdrant:QdrantStore",
    "milvus": "indexcheck.stores.milvus:MilvusStore",
    "lancedb": "indexcheck.stores.lancedb:LanceDBStore",
    "llamaindex": "indexcheck.stores.llamaindex:LlamaIndexStore",
}


@dataclass(frozen=True)
class StoreOptions:
    """Options that are not part of the spec string."""

    trust_pickle: bool = False


def _registered() -> dict[str, EntryPoint]:
    """scheme -> entry point, from installed distributions (the built-in table as fallback)."""
    found = {ep.name.lower(): ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    for scheme, target in BACKENDS.items():
        found.setdefault(scheme, EntryPoint(scheme, target, ENTRY_POINT_GROUP))
    return found


def store_class(scheme: str) -> Any:
    """What the scheme's entry point names (a BaseStore subclass or an opener function)."""
    registered = _registered()
    ep = registered.get(scheme.lower())
    if ep is None:
        known = ", ".join(sorted(registered))
        raise SpecError(f"unknown store '{scheme}'; use one of: {known}")
    try:
        return ep.load()
    except ImportError as exc:
        raise SpecError(
            f"the store plugin for '{scheme}' ({ep.value}) cannot be imported ({exc}); "
            "reinstall the package that provides it"
        ) from None


def open_store(spec: str, options: StoreOptions | None = None) -> VectorStore:
    """Open a store from ``scheme:location?params``; SpecError (exit 2) for an unknown
    scheme, an unknown option (with a did-you-mean) or an option value out of range."""
    parsed = StoreSpec.parse(spec)
    if parsed.scheme.lower() not in _registered():
        known = ", ".join(sorted(_registered()))
        raise SpecError(f"unknown store '{parsed.scheme}' in '{spec}'; use one of: {known}")
    target = store_class(parsed.scheme)
    opts = options or StoreOptions()
    if isinstance(target, type) and issubclass(target, BaseStore):
        return target.open(parsed, opts)
    store: VectorStore = target(parsed, opts)
    return store


def sweep_spec(spec: str, key: str, value: int) -> str:
    """``spec`` with the search parameter ``key`` set to ``value``, for compare-ann
    ``--sweep``; SpecError when the store does not declare ``key`` sweepable."""
    parsed = StoreSpec.parse(spec)
    target = store_class(parsed.scheme)
    allowed: tuple[str, ...] = tuple(getattr(target, "sweepable", ()))
    if key not in allowed:
        hint = (
            f"{parsed.scheme} accepts: {', '.join(allowed)}"
            if allowed
            else "only faiss, lancedb and pgvector specs take a search parameter"
        )
        raise SpecError(f"--sweep {key}: {parsed.scheme} has no search parameter {key}; {hint}")
    return with_params(spec, **{key: value})
