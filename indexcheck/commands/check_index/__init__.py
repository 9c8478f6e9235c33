"""check-index: prove each stored vector belongs to its chunk, and diagnose the ones that don't.

A stored vector is compared by cosine with a fresh embedding of its chunk's text. A chunk
under ``min_cosine`` is then explained, most specific first:

- ``shift``: its stored vector is (cosine >= min_cosine) the fresh embedding of another
  chunk; ``holds_vector_of`` names it and ``offset`` is their distance in corpus order.
  Shifted chunks with one offset form a run; the run's first position is pinned by
  bisection (a few extra fetches and embeddings when sampling) and the duplicate text
  that precedes it, the trigger of the positional-cache bug, is named.
- ``model_mismatch``: at least half the comparable chunks are low and none of them holds a
  known chunk's vector: the index was built with another model.
- ``embedded_text_differs``: as above, but the cosines are high (median >= 0.6) and each
  low vector is still nearest its own text's embedding (``text_differs.py``): the
  indexer embedded another text (metadata header, prefix, template, truncation).
- ``stale_vector``: an isolated low chunk holding no known chunk's vector (its text was
  edited after it was embedded).

Where the rows have no build order (a store whose ``ordered`` is False read without
``--chunks``), shifts are reported as ``holds_vector_of`` chains (one finding per chain,
``shift_chains.py``), not as positional runs; ``details.order`` says which order a
shift finding used.

Vectors that cannot be compared get ``missing_vector``, ``dimension_mismatch``,
``non_finite`` or ``zero_vector``; ids in the store but not in the chunks are
``orphan_vector``; repeated texts are reported as a ``duplicate_text`` warning even when
every vector is right.

Every chunk (``sample=None`` with no ``only`` and no ``max_fault_rate``) is checked by the
streamed pass (``streamed.py``), in memory that does not grow with the vectors; a sample or
a set of ids by ``sampled.py``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ...embedders.base import Embedder
from ...errors import DimensionMismatchError
from ...inputs.chunk_stream import ChunkSource, FileChunks
from ...inputs.corpus import Corpus, load_chunks
from ...inputs.embed_text import EmbedTemplate
from ...stores.base import VectorStore
from .result import CheckIndexResult
from .sample.check import check_sampled
from .stream.check import BLOCK, check_all

IntegrityResult = CheckIndexResult  # the name before 0.2; kept for one release


def check_index(
    store: VectorStore,
    embedder: Embedder,
    corpus: str | os.PathLike[str] | Corpus | ChunkSource | None = None,
    *,
    sample: int | None = 100,
    seed: int = 0,
    min_cosine: float = 0.999,
    window: int = 16,
    diagnose_budget: int = 2000,
    only: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
    max_fault_rate: float | None = None,
    template: EmbedTemplate | None = None,
    stream: bool = False,
    rows: str | os.PathLike[str] | None = None,
    block: int = BLOCK,
    engine: Any = None,
    concurrency: int = 1,
    tick: Callable[[str, int, int | None], None] | None = None,
) -> CheckIndexResult:
    """Re-embed chunks and compare with their stored vectors (cosine, unit-free).

    ``sample=None`` checks every chunk (and lists orphan vectors); otherwise ``sample``
    chunks are drawn with ``numpy.random.default_rng(seed)``. ``window`` bounds the
    neighbour search for a shifted chunk before falling back to embedding up to
    ``diagnose_budget`` more chunks. ``only`` checks just those chunk ids (ids not in the
    corpus are ignored), as diagnose does for expected chunks. ``template`` (an
    ``--embed-template``, parsed at the edge) rebuilds the text the indexer embedded from
    each chunk's text and metadata. Raises DimensionMismatchError when the store and
    embedder dimensions differ, InputError for a sample larger than the corpus.

    ``corpus`` may be a chunks file. ``stream`` checks every chunk in blocks of ``block``
    (:func:`.streamed.check_all`: a chunks file read block by block, None the store's
    texts), embedded by ``engine`` (None: this process), each chunk's row written to
    ``rows``. ``concurrency`` > 1 lets the embedder send up to that many batches at once.
    """
    if concurrency > 1:  # up to N batches at once, on the embedder behind the cache
        inner: Any = getattr(embedder, "inner", embedder)
        inner.concurrency = concurrency
    if stream:
        source = FileChunks(Path(corpus)) if isinstance(corpus, str | os.PathLike) else corpus
        return check_all(
            store, embedder, source, min_cosine=min_cosine, window=window, rows_path=rows,
            engine=engine, say=progress, tick=tick, block=block, template=template,
        )  # fmt: skip
    if isinstance(corpus, str | os.PathLike):
        corpus = load_chunks(Path(corpus))
    say = progress or (lambda _msg: None)
    info = store.info()
    if info.dimension and info.dimension != embedder.dimension:
        raise DimensionMismatchError(
            f"the store holds {info.dimension}-d vectors but {embedder.model_id} gives "
            f"{embedder.dimension}-d; pass the --embedder the index was built with"
        )
    if sample is None and only is None and max_fault_rate is None:
        return check_all(
            store, embedder, corpus, min_cosine=min_cosine, window=window, say=say,
            template=template,
        )  # fmt: skip
    return check_sampled(
        store,
        embedder,
        corpus,  # type: ignore[arg-type]  # a ChunkSource is streamed (stream=True)
        info,
        sample=sample,
        seed=seed,
        min_cosine=min_cosine,
        window=window,
        diagnose_budget=diagnose_budget,
        only=only,
        max_fault_rate=max_fault_rate,
        template=template,
        say=say,
    )


__all__ = ["CheckIndexResult", "IntegrityResult", "check_index"]
