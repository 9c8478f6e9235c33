"""The true ground truth for compare-ann on a lossy index: the vectors as they were added.

A compressing index (FAISS PQ/SQ/LSH) gives back decoded codes, so exact search over what
it gives back is itself compressed. Two sources of the vectors as added:

- :func:`from_chunks` re-embeds every stored chunk's text (``--truth-from chunks``), the
  texts from ``--chunks`` or from the store;
- :func:`from_store` reads them from another store holding the same ids, e.g. a flat
  Parquet export (``--truth-store SPEC``).

Either must cover every id of the index, and agree with what the index gives back (median
cosine of each stored vector with its true one at least :data:`MIN_AGREEMENT`: a wrong
``--embedder`` or another export would measure nonsense).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...embedders.base import Embedder
from ...errors import DataFileError, DimensionMismatchError, InputError
from ...inputs.corpus import Corpus
from ...stores.base import VectorStore
from ...vectors import normalize_rows
from ..kit.caches import ITER_BATCH
from ..kit.exact import block_rows, exact_topk, pair_similarity, prepare, rebatch
from ..kit.ground_truth import GroundTruth

#: median cosine of stored vs true vectors below which the true vectors are refused
MIN_AGREEMENT = 0.5
EMBED_BATCH = 256
GROUND_TRUTH_TRUE = "true_exact"

Say = Callable[[str], None]


def _quiet(_msg: str) -> None:
    return None


@dataclass
class TrueVectors:
    """The vectors as added: float32 (n, d) in the index's row order, one per stored id."""

    ids: list[str]
    vectors: np.ndarray
    source: str
    details: dict[str, Any] = field(default_factory=dict)


