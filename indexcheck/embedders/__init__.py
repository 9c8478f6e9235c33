"""Embedding providers, one module each, opened from a spec string.

``minilm`` (default, offline), ``mistral[:MODEL]``, ``st:NAME_OR_PATH``,
``py:module:function``. Schemes resolve through the entry point group
``indexcheck.embedders`` (an entry point names a function ``open(rest) -> Embedder``,
``rest`` being what follows ``scheme:``); the built-in ones register there too, with
:data:`BUILTIN` as the fallback for a source checkout. Heavy SDKs are imported only
when their provider is opened.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

from ..errors import SpecError
from ..retry import RetryPolicy
from .base import BaseEmbedder, Embedder, EmbedStats

__all__ = [
    "BUILTIN",
    "DEFAULT_EMBEDDER",
    "ENTRY_POINT_GROUP",
    "BaseEmbedder",
    "EmbedStats",
    "Embedder",
    "RetryPolicy",
    "open_embedder",
]

DEFAULT_EMBEDDER = "minilm"
ENTRY_POINT_GROUP = "indexcheck.embedders"

#: scheme -> "module:function" of the built-in providers (the same as their entry points)
BUILTIN: dict[str, str] = {
    "minilm": "indexcheck.embedders:open_minilm",
    "mistral": "indexcheck.embedders:open_mistral",
    "st": "indexcheck.embedders:open_st",
    "py": "indexcheck.embedders:open_py",
}


def open_minilm(rest: str) -> Embedder:
    from .onnx_minilm import MiniLMEmbedder

    return MiniLMEmbedder()


def open_mistral(rest: str) -> Embedder:
    from .mistral import from_spec

    return from_spec(rest)


def open_st(rest: str) -> Embedder:
    from .sentence_transformers import SentenceTransformerEmbedder

    if not rest:
        raise SpecError("st: needs a model name or path, e.g. st:all-MiniLM-L6-v2")
    return SentenceTransformerEmbedder(rest)


def open_py(rest: str) -> Embedder:
    from .python_hook import PythonHookEmbedder

    return PythonHookEmbedder(rest)


def _registered() -> dict[str, EntryPoint]:
    found = {ep.name.lower(): ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    for scheme, target in BUILTIN.items():
        found.setdefault(scheme, EntryPoint(scheme, target, ENTRY_POINT_GROUP))
    return found


def open_embedder(spec: str | None = None) -> Embedder:
    """Open an embedder from its spec; ``None`` gives the embedded default."""
    spec = (spec or DEFAULT_EMBEDDER).strip()
    scheme, _, rest = spec.partition(":")
    ep = _registered().get(scheme.lower())
    if ep is None:
        raise SpecError(
            f"unknown embedder '{spec}'; use minilm, mistral[:MODEL], st:NAME_OR_PATH "
            "or py:module:function"
        )
    try:
        opener = ep.load()
    except ImportError as exc:
        raise SpecError(
            f"the embedder plugin for '{scheme}' ({ep.value}) cannot be imported ({exc}); "
            "reinstall the package that provides it"
        ) from None
    embedder: Embedder = opener(rest)
    return embedder
