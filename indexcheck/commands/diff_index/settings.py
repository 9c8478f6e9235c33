"""diff-index's options as one frozen value, built once by :func:`indexcheck.api.diff_index`
(its keywords, same names and defaults) and passed down unchanged."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..kit.settings import AT_LEAST_0, COSINE, SEED, EmbeddingRun


@dataclass(frozen=True)
class DiffIndexSettings(EmbeddingRun):
    """Every diff-index option as the face receives it (specs or opened objects, paths)."""

    #: the index in production: a spec string or an opened store
    old: Any = None
    #: the rebuilt index: a spec string or an opened store
    new: Any = None
    #: the texts of an old/new index that stores none: a chunks file or a Corpus
    chunks_old: Any = None
    chunks_new: Any = None
    #: re-embeds ``sample_new`` added/changed texts; None re-embeds nothing
    embedder: Any = None
    #: added/changed texts to re-embed (None: every one)
    sample_new: int | None = field(default=100, metadata=AT_LEAST_0)
    seed: int = field(default=0, metadata=SEED)
    #: an unchanged text whose vectors' cosine falls under this is an error
    min_cosine: float = field(default=0.999, metadata=COSINE)
    #: folder for the spill files (None: a temporary folder, removed after)
    workdir: Path | None = None
    #: DuckDB's memory limit for the join
    memory_limit: str = "256MB"
    # engine (the re-embedding runs there), cache, trust_pickle and the columns: EmbeddingRun


__all__ = ["DiffIndexSettings"]
