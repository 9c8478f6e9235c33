"""diff-index's new-text checks: re-embed a seeded sample of added and changed texts and
check them as check-index does.

The embedding (the whole cost) runs through an engine (:mod:`indexcheck.engines`): in
this process, or as Ray tasks with ``--engine ray``. The vectors come back in order and
:func:`indexcheck.commands.check_index.check_index` then compares them here, so both engines
give the same statuses and cosines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...embedders.base import Embedder, EmbedStats
from ...errors import DimensionMismatchError
from ...inputs.corpus import Corpus, corpus_from_pairs
from ...stores.base import VectorStore
from ..check_index import CheckIndexSettings, check_index

if TYPE_CHECKING:
    from .result import DiffResult
    from .settings import DiffIndexSettings

#: texts per engine block (one Ray task each)
BLOCK = 256


class _Embedded:
    """An embedder answering from vectors embedded beforehand (by the engine), and asking
    ``inner`` for any other text."""

    def __init__(self, inner: Embedder, known: dict[str, np.ndarray]) -> None:
        self.inner, self.known = inner, known
        self.model_id, self.dimension = inner.model_id, inner.dimension

    @property
    def stats(self) -> EmbedStats:
        return self.inner.stats

    @property
    def truncated(self) -> set[str]:
        return set(getattr(self.inner, "truncated", None) or ())

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        todo = sorted({t for t in texts if t not in self.known})
        if todo:
            self.known.update(zip(todo, self.inner.embed(todo), strict=True))
        out = np.empty((len(texts), self.dimension), np.float32)
        for i, t in enumerate(texts):
            out[i] = self.known[t]
        return out


def embed_through(engine: Any, embedder: Embedder, texts: Sequence[str]) -> dict[str, np.ndarray]:
    """Each distinct text's float32 (d,) vector, embedded in blocks by ``engine``."""
    distinct = list(dict.fromkeys(texts))

    def blocks() -> Iterator[list[str]]:
        for s in range(0, len(distinct), BLOCK):
            yield distinct[s : s + BLOCK]

    known: dict[str, np.ndarray] = {}
    for block, vecs in zip(blocks(), engine.embed_blocks(embedder, blocks()), strict=True):
        vecs = np.asarray(vecs, np.float32)
        if vecs.shape != (len(block), embedder.dimension):
            raise DimensionMismatchError(
                f"{embedder.model_id} returned vectors of shape {vecs.shape} for "
                f"{len(block)} texts; expected {embedder.dimension}-d"
            )
        known.update(zip(block, vecs, strict=True))
    return known


def check_new_texts(
    settings: DiffIndexSettings,
    result: DiffResult,
    new: VectorStore,
    chunks_new: Corpus | None,
    embedder: Embedder,
    say: Callable[[str], None],
    engine: Any = None,
) -> None:
    """Re-embed a seeded sample (``settings.sample_new``, ``settings.seed``) of the added and
    changed texts (from ``chunks_new``, or the store) and check them as check-index does
    (``settings.min_cosine``); fills ``result.new_texts`` and each sampled row's
    ``cosine``/``checked``."""
    sample_new, seed, min_cosine = settings.sample_new, settings.seed, settings.min_cosine
    from ...engines import LocalEngine
    from .result import DiffFinding, DiffStatus

    cands = [r for r in result.chunks if r.status in (DiffStatus.ADDED, DiffStatus.CHANGED)]
    if sample_new is not None and len(cands) > sample_new:
        rng = np.random.default_rng(seed)
        pick = sorted(int(i) for i in rng.choice(len(cands), size=sample_new, replace=False))
        cands = [cands[i] for i in pick]
    if not cands:
        result.new_texts = {"candidates": 0, "checked": 0, "counts": {}}
        return
    ids = [str(r.id) for r in cands]
    texts = _texts_of(new, chunks_new, ids)
    engine = engine or LocalEngine()
    say(f"re-embedding {len(ids)} new or changed texts with {embedder.model_id} ({engine.name})")
    known = embed_through(engine, embedder, texts)
    sub = check_index(
        CheckIndexSettings(only=ids, min_cosine=min_cosine),
        new,
        _Embedded(embedder, known),
        corpus_from_pairs(ids, texts, source=new.spec),
    )
    by_id = {c.id: c for c in sub.chunks}
    for r in cands:
        c = by_id.get(str(r.id))
        if c is not None:
            r.cosine, r.checked = c.cosine, c.status
            if c.holds_vector_of is not None:
                r.holds_vector_of = c.holds_vector_of
    for f in sub.findings:
        if f.kind == "duplicate_text":
            continue
        result.findings.append(
            DiffFinding(f.kind, f.severity, f"new texts: {f.message}", f.chunk_ids, f.details)
        )
    result.new_texts = {
        "checked": sub.checked,
        "counts": sub.counts,
        "min_cosine": sub.min_cosine,
        "median_cosine": sub.median_cosine,
        "sample": sample_new,
    }


def _texts_of(store: VectorStore, corpus: Corpus | None, ids: Sequence[str]) -> list[str]:
    if corpus is not None:
        return [corpus.texts[corpus.position[i]] for i in ids]
    got = store.fetch(list(ids))
    texts = got.texts or [None] * len(ids)
    return [t if t is not None else "" for t in texts]


__all__ = ["BLOCK", "check_new_texts", "embed_through"]
