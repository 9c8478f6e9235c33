"""compare-ann's setup, the same for the api (and so the CLI): the vectors as added (for an
index that compresses) and the query set drawn from them, or from the store."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...corpus import Corpus
from ...embedders.base import Embedder
from ...errors import InputError
from ...stores.base import VectorStore
from .queries import DEFAULT_NOISE, QuerySet, sample_from_vectors, sample_queries
from .truth import TrueVectors, from_chunks, from_store


def check_truth_choice(truth_from: str | None, truth_store: Any) -> None:
    """Refuse a bad ``truth_from``, and ``truth_from`` with a truth store (before opening)."""
    if truth_from not in (None, "chunks"):
        raise InputError(f"truth_from must be 'chunks' or None, got {truth_from!r}")
    if truth_from and truth_store is not None:
        raise InputError("truth_from and truth_store cannot be combined; pick one")


def prepare_queries(
    store: VectorStore,
    queries: int | np.ndarray | QuerySet,
    *,
    seed: int = 0,
    noise: float = DEFAULT_NOISE,
    truth_from: str | None = None,
    truth_store: VectorStore | None = None,
    embedder: Embedder | None = None,
    corpus: Corpus | None = None,
) -> tuple[TrueVectors | None, np.ndarray | QuerySet]:
    """The vectors as added (``truth_from="chunks"``: the texts re-embedded with
    ``embedder``; or what ``truth_store`` holds under the index's ids; else None) and the
    queries: ``queries`` itself, or that many stored vectors (as added, when known) moved
    by ``noise``."""
    check_truth_choice(truth_from, truth_store)
    tv = None
    if truth_from == "chunks":
        assert embedder is not None
        tv = from_chunks(store, embedder, corpus)
    elif truth_store is not None:
        tv = from_store(store, truth_store)
    if isinstance(queries, int):
        if tv is not None:
            return tv, sample_from_vectors(tv.ids, tv.vectors, queries, seed, noise)
        return tv, sample_queries(store, queries, seed, noise)
    return tv, queries


__all__ = ["check_truth_choice", "prepare_queries"]
