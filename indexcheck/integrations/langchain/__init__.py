"""LangChain: the embedding class to build an index with (``IndexcheckEmbeddings``, made on
first use, so importing this package needs no LangChain) and the adapter from the application to
``diagnose --system`` (:mod:`.system`)."""

from __future__ import annotations

from typing import Any

from . import embeddings as _embeddings
from .embeddings import embeddings


def __getattr__(name: str) -> Any:
    if name == "IndexcheckEmbeddings":
        return _embeddings.IndexcheckEmbeddings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["IndexcheckEmbeddings", "embeddings"]
