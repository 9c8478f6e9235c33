"""Embedding providers, one module each, opened from a spec string.

``minilm`` (default, offline), ``mistral[:MODEL]``, ``st:NAME_OR_PATH``,
``py:module:function``. Heavy SDKs are imported only when their provider is opened.
"""

from __future__ import annotations

from ..errors import SpecError
from .base import BaseEmbedder, Embedder, EmbedStats, RetryPolicy

__all__ = [
    "DEFAULT_EMBEDDER",
    "BaseEmbedder",
    "EmbedStats",
    "Embedder",
    "RetryPolicy",
    "open_embedder",
]

DEFAULT_EMBEDDER = "minilm"


def open_embedder(spec: str | None = None) -> Embedder:
    """Open an embedder from its spec; ``None`` gives the embedded default."""
    spec = (spec or DEFAULT_EMBEDDER).strip()
    scheme, _, rest = spec.partition(":")
    scheme = scheme.lower()
    if scheme == "minilm":
        from .onnx_minilm import MiniLMEmbedder

        return MiniLMEmbedder()
    if scheme == "mistral":
        from .mistral import from_spec

        return from_spec(rest)
    if scheme == "st":
        from .sentence_transformers import SentenceTransformerEmbedder

        if not rest:
            raise SpecError("st: needs a model name or path, e.g. st:all-MiniLM-L6-v2")
        return SentenceTransformerEmbedder(rest)
    if scheme == "py":
        from .python_hook import PythonHookEmbedder

        return PythonHookEmbedder(rest)
    raise SpecError(
        f"unknown embedder '{spec}'; use minilm, mistral[:MODEL], st:NAME_OR_PATH "
        "or py:module:function"
    )
