"""diff-index's run on opened stores, the same for the api (and so the CLI): the diff, and
the old index described for the manifest (which describes the new one as its store)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...corpus import Corpus
from ...embedders.base import Embedder
from ...stores.base import VectorStore
from . import diff_index
from .result import DiffResult


def run_diff(
    old: VectorStore,
    new: VectorStore,
    *,
    chunks_old: Corpus | None = None,
    chunks_new: Corpus | None = None,
    embedder: Embedder | None = None,
    sample_new: int | None = 100,
    seed: int = 0,
    min_cosine: float = 0.999,
    workdir: Path | None = None,
    memory_limit: str = "256MB",
    progress: Callable[[str], None] | None = None,
    engine: Any = None,
) -> tuple[DiffResult, dict[str, Any]]:
    """:func:`diff_index` of ``old`` and ``new``; returns the result and its manifest facts
    (``old_store``: the old index's spec, count and fingerprint)."""
    result = diff_index(
        old,
        new,
        chunks_old=chunks_old,
        chunks_new=chunks_new,
        embedder=embedder,
        sample_new=sample_new,
        seed=seed,
        min_cosine=min_cosine,
        workdir=workdir,
        memory_limit=memory_limit,
        progress=progress,
        engine=engine,
    )
    described = {"spec": old.spec, "count": old.info().count, "fingerprint": old.fingerprint()}
    return result, {"old_store": described}


__all__ = ["run_diff"]
