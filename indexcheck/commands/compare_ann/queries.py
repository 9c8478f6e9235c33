"""Query vectors for compare-ann: sampled from the store, embedded questions, or the user's own."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...embedders import for_queries
from ...errors import DataFileError, InputError
from ...inputs.questions import load_questions
from ...stores.base import VectorStore, as_float32_matrix
from ...vectors import normalize_rows, row_norms
from ..kit.caches import ITER_BATCH, cache_for, vector_blocks

if TYPE_CHECKING:
    from ...embedders.base import Embedder

DEFAULT_NOISE = 1.0


@dataclass
class QuerySet:
    """Query vectors float32 (q, d), one label each, and where they came from.

    ``source`` is ``sampled`` (stored vectors plus noise), ``questions`` (embedded text)
    or ``vectors`` (the user's own, used as given).
    """

    vectors: np.ndarray
    labels: list[str]
    source: str
    details: dict[str, Any] = field(default_factory=dict)


def sample_queries(
    store: VectorStore,
    n: int,
    seed: int = 0,
    noise: float = DEFAULT_NOISE,
    cache_dir: Path | None = None,
) -> QuerySet:
    """``n`` stored vectors drawn at random, each moved by noise so it is no exact hit.

    Query = v + noise * |v| * u with u a random unit vector orthogonal to v (numpy
    default_rng(seed)), so its cosine with v is 1/sqrt(1 + noise^2): 0.71 at the default
    1.0, near what a real question scores against its best chunk; with less noise v itself
    wins so clearly that approximate search rarely misses it. One pass over the store
    (through the vector cache when ``cache_dir`` is given).
    """
    if n < 1:
        raise InputError(f"--queries must be at least 1, got {n}")
    if noise < 0:
        raise InputError(f"--noise must be zero or more, got {noise}")
    info = store.info()
    count = info.count
    if count < 1:
        raise InputError(f"{store.spec} holds no vectors; there is nothing to query")
    rng = np.random.default_rng(seed)
    want = np.sort(rng.choice(count, size=min(n, count), replace=False))
    picked: list[np.ndarray] = []
    labels: list[str] = []
    offset = 0
    # with a cache, read to the end so the cache completes and the exact search reuses it
    stop_early = cache_for(store, info.dimension, cache_dir) is None
    for ids, vecs in vector_blocks(store, info.dimension, cache_dir, ITER_BATCH):
        lo, hi = np.searchsorted(want, [offset, offset + len(ids)])
        for p in want[lo:hi]:
            picked.append(vecs[int(p) - offset].copy())
            labels.append(f"near:{ids[int(p) - offset]}")
        offset += len(ids)
        if stop_early and hi == len(want):
            break
    if not picked:
        raise InputError(f"{store.spec} yielded no usable vectors to sample queries from")
    return _moved(np.stack(picked), labels, rng, noise, seed)


def sample_from_vectors(
    ids: list[str], vectors: np.ndarray, n: int, seed: int = 0, noise: float = DEFAULT_NOISE
) -> QuerySet:
    """As :func:`sample_queries`, drawn from float32 ``vectors`` (m, d) with their ``ids``
    (the vectors as added, when the index gives back compressed ones)."""
    if n < 1:
        raise InputError(f"--queries must be at least 1, got {n}")
    if noise < 0:
        raise InputError(f"--noise must be zero or more, got {noise}")
    if len(ids) < 1:
        raise InputError("there are no vectors to sample queries from")
    rng = np.random.default_rng(seed)
    want = np.sort(rng.choice(len(ids), size=min(n, len(ids)), replace=False))
    labels = [f"near:{ids[int(p)]}" for p in want]
    details = {"drawn_from": "the vectors as added"}
    return _moved(np.asarray(vectors)[want], labels, rng, noise, seed, details)


def _moved(
    picked: np.ndarray,
    labels: list[str],
    rng: np.random.Generator,
    noise: float,
    seed: int,
    details: dict[str, Any] | None = None,
) -> QuerySet:
    """Each vector moved by noise * |v| along a random unit direction orthogonal to it."""
    base = picked.astype(np.float64)
    norms = row_norms(base)[:, None]
    unit = normalize_rows(base)
    u = rng.standard_normal(base.shape)
    u -= (u * unit).sum(axis=1, keepdims=True) * unit  # orthogonal to v
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    vectors = (base + noise * norms * u).astype(np.float32)
    return QuerySet(vectors, labels, "sampled", {"noise": noise, "seed": seed, **(details or {})})


def read_questions(path: Path) -> tuple[list[str], list[str]]:
    """(ids, questions) from a question set (JSONL or CSV with ``id`` and ``question``)."""
    questions = load_questions(path, require_labels=False)
    return [q.id for q in questions], [q.question for q in questions]


def embed_questions(path: Path, embedder: Embedder) -> QuerySet:
    """Embed every question of ``path`` (JSONL/CSV, ``id``, ``question``) with ``embedder``."""
    ids, questions = read_questions(path)
    queries = for_queries(embedder)  # the spec's query_prefix, when it has one
    vectors = np.asarray(queries.embed(questions), dtype=np.float32)
    return QuerySet(vectors, ids, "questions", {"path": str(path), "embedder": embedder.model_id})


def load_query_vectors(path: Path) -> QuerySet:
    """The user's own query vectors: ``.npy`` (q, d), or Parquet with a ``vector`` (or
    ``embedding``) list column and an optional ``id`` column. Used as given."""
    path = Path(path)
    if not path.is_file():
        raise DataFileError(f"query vectors file {path} does not exist; check --query-vectors")
    suffix = path.suffix.lower()
    labels: list[str] | None = None
    try:
        if suffix == ".npy":
            raw = np.load(path, allow_pickle=False)
        elif suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            table = pq.read_table(path)
            names = table.column_names
            col = next((c for c in ("vector", "embedding") if c in names), None)
            if col is None:
                raise DataFileError(
                    f"{path} has no 'vector' or 'embedding' column (columns: "
                    f"{', '.join(names)}); rename the column holding the query vectors"
                )
            raw = np.asarray(table.column(col).to_pylist(), dtype=np.float32)
            if "id" in names:
                labels = [str(v) for v in table.column("id").to_pylist()]
        else:
            raise DataFileError(f"{path}: query vectors must be a .npy or .parquet file")
    except (OSError, ValueError) as exc:
        raise DataFileError(f"cannot read query vectors from {path}: {exc}") from None
    if raw.ndim != 2 or raw.shape[0] == 0 or not np.issubdtype(raw.dtype, np.number):
        raise DataFileError(f"{path} must hold a non-empty numeric (q, d) matrix")
    vectors = np.ascontiguousarray(raw, dtype=np.float32)
    if not np.isfinite(vectors).all():
        raise DataFileError(f"{path} holds NaN or infinite values; remove those queries")
    return QuerySet(
        vectors, labels or [str(i) for i in range(len(vectors))], "vectors", {"path": str(path)}
    )


def as_query_set(vectors: np.ndarray) -> QuerySet:
    """Bare query vectors float32 (q, d), labelled by row number."""
    x = as_float32_matrix(vectors)
    return QuerySet(x, [str(i) for i in range(x.shape[0])], "vectors")
