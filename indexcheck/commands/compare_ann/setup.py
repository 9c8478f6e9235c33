"""compare-ann's setup, the same for the api (and so the CLI): the vectors as added (for an
index that compresses), the query set (sampled from them or from the store, embedded from a
question file, or read from a vector file) and one metadata filter per query."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ...embedders.base import Embedder
from ...errors import InputError
from ...inputs.corpus import Corpus
from ...inputs.question_filters import filters_manifest, question_filters, run_filters
from ...stores.base import VectorStore
from .queries import (
    DEFAULT_NOISE,
    QuerySet,
    as_query_set,
    embed_questions,
    load_query_vectors,
    sample_from_vectors,
    sample_queries,
)
from .settings import CompareAnnSettings, vector_cache_dir
from .truth import TrueVectors, from_chunks, from_store

Say = Callable[[str], None]


def _quiet(_msg: str) -> None:
    return None


def check_truth_choice(truth_from: str | None, truth_store: Any) -> None:
    """Refuse a bad ``truth_from``, and ``truth_from`` with a truth store (before opening)."""
    if truth_from not in (None, "chunks"):
        raise InputError(f"truth_from must be 'chunks' or None, got {truth_from!r}")
    if truth_from and truth_store is not None:
        raise InputError("truth_from and truth_store cannot be combined; pick one")


def check_choices(
    truth_from: str | None, truth_store: Any, questions: Any = None, query_vectors: Any = None
) -> None:
    """Refuse a bad ``truth_from``, ``truth_from`` with a truth store, and a question file
    with a query vector file (before opening)."""
    check_truth_choice(truth_from, truth_store)
    if questions is not None and query_vectors is not None:
        raise InputError("questions and query_vectors cannot be combined; pick one query source")


def prepare_queries(
    settings: CompareAnnSettings,
    store: VectorStore,
    truth_store: VectorStore | None = None,
    embedder: Embedder | None = None,
    corpus: Corpus | None = None,
    progress: Say | None = None,
) -> tuple[TrueVectors | None, QuerySet, Sequence[Any] | None]:
    """compare-ann's query building: the vectors as added, the queries and one filter per
    query, from ``settings`` and the opened ``store``, ``truth_store`` and ``embedder``.
    The vectors as added: ``true_vectors`` as given, else (``truth_from="chunks"``) the
    texts (``corpus``, or the store's) re-embedded with ``embedder``, or what
    ``truth_store`` holds under the index's ids, else None. The queries: the ``questions``
    file embedded with ``embedder``, the ``query_vectors`` file as given, ``queries``
    itself, or that many stored vectors (as added, when known) moved by ``noise`` (None:
    the default; vectors read from a remote store cached under ``cache_dir``). The
    filters: ``filters`` as given, else each question's own AND ``filter`` (parsed)."""
    truth_from, questions, query_vectors = (
        settings.truth_from, settings.questions, settings.query_vectors
    )  # fmt: skip
    queries, seed, noise = settings.queries, settings.seed, settings.noise
    check_choices(truth_from, truth_store, questions, query_vectors)
    say = progress or _quiet
    tv = None
    if truth_from == "chunks":
        if embedder is None:
            raise InputError("truth_from='chunks' re-embeds the chunk texts: pass an embedder")
        tv = from_chunks(store, embedder, corpus, say)
    elif truth_store is not None:
        tv = from_store(store, truth_store, say)
    moved = DEFAULT_NOISE if noise is None else noise
    if questions is not None:
        if embedder is None:
            raise InputError("questions are embedded to query with: pass an embedder")
        qs = embed_questions(Path(questions), embedder)
    elif query_vectors is not None:
        qs = load_query_vectors(Path(query_vectors))
    elif not isinstance(queries, int):
        qs = queries if isinstance(queries, QuerySet) else as_query_set(queries)
    elif tv is not None:
        # near the vectors as added, as real questions are, not near their codes
        say("sampling queries from the true vectors")
        qs = sample_from_vectors(tv.ids, tv.vectors, queries, seed, moved)
    else:
        say("sampling queries from the store")
        qs = sample_queries(store, queries, seed, moved, vector_cache_dir(settings.cache_dir))
    filters = settings.filters
    if filters is None:
        filters = query_filters(qs, questions, common_filter(settings.filter))
    given = settings.true_vectors
    return tv if given is None else given, qs, filters


def common_filter(filter: Any) -> Any:
    """The filter for every query: JSON text parsed, anything else as given."""
    if isinstance(filter, str):
        from ...filters import parse_filter

        return parse_filter(filter)
    return filter


def query_filters(
    queries: QuerySet, questions: str | os.PathLike[str] | None, common: Any = None
) -> list[Any] | None:
    """One filter per query: each question's own ``filter`` (from the ``questions`` file)
    AND ``common`` (a parsed filter for every query); None when no query has one."""
    own = question_filters(Path(questions)) if questions is not None else None
    return run_filters(len(queries.labels), own, common)


def queries_manifest(queries: QuerySet) -> dict[str, Any]:
    """Where the queries came from, for the manifest."""
    return {"source": queries.source, "count": len(queries.labels), **queries.details}


def manifest_facts(queries: QuerySet, filters: Sequence[Any] | None) -> dict[str, Any]:
    """compare-ann's manifest facts: where the queries came from, and the filters."""
    return {"queries": queries_manifest(queries), **filters_manifest(filters)}


__all__ = [
    "check_choices",
    "common_filter",
    "check_truth_choice",
    "manifest_facts",
    "prepare_queries",
    "queries_manifest",
    "query_filters",
]
