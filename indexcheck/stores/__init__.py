"""Vector store backends, one module each, opened from a spec string.

Schemes resolve through the one plugin manager (:mod:`indexcheck.plugins`, hook
``register_stores``): the built-in stores register there like any plugin, and ``pip install
indexcheck-foo`` adds a scheme the same way. A scheme names a :class:`BaseStore` subclass
(opened with ``cls.open(spec, options)``) or a function ``open_store(spec, options)``. SDKs
are imported lazily, so ``import indexcheck`` stays light.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import plugins
from ..errors import SpecError
from ..plugins.defaults import STORES as BACKENDS
from ..safety.redact import remember
from ..safety.secrets import spec_password
from ..safety.textsafe import visible
from .base import BaseStore, Fetched, StoreInfo, VectorBatch, VectorStore
from .params import Choice, Float, Int, Param, StoreSpec, Str, with_params

__all__ = [
    "BACKENDS",
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


@dataclass(frozen=True)
class StoreOptions:
    """Options that are not part of the spec string. ``lookups`` False: the caller looks
    few chunks up by id, if any (diff-index pairs by text; check-index --all reads the store
    in its order), so a ``parquet:`` store does not build its id map, nor refuse repeated
    ids, when it opens (:attr:`ids_checked` False): a first lookup of a few ids is one pass
    over the id column, and any other lookup builds the map."""

    trust_pickle: bool = False
    lookups: bool = True


def store_class(scheme: str) -> Any:
    """What the scheme's entry point names (a BaseStore subclass or an opener function)."""
    registry = plugins.registry("stores")
    target = registry.load(scheme)
    if target is None:
        known = ", ".join(registry.names())
        raise SpecError(f"unknown store '{visible(scheme)}'; use one of: {known}")
    return target


def open_store(
    spec: str, options: StoreOptions | None = None, *, trust_pickle: bool = False
) -> VectorStore:
    """Open a store from ``scheme:location?params``; SpecError (exit 2) for an unknown
    scheme, an unknown option (with a did-you-mean) or an option value out of range.
    ``trust_pickle`` (when no ``options`` are given) allows LangChain's index.pkl."""
    remember(spec_password(spec))  # a DSN password is scrubbed from every message
    parsed = StoreSpec.parse(spec)
    registry = plugins.registry("stores")
    target = registry.load(parsed.scheme)
    if target is None:
        known = ", ".join(registry.names())
        raise SpecError(
            f"unknown store '{visible(parsed.scheme)}' in '{visible(spec)}'; use one of: {known}"
        )
    opts = options or StoreOptions(trust_pickle=trust_pickle)
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
            else "only faiss, lancedb, pgvector and redis specs take a search parameter"
        )
        raise SpecError(f"--sweep {key}: {parsed.scheme} has no search parameter {key}; {hint}")
    return with_params(spec, **{key: value})
