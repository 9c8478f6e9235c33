"""The repaired rows, a batch at a time, for the target's writers: the store read again in
its order (:func:`..rows.scan_source`); each chunk's vector is its own stored one, the one
stored at another row (taken from the batch, else fetched by id), or a fresh embedding of
its text (each distinct text sent once: a text needed in several batches is kept)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...embedders.base import Embedder
from ...errors import EmbedderOutputError
from ...inputs.corpus import text_hash
from ...stores.base import VectorStore
from .rows import SourceRows, scan_source, vectors_at
from .targets import Batch

#: texts per block an engine embeds at once
ENGINE_BLOCK = 512


def embed_texts(embedder: Embedder, texts: list[str], engine: Any = None) -> np.ndarray:
    """float32 (len(texts), d) as the embedder returns them, each distinct text sent once;
    through ``engine`` (:mod:`indexcheck.engines`: Ray workers) in blocks when given."""
    if not texts:
        return np.zeros((0, embedder.dimension), np.float32)
    uniq = list(dict.fromkeys(texts))
    if engine is None:
        got = np.asarray(embedder.embed(uniq), np.float32)
    else:
        blocks = [uniq[lo : lo + ENGINE_BLOCK] for lo in range(0, len(uniq), ENGINE_BLOCK)]
        got = np.concatenate(
            [np.asarray(b, np.float32) for b in engine.embed_blocks(embedder, blocks)]
        )
    if got.shape != (len(uniq), embedder.dimension):
        raise EmbedderOutputError(
            f"{embedder.model_id} returned {got.shape} for {len(uniq)} texts; expected "
            f"({len(uniq)}, {embedder.dimension})"
        )
    at = {t: i for i, t in enumerate(uniq)}
    return got[[at[t] for t in texts]]


@dataclass
class Plan:
    """What the writing pass needs: ``holder`` int64 (n,) the position whose stored
    vector each chunk reuses (-1: none); ``fresh`` bool (n,) the chunk is embedded (its
    vector exists nowhere, or the reused one failed its check); ``memo`` text key ->
    float32 (d,) the embeddings already made (the sample's) and, as they are made, those
    of the texts ``repeated`` among the fresh chunks."""

    holder: np.ndarray
    fresh: np.ndarray
    memo: dict[int, np.ndarray]
    repeated: set[int] = field(default_factory=set)
    #: where the fresh embeddings are made (None: this process)
    engine: Any = None


def _fill(
    embedder: Embedder, rows: SourceRows, plan: Plan, pos: np.ndarray, texts: list[str]
) -> np.ndarray:
    """float32 (m, d): fresh embeddings of the chunks at ``pos`` (their ``texts``),
    from the memo where it has them."""
    keys = rows.now[pos].tolist()
    out = np.empty((len(pos), embedder.dimension), np.float32)
    todo = [i for i, k in enumerate(keys) if k not in plan.memo]
    got = embed_texts(embedder, [texts[i] for i in todo], plan.engine)
    for i, v in zip(todo, got, strict=True):
        if keys[i] in plan.repeated:
            plan.memo[keys[i]] = v
        out[i] = v
    for i, k in enumerate(keys):
        if k in plan.memo:
            out[i] = plan.memo[k]
    return out


def _batch(
    store: VectorStore, embedder: Embedder, rows: SourceRows, plan: Plan,
    pos: np.ndarray, own: np.ndarray, texts: list[str], metadata: list[dict[str, Any]],
) -> Batch:  # fmt: skip
    """The rows at positions ``pos`` (chunks, with their ``own`` stored vectors float32
    (m, d), texts now and metadata) as written."""
    d = embedder.dimension
    out = np.array(own, np.float32, copy=True)
    h = plan.holder[pos]
    moved = np.flatnonzero((h >= 0) & (h != pos) & ~plan.fresh[pos])
    if len(moved):
        order = np.argsort(pos)
        at = np.searchsorted(pos[order], h[moved])
        at_ok = at < len(pos)
        local = np.zeros(len(moved), bool)
        local[at_ok] = pos[order][at[at_ok]] == h[moved][at_ok]
        out[moved[local]] = own[order[at[local]]]
        far = moved[~local]
        out[far] = vectors_at(store, rows, h[far], d)
    fresh = np.flatnonzero(plan.fresh[pos])
    if len(fresh):
        out[fresh] = _fill(embedder, rows, plan, pos[fresh], [texts[i] for i in fresh.tolist()])
    return Batch([rows.ids[j] for j in pos.tolist()], out, texts, metadata,
                 [text_hash(t) for t in texts])  # fmt: skip


def repaired_batches(
    store: VectorStore, embedder: Embedder, rows: SourceRows, plan: Plan
) -> Iterator[Batch]:
    """The chunks' rows as written, in store order, then the chunks of the chunks file
    the store lacks (fresh embeddings, the chunks file's metadata)."""
    d = embedder.dimension
    for sc in scan_source(store, rows, d):
        keep = np.flatnonzero(rows.chunk[sc.positions])
        if not len(keep):
            continue
        pos = sc.positions[keep]
        k = keep.tolist()
        texts = [rows.text_of(int(j), sc.texts[i]) for j, i in zip(pos.tolist(), k, strict=True)]
        meta = [sc.metadata[i] for i in k]
        yield _batch(store, embedder, rows, plan, pos, sc.vectors[keep], texts, meta)
    extra = np.flatnonzero(~rows.in_store & rows.chunk)
    corpus = rows.corpus
    for lo in range(0, len(extra), 4096):
        pos = extra[lo : lo + 4096]
        texts = [rows.text_of(int(j), None) for j in pos.tolist()]
        if corpus is not None and corpus.metadata is not None:
            meta = [dict(corpus.metadata[corpus.position[rows.ids[j]]] or {}) for j in pos.tolist()]
        else:
            meta = [{} for _ in pos.tolist()]
        yield _batch(store, embedder, rows, plan, pos, np.zeros((len(pos), d), np.float32),
                     texts, meta)  # fmt: skip


__all__ = ["Plan", "embed_texts", "repaired_batches"]
