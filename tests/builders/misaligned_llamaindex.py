"""Test-only: the misalignment bugs of :mod:`tests.builders.misaligned_index` replayed by a
LlamaIndex indexer, as a user builds it: ``VectorStoreIndex(nodes, embed_model=...)`` with
LlamaIndex's defaults (nodes inserted 2,048 at a time, each insert's texts embedded in
calls of ``embed_batch_size`` 10) over the default ``SimpleVectorStore``, persisted.

The bugs live where users meet them in a LlamaIndex ``BaseEmbedding``:

- per call of 10 (``_get_text_embeddings``): results sorted by length
  (``permuted_in_batches``), and a text cache that returns ``hits + misses``
  (``cache_hits_first``; the cache lives across calls);
- per insert (``get_text_embedding_batch``): the positional cache that skips repeats; a
  dropped item, the short list then topped up by embedding its tail again (LlamaIndex
  refuses a node left without a vector, so a client that "fixes" the count is what
  leaves a silent shift); an item returned twice (the extra vector falls off the end of
  the insert); two calls' results swapped (``batch_misplaced``, batches of 10).

:func:`build` returns the store spec and the oracle ``source`` (int64 (n,): the position
whose fresh embedding each chunk holds).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tests.builders.misaligned_index import (
    CACHE_HITS_FIRST,
    PERMUTED,
    SKIP_REPEAT,
    WINDOW32,
    Corpus,
    replay,
)

#: LlamaIndex's defaults (``DEFAULT_EMBED_BATCH_SIZE``, ``insert_batch_size``)
EMBED_BATCH = 10
INSERT_BATCH = 2048
PER_CALL = (PERMUTED, CACHE_HITS_FIRST)


def _embedding(bug: str, corpus: Corpus, at: int, log: list[int]) -> Any:
    """A ``BaseEmbedding`` over :data:`WINDOW32` replaying ``bug``; ``log`` gets the
    position of each vector it hands LlamaIndex, in order."""
    from llama_index.core.base.embeddings.base import BaseEmbedding

    position = {t: p for p, t in reversed(list(enumerate(corpus.texts)))}  # first copy
    state = {"done": 0}  # texts embedded so far: where the next call starts
    cache: dict[str, int] = {}

    def fresh(ps: list[int]) -> list[list[float]]:
        vecs, _ = WINDOW32._embed_batch([corpus.texts[p] for p in ps])
        return [list(map(float, v)) for v in vecs]

    class Buggy(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            vecs, _ = WINDOW32._embed_batch([query])
            return list(map(float, vecs[0]))

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return fresh([position[text]])[0]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            lo = state["done"]
            state["done"] += len(texts)
            ps = list(range(lo, lo + len(texts)))
            if bug == PERMUTED:
                ps = [lo + q for q in replay(bug, list(texts), len(texts), 0)]
            elif bug == CACHE_HITS_FIRST:
                hits = [cache[corpus.texts[p]] for p in ps if corpus.texts[p] in cache]
                misses = [p for p in ps if corpus.texts[p] not in cache]
                for p in misses:
                    cache.setdefault(corpus.texts[p], p)
                ps = hits + misses
            log.extend(ps)
            return fresh(ps)

        def get_text_embedding_batch(
            self, texts: list[str], show_progress: bool = False, **kw: Any
        ) -> list[list[float]]:
            base = state["done"]
            out = super().get_text_embedding_batch(texts, show_progress, **kw)
            if bug in PER_CALL:
                return out
            del log[base:]
            if bug == SKIP_REPEAT:  # the cache and its fresh list live across inserts
                ps = replay(bug, corpus.texts, EMBED_BATCH, at)[base : base + len(texts)]
            elif base <= at < base + len(texts):
                ps = [base + q for q in replay(bug, list(texts), EMBED_BATCH, at - base)]
                if len(ps) < len(texts):  # a short list topped up with its tail again
                    ps += list(range(base + len(ps), base + len(texts)))
                ps = ps[: len(texts)]  # LlamaIndex zips: an extra vector falls off
            else:
                ps = list(range(base, base + len(texts)))
            log.extend(ps)
            return fresh(ps)

    return Buggy(model_name=WINDOW32.model_id, embed_batch_size=EMBED_BATCH)


def build(root: Path, corpus: Corpus, bug: str, at: int = 700) -> tuple[str, np.ndarray]:
    """``VectorStoreIndex`` over one ``TextNode`` per chunk (id = chunk id, no metadata,
    so LlamaIndex embeds the text alone), persisted; (spec, oracle source)."""
    from llama_index.core import VectorStoreIndex
    from llama_index.core.schema import TextNode

    nodes = [TextNode(id_=i, text=t) for i, t in zip(corpus.ids, corpus.texts, strict=True)]
    log: list[int] = []
    index = VectorStoreIndex(nodes, embed_model=_embedding(bug, corpus, at, log))
    folder = root / f"li-simple-{bug}"
    index.storage_context.persist(str(folder))
    assert len(log) == len(nodes), (bug, len(log))
    return f"llamaindex:{folder}", np.asarray(log, np.int64)
