"""Exact top-k search streamed over blocks of stored vectors, with faiss/BLAS doing the work.

Memory holds one block of vectors plus every query's running top-k, never the whole index;
each block is searched with ``faiss.knn`` (the routine behind ``IndexFlatIP``/``IndexFlatL2``)
and merged into the running top-k. A store's score formula (``StoreInfo.score``) belongs to
one of three families that rank neighbours identically:

- ``cos``: ``cos``, ``1-cos``, ``(1+cos)/2``, ``1/(2-cos)`` -> rank by cosine;
- ``dot``: ``dot``, ``-dot``, ``1-dot``, ``(1+dot)/2`` -> rank by inner product;
- ``l2``: ``l2``, ``l2^2``, ``1/(1+l2^2)`` -> rank by (squared) Euclidean distance.

Scores returned are the family's own: cosine or inner product (higher is nearer), or squared
L2 (lower is nearer). :func:`as_similarity` turns them into one "higher is nearer" scale
(``-l2^2`` for the l2 family) for comparisons.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from ...errors import InputError
from ...scales.transforms import CATALOGUE
from ...vectors import normalize_rows

#: score formula -> ranking family (cos, dot or l2), derived from the probe's catalogue
FAMILIES: dict[str, str] = {t.formula: t.variable for t in CATALOGUE.values()}
#: Vectors per block are chosen so one block takes about this many bytes.
BLOCK_BYTES = 64 << 20

Block = tuple[Sequence[str], np.ndarray]

#: The engine that searches blocks (indexcheck.engines); None: this process, block by block.
ENGINE: ContextVar[Any] = ContextVar("indexcheck_exact_engine", default=None)


@contextmanager
def engine_scope(engine: Any) -> Iterator[None]:
    """Run exact searches inside the block through ``engine.map`` (e.g. as Ray tasks)."""
    token = ENGINE.set(None if getattr(engine, "name", "local") == "local" else engine)
    try:
        yield
    finally:
        ENGINE.reset(token)


def family_of(score: str) -> str:
    """The ranking family (``cos``, ``dot`` or ``l2``) of a store's score formula."""
    family = FAMILIES.get(score.replace(" ", ""))
    if family is None:
        raise InputError(
            f"the store's score '{score}' is not a function of cos, dot or l2, so its exact "
            "neighbours cannot be computed here; use an index with cosine, inner product or L2"
        )
    return family


