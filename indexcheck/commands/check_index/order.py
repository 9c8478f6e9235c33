"""check-index: where positions come from, and what a mass of low cosines means.

Positions are build order only when the rows come from ``--chunks`` (the user's file
order) or from a store that yields rows in insertion order (``ordered``; pgvector only
with ``&order=COLUMN``). Otherwise shifts are reported as chains (``chain_findings``).

When at least half the comparable chunks are low and none holds another chunk's vector,
:func:`mismatch_verdict` decides between ``model_mismatch`` and
``embedded_text_differs`` through
:func:`~indexcheck.commands.check_index.text_differs.explain_low_cosines`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import DataFileError
from ...inputs.chunk_stream import StoreChunks
from ...inputs.corpus import Corpus, chunk_metadata
from ...inputs.embed_text import EmbedTemplate
from ...stores.base import VectorStore
from ..kit.verdicts import Status
from .settings import CheckIndexSettings
from .text_differs import TWIN_COSINE, LowCosineVerdict, explain_low_cosines, own_is_nearest

CHUNKS_ORDER = "chunks file order"


def ordered_rows(store: VectorStore, from_store: bool) -> bool:
    """Are positions build order? ``--chunks`` always counts as the user's order."""
    return not from_store or bool(getattr(store, "ordered", True))


def order_label(store: VectorStore, from_store: bool) -> str:
    """``details.order`` of a positional shift finding."""
    if not from_store:
        return CHUNKS_ORDER
    return str(getattr(store, "order_source", "store order"))


@dataclass(frozen=True)
class MismatchWhy:
    """The status for the unexplained low chunks, and the figures behind it."""

    status: Status
    details: dict[str, Any] = field(default_factory=dict)


def mismatch_verdict(
    cosines: np.ndarray,
    stored: np.ndarray,
    fresh: np.ndarray,
    own: np.ndarray,
    threshold: float,
    near: np.ndarray | None = None,
) -> MismatchWhy:
    """``cosines`` float (n,) of the comparable chunks that hold no other chunk's vector,
    ``stored`` their unit float32 (n, d) vectors, ``fresh`` unit float32 (m, d) fresh
    embeddings and ``own`` int (n,) the row of ``fresh`` that is each chunk's own text;
    or ``near`` bool (n,) computed already (then ``stored``, ``fresh``, ``own`` are unused)."""
    if near is None and len(own):
        near = own_is_nearest(stored, fresh, own)
    why = explain_low_cosines(cosines, threshold, 0, near)
    if why.verdict is LowCosineVerdict.EMBEDDED_TEXT_DIFFERS:
        status = Status.EMBEDDED_TEXT_DIFFERS
    elif why.verdict is LowCosineVerdict.STALE_VECTOR:
        status = Status.STALE_VECTOR
    else:
        status = Status.MODEL_MISMATCH
    return MismatchWhy(status, {"explanation": why.details})


def nearest_other(
    f: np.ndarray, start: int, stored: np.ndarray, own_fresh: np.ndarray
) -> np.ndarray:
    """float32 (s,): each ``stored`` vector's best cosine among the fresh rows ``f``
    float32 (m, d) (first position ``start``), the rows equal to its own fresh vector
    (repeats) left out; -inf where none."""
    if not f.shape[0]:
        return np.full(stored.shape[0], -np.inf, np.float32)
    sims = stored @ f.T
    sims[(own_fresh @ f.T) >= TWIN_COSINE] = -np.inf
    out: np.ndarray = sims.max(axis=1)
    return out


def own_nearest_blocks(
    stored: np.ndarray, own_fresh: np.ndarray, fresh: Any, block: int
) -> np.ndarray:
    """bool (s,): :func:`own_is_nearest` over every fresh vector, read ``block`` rows at a
    time from ``fresh`` (the streamed check's scratch file: ``n``, ``read``), or where
    they are when an engine left them on its workers (``map_blocks``: only each block's
    best cosines travel). ``stored`` and ``own_fresh`` unit float32 (s, d)."""
    own_sim = np.einsum("ij,ij->i", stored, own_fresh)
    best = np.full(stored.shape[0], -np.inf, dtype=np.float32)
    mapper = getattr(fresh, "map_blocks", None)
    if mapper is not None:
        parts: Any = (got for _start, got in mapper(nearest_other, stored, own_fresh))
    else:
        parts = (
            nearest_other(fresh.read(lo, min(fresh.n, lo + block)), lo, stored, own_fresh)
            for lo in range(0, fresh.n, block)
        )
    for part in parts:
        best = np.maximum(best, part)
    result: np.ndarray = own_sim > best
    return result


