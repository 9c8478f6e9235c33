"""check-index: prove each stored vector belongs to its chunk, and diagnose the ones that don't.

A stored vector is compared by cosine with a fresh embedding of its chunk's text; a chunk
under ``min_cosine`` is explained, most specific first: ``shift`` (it holds another chunk's
fresh vector, ``holds_vector_of``; runs of one ``offset`` are bisected to their first position
and the repeated text that triggered them), ``model_mismatch`` (half or more are low and none
holds a known chunk's vector), ``embedded_text_differs`` (as above, but high median cosine and
each vector nearest its own text: :mod:`.text_differs`), ``stale_vector`` (an isolated low
chunk). Without a build order shifts are ``holds_vector_of`` chains (:mod:`.shift.chains`).
Every status and finding is on docs/commands/check-index.md.

Every chunk (no sample, ``only`` or ``max_fault_rate``) goes through :mod:`.stream.check`, a
sample or ids through :mod:`.sample.check`. :func:`run_check_index` opens what the settings
name and stamps the manifest; :func:`check_index` runs on opened objects.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...embedders.base import Embedder
from ...errors import DimensionMismatchError
from ...inputs.chunk_stream import ChunkSource, FileChunks
from ...inputs.corpus import Corpus, load_chunks
from ...stores.base import VectorStore
from .result import CheckIndexResult
from .sample.check import check_sampled
from .settings import CheckIndexSettings
from .stream.check import BLOCK, check_all


def check_index(
    settings: CheckIndexSettings,
    store: VectorStore,
    embedder: Embedder,
    corpus: Corpus | ChunkSource | None = None,
    progress: Callable[[str], None] | None = None,
    tick: Callable[[str, int, int | None], None] | None = None,
    *,
    engine: Any = None,
) -> CheckIndexResult:
    """Re-embed chunks and compare with their stored vectors (cosine, unit-free), on opened
    objects; the options are ``settings``'s (its ``store``, ``embedder``, ``chunks`` and
    ``cache`` are not read here).

    ``sample=None`` checks every chunk (and lists orphan vectors); otherwise ``sample``
    chunks are drawn with ``numpy.random.default_rng(seed)``; ``only`` checks just those
    chunk ids. ``corpus`` None reads the store's texts. ``stream`` checks every chunk in
    blocks (:func:`.stream.check.check_all`), embedded by ``engine`` (an opened engine;
    None: ``settings.engine`` when it is one, else this process). Raises
    DimensionMismatchError when the store and embedder dimensions differ, InputError for a
    sample larger than the corpus.
    """
    if settings.concurrency > 1:  # up to N batches at once, on the embedder behind the cache
        inner: Any = getattr(embedder, "inner", embedder)
        inner.concurrency = settings.concurrency
    if settings.stream:
        runner = engine if engine is not None else _engine_object(settings.engine)
        return check_all(settings, store, embedder, corpus, engine=runner, say=progress, tick=tick)
    say = progress or (lambda _msg: None)
    info = store.info()
    if info.dimension and info.dimension != embedder.dimension:
        raise DimensionMismatchError(
            f"the store holds {info.dimension}-d vectors but {embedder.model_id} gives "
            f"{embedder.dimension}-d; pass the --embedder the index was built with"
        )
    if settings.every:  # in memory: the streamed pass's own options stay at their defaults
        in_memory = replace(settings, rows=None, block=BLOCK)
        return check_all(in_memory, store, embedder, corpus, say=say)
    # a ChunkSource is streamed (stream=True)
    return check_sampled(settings, store, embedder, corpus, info, say)  # type: ignore[arg-type]


def read_chunks(settings: CheckIndexSettings) -> Corpus | ChunkSource | None:
    """The chunks as given, or their file read with the settings' columns: block by block
    when every chunk is streamed with no template (memory stays flat), else in memory (a
    template reads the metadata)."""
    chunks = settings.chunks
    if not isinstance(chunks, str | os.PathLike):
        return chunks  # type: ignore[no-any-return]
    if settings.stream and settings.template is None:
        return FileChunks(Path(chunks), settings.id_column, settings.text_column)
    return load_chunks(Path(chunks), settings.id_column, settings.text_column)


def _engine_object(engine: Any) -> Any:
    """``settings.engine`` when it is an opened engine (a name is opened by the run entry)."""
    return None if engine is None or isinstance(engine, str) else engine


__all__ = [
    "CheckIndexResult",
    "CheckIndexSettings",
    "check_index",
    "read_chunks",
]
