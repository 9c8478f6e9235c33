"""What the LangChain and LlamaIndex embedding classes share: a spec's document embedder and
its query twin, vectors as lists of floats, and the lazy framework import."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..embedders import DEFAULT_EMBEDDER, for_queries, open_embedder
from ..embedders.base import Embedder
from ..errors import MissingDependencyError

EmbedderSpec = str | Embedder | None


def _framework(module: str, what: str, extra: str, package: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(what, extra, package) from None


def made_on_first_use(module: str, name: str, make: Callable[[], type]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``module`` that gives its class ``name`` as ``make()``: the
    class subclasses a framework's, so it is made when the framework is first needed."""

    def __getattr__(attr: str) -> Any:
        if attr == name:
            return make()
        raise AttributeError(f"module {module!r} has no attribute {attr!r}")

    return __getattr__


class Pair:
    """The document embedder of a spec and its query twin (the spec's ``query_prefix``)."""

    def __init__(self, embedder: EmbedderSpec = None) -> None:
        if embedder is None or isinstance(embedder, str):
            embedder = open_embedder(embedder or DEFAULT_EMBEDDER)
        self.documents: Embedder = embedder
        self.queries: Embedder = for_queries(embedder)

    @property
    def model_id(self) -> str:
        return self.documents.model_id

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Lists of floats (n, d), the form both frameworks take."""
        if not texts:
            return []
        return _as_lists(self.documents.embed(list(texts)))

    def embed_query(self, text: str) -> list[float]:
        return _as_lists(self.queries.embed([text]))[0]


def _as_lists(vectors: np.ndarray) -> list[list[float]]:
    out: list[list[float]] = np.asarray(vectors, dtype=np.float32).tolist()
    return out


__all__ = ["EmbedderSpec", "Pair"]