def why_low_streamed(
    fresh: Any,
    pending: Any,
    waiting: list[int],
    explained: Collection[int],
    comparable: np.ndarray,
    cosine: np.ndarray,
    settings: CheckIndexSettings,
    why_sample: int = 2000,
) -> MismatchWhy:
    """check-index --all (``stream/check.py``): another model or another embedded text,
    judged on at most ``why_sample`` of the unexplained chunks (seeded), each against
    every fresh vector read ``settings.block`` at a time. ``comparable`` bool (n,): chunks
    with a vector to compare (ok or low); ``fresh`` and ``pending`` are the scratch files;
    ``explained`` positions (shifted, or another prefix: :mod:`.prefix`) are left out."""
    min_cosine, block = settings.min_cosine, settings.block
    rows = [j for j, q in enumerate(waiting) if q not in explained]
    if len(rows) > why_sample:
        pick = np.random.default_rng(0).choice(len(rows), why_sample, replace=False)
        rows = [rows[int(i)] for i in np.sort(pick)]
    pos = np.asarray([waiting[j] for j in rows], dtype=np.int64)
    stored = pending.take(np.asarray(rows, dtype=np.int64))
    near_rows = own_nearest_blocks(stored, fresh.take(pos), fresh, block)
    comparable = comparable.copy()
    comparable[list(explained)] = False
    cand = np.flatnonzero(comparable)
    near = np.ones(len(cand), dtype=bool)  # chunks above the threshold are not used
    at = np.searchsorted(cand, pos)  # cand is sorted and holds every sampled position
    near[at] = np.asarray(near_rows, dtype=bool)
    sampled = np.zeros(len(cand), dtype=bool)
    sampled[at] = True
    low = cosine[cand] < min_cosine
    keep = ~low | sampled  # the share is taken over the sampled low chunks only
    empty = np.zeros((0, fresh.d), np.float32)
    return mismatch_verdict(
        cosine[cand][keep].astype(np.float64), empty, empty, np.zeros(0, np.int64),
        min_cosine, near[keep],
    )  # fmt: skip


# --- --embed-template: the text the indexer sent ----------------------------------------


def render_corpus(corpus: Corpus, template: EmbedTemplate) -> Corpus:
    """``corpus`` with each text replaced by what ``template`` builds from it and the
    chunk's metadata (:func:`~indexcheck.inputs.corpus.chunk_metadata`)."""
    metas = corpus.metadata or [{} for _ in corpus.ids]
    texts = template.render_all(corpus.ids, corpus.texts, [chunk_metadata(m) for m in metas])
    return Corpus(corpus.ids, texts, corpus.metadata, corpus.source)


class TemplatedStoreChunks:
    """The texts a store keeps, through ``template`` with each row's stored metadata."""

    def __init__(self, store: VectorStore, template: EmbedTemplate) -> None:
        self.inner = StoreChunks(store)
        self.store, self.template = store, template
        self.source = store.spec

    def count(self) -> int | None:
        return self.inner.count()

    def blocks(self, size: int) -> Iterator[tuple[list[str], list[str]]]:
        for batch in self.store.iter_vectors(size):
            if batch.texts is None or any(t is None for t in batch.texts):
                raise DataFileError(
                    f"{self.store.spec} holds no text for some vectors; pass --chunks with "
                    "the id, text and metadata of every chunk"
                )
            texts = [str(t) for t in batch.texts]
            metas = batch.metadata or [{} for _ in batch.ids]
            m = [chunk_metadata(x) for x in metas]
            yield list(batch.ids), self.template.render_all(batch.ids, texts, m)
