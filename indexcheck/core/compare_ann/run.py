"""compare-ann's whole run on opened stores, the same for the api (and so the CLI): the
queries and their filters (:mod:`.setup`), the measurement at each fetch depth, and the
sweep of a search parameter made part of the verdict."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...corpus import Corpus
from ...embedders.base import Embedder
from ...filtered_questions import filters_manifest
from ...stores.base import VectorStore
from ..exact import engine_scope
from .compare import DEFAULT_FETCH, compare_ann
from .queries import DEFAULT_NOISE, QuerySet
from .result import AnnResult
from .setup import Say, prepare_queries, queries_manifest, query_filters
from .sweep import apply_sweep, sweep_ann
from .truth import TrueVectors


def run_compare(
    store: VectorStore,
    queries: int | np.ndarray | QuerySet = 500,
    *,
    k: int = 4,
    fetch: Sequence[int] | None = DEFAULT_FETCH,
    target: float = 0.01,
    seed: int = 0,
    noise: float | None = None,
    truth_from: str | None = None,
    truth_store: VectorStore | None = None,
    embedder: Embedder | None = None,
    corpus: Corpus | None = None,
    questions: str | os.PathLike[str] | None = None,
    query_vectors: str | os.PathLike[str] | None = None,
    cache_dir: Path | None = None,
    filter: Any = None,
    filters: Sequence[Any] | None = None,
    truth: Any = None,
    true_vectors: TrueVectors | None = None,
    sweep: tuple[str, Sequence[int]] | None = None,
    open_at: Callable[[int], VectorStore] | None = None,
    engine: Any = None,
    progress: Say | None = None,
) -> tuple[AnnResult, dict[str, Any]]:
    """compare-ann on ``store``: the queries (:func:`.setup.prepare_queries`), one filter
    per query (``filters`` as given, else each question's own AND ``filter``), the figures
    at each fetch depth, and with ``sweep`` (``(key, values)``) the same at each value,
    ``open_at(value)`` giving the index searched with ``key=value`` (closed once measured).
    Exact searches run through ``engine`` (:func:`..exact.engine_scope`; None: here).
    Returns the result and its manifest facts (where the queries came from, the filters)."""
    with engine_scope(engine):
        tv, qs = prepare_queries(
            store,
            queries,
            seed=seed,
            noise=DEFAULT_NOISE if noise is None else noise,
            truth_from=truth_from,
            truth_store=truth_store,
            embedder=embedder,
            corpus=corpus,
            questions=questions,
            query_vectors=query_vectors,
            cache_dir=cache_dir,
            progress=progress,
        )
        if filters is None:
            filters = query_filters(qs, questions, filter)
        result = compare_ann(
            store,
            qs,
            k,
            fetch,
            target,
            seed,
            cache_dir,
            progress,
            truth=truth,
            true_vectors=tv if true_vectors is None else true_vectors,
            filters=filters,
        )
        if sweep is not None:
            assert result.truth is not None and open_at is not None
            key, values = sweep
            swept = sweep_ann(
                key,
                values,
                open_at,
                qs,
                result.truth,
                k=k,
                fetch=fetch,
                target=target,
                seed=seed,
                progress=progress,
                filters=filters,
            )
            apply_sweep(result, swept)
    return result, {"queries": queries_manifest(qs), **filters_manifest(filters)}


__all__ = ["run_compare"]