def block_rows(dimension: int, block_bytes: int = BLOCK_BYTES) -> int:
    """Rows of float32 ``dimension``-d vectors that fit in ``block_bytes`` (at least 1)."""
    return max(1, block_bytes // (4 * max(1, dimension)))


def prepare(vectors: np.ndarray, family: str) -> np.ndarray:
    """C-contiguous float32 (n, d); unit rows for the cos family (a copy), else as given."""
    x = np.ascontiguousarray(vectors, dtype=np.float32)
    return normalize_rows(x) if family == "cos" else x


def as_similarity(scores: np.ndarray, family: str) -> np.ndarray:
    """Family scores (q, k) -> float32 "higher is nearer": cos, dot, or ``-l2^2``."""
    s = np.asarray(scores, dtype=np.float32)
    return -s if family == "l2" else s


def pair_similarity(queries: np.ndarray, vectors: np.ndarray, family: str) -> np.ndarray:
    """Similarity of query i with each of its own candidates: (q, d) x (q, m, d) -> (q, m).

    Inputs already through :func:`prepare`. Returns float32 cos, dot or ``-l2^2``
    (higher is nearer); the difference is squared directly, not expanded, for l2.
    """
    if family == "l2":
        diff = vectors - queries[:, None, :]
        out: np.ndarray = -np.einsum("qmd,qmd->qm", diff, diff)
    else:
        out = np.einsum("qd,qmd->qm", queries, vectors)
    return out.astype(np.float32, copy=False)


def rebatch(blocks: Iterable[Block], rows: int) -> Iterator[Block]:
    """Coalesce small blocks and split large ones into blocks of about ``rows`` vectors."""
    ids_acc: list[str] = []
    vec_acc: list[np.ndarray] = []
    held = 0
    for ids, vecs in blocks:
        if vecs.shape[0] == 0:
            continue
        if held == 0 and vecs.shape[0] >= rows:
            for s in range(0, vecs.shape[0], rows):
                yield ids[s : s + rows], vecs[s : s + rows]
        else:
            ids_acc.extend(ids)
            vec_acc.append(vecs)
            held += vecs.shape[0]
        del ids, vecs  # not held while the next block is read
        if held >= rows:
            out = np.concatenate(vec_acc)
            vec_acc = []
            yield ids_acc, out
            ids_acc, held = [], 0
            del out
    if held:
        yield ids_acc, np.concatenate(vec_acc)


def exact_topk(
    blocks: Iterable[Block], queries: np.ndarray, k: int, family: str
) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-k of float32 ``queries`` (q, d) over every block ``(ids, float32 (n, d))``.

    Returns ``(D float32 (q, k), I object (q, k))`` in the family's scale: cosine or inner
    product, descending, or squared L2, ascending; NaN / None where fewer than k vectors
    were seen. Among equal scores the vector seen first wins. Only one block and the
    running top-k are held at a time.
    """
    if family not in ("cos", "dot", "l2"):
        raise InputError(f"unknown score family '{family}'; use cos, dot or l2")
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    xq = prepare(queries, family)
    if xq.ndim != 2:
        raise InputError("queries must be a float32 (q, d) matrix")
    q, d = xq.shape
    higher = family != "l2"
    sentinel = np.float32(-np.inf if higher else np.inf)
    best_d = np.full((q, k), sentinel, dtype=np.float32)
    best_i = np.full((q, k), None, dtype=object)
    if q == 0:
        return np.full((0, k), np.nan, dtype=np.float32), best_i
    engine = ENGINE.get()
    if engine is not None:  # blocks searched as tasks, merged here in the same order
        task = functools.partial(_block_topk, xq, k, family)
        for bd, bi in engine.map(task, _checked(blocks, d)):
            best_d, best_i = _merge(best_d, best_i, bd, bi, higher, k)
        best_d[np.isinf(best_d)] = np.nan
        return best_d, best_i
    for item in _checked(blocks, d):
        bd, bi = _block_topk(xq, k, family, item)
        del item  # hold one block only: references are dropped before the next is read
        best_d, best_i = _merge(best_d, best_i, bd, bi, higher, k)
    best_d[np.isinf(best_d)] = np.nan  # the sentinel: fewer than k vectors seen
    return best_d, best_i


def _checked(blocks: Iterable[Block], d: int) -> Iterator[Block]:
    source = iter(blocks)
    while (item := next(source, None)) is not None:
        ids, vecs = item
        del item
        nb = vecs.shape[0]
        if nb == 0:
            continue
        if vecs.ndim != 2 or vecs.shape[1] != d or len(ids) != nb:
            raise InputError(
                f"a block of {nb} stored vectors of shape {vecs.shape} with {len(ids)} ids "
                f"does not match {d}-d queries"
            )
        yield ids, vecs
        del ids, vecs


def _block_topk(xq: np.ndarray, k: int, family: str, block: Block) -> tuple[np.ndarray, np.ndarray]:
    """Top-min(k, n) of prepared queries in one block: (D float32, ids object), sentinel
    scores (-inf or inf) where faiss found fewer."""
    import faiss

    ids, vecs = block
    higher = family != "l2"
    metric = faiss.METRIC_L2 if family == "l2" else faiss.METRIC_INNER_PRODUCT
    sentinel = np.float32(-np.inf if higher else np.inf)
    nb = vecs.shape[0]
    xb = prepare(vecs, family)
    bd, bp = faiss.knn(xq, xb, min(k, nb), metric=metric)
    lookup = np.empty(nb + 1, dtype=object)
    lookup[:nb] = list(ids)
    lookup[nb] = None
    bi = lookup[np.where(bp >= 0, bp, nb)]
    return np.where(bp >= 0, bd, sentinel).astype(np.float32), bi


def _merge(
    best_d: np.ndarray, best_i: np.ndarray, bd: np.ndarray, bi: np.ndarray, higher: bool, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Running top-k merged with one block's; earlier entries win ties (stable sort)."""
    cat_d = np.concatenate([best_d, bd], axis=1)
    cat_i = np.concatenate([best_i, bi], axis=1)
    order = np.argsort(-cat_d if higher else cat_d, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(cat_d, order, axis=1), np.take_along_axis(cat_i, order, axis=1)
