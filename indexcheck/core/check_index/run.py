"""check-index's run on an opened store and embedder, the same for the api (and so the
CLI): a sample (or every chunk) checked in memory, or every chunk streamed in blocks."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ...chunk_stream import ChunkSource, FileChunks
from ...corpus import Corpus, load_chunks
from ...embed_text import EmbedTemplate
from ...embedders.base import Embedder
from ...stores.base import VectorStore
from .result import CheckIndexResult
from .streamed import BLOCK, check_all


def run_check(
    store: VectorStore,
    embedder: Embedder,
    chunks: str | os.PathLike[str] | Corpus | ChunkSource | None,
    *,
    stream: bool = False,
    sample: int | None = 100,
    seed: int = 0,
    min_cosine: float = 0.999,
    window: int = 16,
    diagnose_budget: int = 2000,
    only: Sequence[str] | None = None,
    max_fault_rate: float | None = None,
    template: EmbedTemplate | None = None,
    rows: str | os.PathLike[str] | None = None,
    block: int = BLOCK,
    engine: Any = None,
    concurrency: int = 1,
    progress: Callable[[str], None] | None = None,
    tick: Callable[[str, int, int | None], None] | None = None,
) -> CheckIndexResult:
    """:func:`check_index` on ``chunks`` (a chunks file or a Corpus), or with ``stream``
    :func:`.streamed.check_all` on every chunk in blocks of ``block`` (a chunks file read
    block by block, None: the store's texts), embedded by ``engine`` (None: this process),
    each chunk's row written to ``rows``. ``concurrency`` > 1 lets the embedder send up to
    that many batches at once."""
    if concurrency > 1:  # up to N batches at once, on the embedder behind the cache
        inner: Any = getattr(embedder, "inner", embedder)
        inner.concurrency = concurrency
    if stream:
        source = FileChunks(Path(chunks)) if isinstance(chunks, str | os.PathLike) else chunks
        return check_all(
            store,
            embedder,
            source,
            min_cosine=min_cosine,
            window=window,
            rows_path=rows,
            engine=engine,
            say=progress,
            tick=tick,
            block=block,
            template=template,
        )
    from . import check_index  # looked up per run: a test may replace it

    corpus = load_chunks(Path(chunks)) if isinstance(chunks, str | os.PathLike) else chunks
    return check_index(
        store,
        embedder,
        corpus,  # type: ignore[arg-type]
        sample=sample,
        seed=seed,
        min_cosine=min_cosine,
        window=window,
        diagnose_budget=diagnose_budget,
        only=only,
        progress=progress,
        max_fault_rate=max_fault_rate,
        template=template,
    )


__all__ = ["run_check"]
