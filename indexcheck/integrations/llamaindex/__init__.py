"""LlamaIndex: the embedding class to build an index with (``IndexcheckEmbedding``, made on
first use, so importing this package needs no LlamaIndex) and the adapter from the application to
``diagnose --system`` (:mod:`.system`)."""

from __future__ import annotations

from typing import Any

from . import embeddings as _embeddings
from .embeddings import embedding


def __getattr__(name: str) -> Any:
    if name == "IndexcheckEmbedding":
        return _embeddings.IndexcheckEmbedding
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["IndexcheckEmbedding", "embedding"]