class MatrixLookup:
    """Exact similarity of queries with given ids, over an in-memory matrix."""

    def __init__(self, tv: TrueVectors, family: str) -> None:
        self.family = family
        self.row = {v: i + 1 for i, v in enumerate(tv.ids)}  # row 0: not found
        d = tv.vectors.shape[1]
        self.matrix = np.concatenate([np.zeros((1, d), np.float32), prepare(tv.vectors, family)])

    def similarity(self, xq: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """float32 (q, m) cos, dot or -l2^2 of prepared queries with an object (q, m) id
        matrix; NaN for None or unknown ids."""
        q, m = ids.shape
        rows = np.fromiter(
            (self.row.get(i, 0) if i is not None else 0 for i in ids.ravel()),
            dtype=np.int64,
            count=q * m,
        ).reshape(q, m)
        out = np.full((q, m), np.nan, dtype=np.float32)
        if m == 0:
            return out
        d = self.matrix.shape[1]
        step = max(1, (32 << 20) // max(1, m * d * 4))
        for s in range(0, q, step):
            out[s : s + step] = pair_similarity(
                xq[s : s + step], self.matrix[rows[s : s + step]], self.family
            )
        out[rows == 0] = np.nan
        return out


def true_truth(tv: TrueVectors, queries: np.ndarray, depth: int, family: str) -> GroundTruth:
    """Exact top-``depth`` of float32 ``queries`` (q, d) over the true vectors."""
    t0 = time.perf_counter()
    rows = block_rows(tv.vectors.shape[1])
    _, ids = exact_topk(rebatch([(tv.ids, tv.vectors)], rows), queries, depth, family)
    look = MatrixLookup(tv, family)
    sim = look.similarity(prepare(queries, family), ids)
    order = np.argsort(np.where(np.isnan(sim), np.inf, -sim), axis=1, kind="stable")
    sim = np.take_along_axis(sim, order, axis=1)
    ids = np.take_along_axis(ids, order, axis=1)
    ids[np.isnan(sim)] = None
    return GroundTruth(ids, sim, GROUND_TRUTH_TRUE, time.perf_counter() - t0)


def _stored(store: VectorStore) -> tuple[list[str], np.ndarray, list[str | None] | None]:
    """Every (id, vector, text) the store gives back, in its order."""
    ids: list[str] = []
    parts: list[np.ndarray] = []
    texts: list[str | None] | None = []
    for batch in store.iter_vectors(ITER_BATCH):
        ids.extend(batch.ids)
        parts.append(np.asarray(batch.vectors, dtype=np.float32))
        if batch.texts is None:
            texts = None
        elif texts is not None:
            texts.extend(batch.texts)
    d = store.info().dimension
    return ids, (np.concatenate(parts) if parts else np.zeros((0, d), np.float32)), texts


def _agreement(stored: np.ndarray, true: np.ndarray) -> dict[str, float]:
    cos = (normalize_rows(stored) * normalize_rows(true)).sum(axis=1)
    return {
        "median_cosine": round(float(np.median(cos)), 6),
        "min_cosine": round(float(cos.min()), 6),
    }


def _checked(
    store: VectorStore, tv: TrueVectors, stored: np.ndarray, what: str, fix: str
) -> TrueVectors:
    if tv.vectors.shape[1] != stored.shape[1]:
        raise DimensionMismatchError(
            f"{what} gives {tv.vectors.shape[1]}-d vectors but {store.spec} holds "
            f"{stored.shape[1]}-d ones; {fix}"
        )
    agree = _agreement(stored, tv.vectors)
    if agree["median_cosine"] < MIN_AGREEMENT:
        raise InputError(
            f"{what} does not match {store.spec}: the median cosine of a stored vector with "
            f"its true one is {agree['median_cosine']:.3f} (a compressed copy scores near 1); "
            f"{fix}"
        )
    tv.details.update(agree)
    return tv


def from_chunks(
    store: VectorStore,
    embedder: Embedder,
    corpus: Corpus | None = None,
    progress: Say | None = None,
) -> TrueVectors:
    """Re-embed the text of every stored id (from ``corpus`` when given, else the store's
    own texts) with ``embedder``; each distinct text is embedded once."""
    say = progress or _quiet
    say("reading every stored id and vector")
    ids, stored, store_texts = _stored(store)
    if corpus is not None:
        missing = [i for i in ids if i not in corpus.position]
        if missing:
            raise DataFileError(
                f"{len(missing)} of the {len(ids)} ids in {store.spec} are not in "
                f"{corpus.source or '--chunks'} (e.g. '{missing[0]}'); --truth-from chunks "
                "re-embeds the text of every stored vector: pass the chunks the index was "
                "built from"
            )
        texts = [corpus.texts[corpus.position[i]] for i in ids]
    else:
        if store_texts is None or any(t is None for t in store_texts):
            raise DataFileError(
                f"{store.spec} does not hold the text of every vector; --truth-from chunks "
                "needs them: pass --chunks with the id and text of every chunk"
            )
        texts = [str(t) for t in store_texts]
    distinct = list(dict.fromkeys(texts))
    say(f"re-embedding {len(distinct)} distinct chunk texts for the true ground truth")
    rows: list[np.ndarray] = []
    for s in range(0, len(distinct), EMBED_BATCH):
        rows.append(np.asarray(embedder.embed(distinct[s : s + EMBED_BATCH]), np.float32))
    d = int(embedder.dimension or stored.shape[1])
    fresh = np.concatenate(rows) if rows else np.zeros((0, d), np.float32)
    at = {t: i for i, t in enumerate(distinct)}
    vectors = fresh[[at[t] for t in texts]] if texts else fresh
    details = {
        "embedder": embedder.model_id,
        "texts": "chunks" if corpus is not None else "store",
        "embedded": len(distinct),
    }
    tv = TrueVectors(ids, vectors, "chunks", details)
    fix = "pass the --embedder the index was built with (and its ?prefix=)"
    return _checked(store, tv, stored, f"re-embedding with {embedder.model_id}", fix)


def from_store(store: VectorStore, truth: VectorStore, progress: Say | None = None) -> TrueVectors:
    """The vectors ``truth`` holds for every id of ``store`` (ids ``truth`` holds beyond
    the index's are ignored)."""
    say = progress or _quiet
    say(f"reading the true vectors from {truth.spec}")
    held: dict[str, np.ndarray] = {}
    for batch in truth.iter_vectors(ITER_BATCH):
        vecs = np.asarray(batch.vectors, dtype=np.float32)
        for j, vid in enumerate(batch.ids):
            held[vid] = vecs[j]
    say("reading every stored id and vector")
    ids, stored, _ = _stored(store)
    missing = [i for i in ids if i not in held]
    if missing:
        raise DataFileError(
            f"{len(missing)} of the {len(ids)} ids in {store.spec} are not in {truth.spec} "
            f"(e.g. '{missing[0]}'); --truth-store must hold the vectors as they were added, "
            "under the index's ids"
        )
    d = truth.info().dimension
    vectors = np.stack([held[i] for i in ids]) if ids else np.zeros((0, d), np.float32)
    tv = TrueVectors(ids, vectors, "truth-store", {"spec": truth.spec, "count": len(held)})
    fix = "pass the export of the vectors this index was built from"
    return _checked(store, tv, stored, f"--truth-store {truth.spec}", fix)


__all__ = [
    "GROUND_TRUTH_TRUE",
    "MIN_AGREEMENT",
    "MatrixLookup",
    "TrueVectors",
    "from_chunks",
    "from_store",
    "true_truth",
]
