"""The read-only vector store Protocol, its result types, and store-spec parsing.

A store spec is ``scheme:location[?key=value&...]``, e.g. ``faiss:./index``,
``parquet:vectors.parquet``, ``upstash:https://x.upstash.io?namespace=ns``,
``pgvector:postgresql://u@127.0.0.1:5432/db?table=chunks``.

Every method of :class:`VectorStore` is read-only: nothing in this package writes to
a user's index. Writers used to build test indexes live in ``tests/`` and ``scripts/``.

Conventions (faiss-like): vectors are float32 ``(n, d)``; query results are a score
matrix ``D`` float32 ``(q, k)`` in the backend's own score scale with NaN where fewer
than k results came back, and an id matrix ``I`` (numpy object array ``(q, k)`` of
``str``, ``None`` where missing), since store ids are strings, not positions.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable
from urllib.parse import parse_qsl

import numpy as np

from ..errors import SpecError


@dataclass(frozen=True)
class StoreInfo:
    """What a store says about itself.

    ``metric`` is the backend's own metric name (``cosine``, ``l2``, ``ip``...);
    ``score`` is the formula the backend is documented to report for it (e.g.
    ``(1+cos)/2``), or ``"unknown"``; probe-scale measures the truth.
    """

    backend: str
    count: int
    dimension: int
    metric: str
    score: str
    higher_is_better: bool | None
    approximate: bool
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Fetched:
    """Stored vectors for requested ids, in the order asked.

    ``vectors`` float32 ``(n, d)`` with d the store dimension (zero rows where
    ``found`` is False or the stored length differs); ``found`` bool ``(n,)``;
    ``dims`` int32 ``(n,)`` the stored length of each vector (0 where missing);
    ``texts`` the stored texts when the store holds them, else None.
    """

    ids: list[str]
    vectors: np.ndarray
    found: np.ndarray
    dims: np.ndarray
    texts: list[str | None] | None = None


@dataclass
class VectorBatch:
    """One block of :meth:`VectorStore.iter_vectors`: ids, float32 ``(n, d)`` vectors,
    stored lengths ``dims`` int32 ``(n,)``, and texts/metadata where the store has them."""

    ids: list[str]
    vectors: np.ndarray
    dims: np.ndarray
    texts: list[str | None] | None = None
    metadata: list[dict[str, Any]] | None = None


@runtime_checkable
class VectorStore(Protocol):
    """Read-only access to a vector index."""

    spec: str
    """The spec it was opened with, secrets removed (safe to print)."""

    has_exact: bool
    """True when :meth:`exact_query` runs an exact search inside the backend."""

    def info(self) -> StoreInfo: ...

    def fingerprint(self) -> str:
        """A short string that changes when the index content changes."""
        ...

    def fetch(self, ids: Sequence[str]) -> Fetched: ...

    def iter_vectors(self, batch: int = 1000) -> Iterator[VectorBatch]: ...

    def query(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Approximate (normal) search: ``vectors`` float32 (q, d) -> (D (q, k), I (q, k))."""
        ...

    def exact_query(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact search in the backend's scale; only when ``has_exact``."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class StoreSpec:
    """A parsed ``scheme:location?key=value`` spec."""

    scheme: str
    location: str
    params: dict[str, str]

    @classmethod
    def parse(cls, spec: str) -> StoreSpec:
        if ":" not in spec:
            raise SpecError(
                f"store spec '{spec}' has no scheme; write it as SCHEME:LOCATION, "
                "e.g. faiss:./index or parquet:vectors.parquet"
            )
        scheme, rest = spec.split(":", 1)
        scheme = scheme.strip().lower()
        location, params = rest, {}
        # URLs keep their own '?' only for schemes whose location is a URL with a query
        # string of its own; ours are all indexcheck options, so split on the last '?'.
        if "?" in rest:
            location, query = rest.rsplit("?", 1)
            params = dict(parse_qsl(query, keep_blank_values=True))
        return cls(scheme=scheme, location=location, params=params)

    def require(self, key: str, hint: str) -> str:
        value = self.params.get(key)
        if not value:
            raise SpecError(f"store spec '{self.scheme}:...' needs ?{key}=...; {hint}")
        return value


def empty_result(q: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """A ``(D, I)`` pair of shape (q, k) filled with NaN / None."""
    return np.full((q, k), np.nan, dtype=np.float32), np.full((q, k), None, dtype=object)


def as_float32_matrix(vectors: Any, dimension: int | None = None) -> np.ndarray:
    """Coerce to a C-contiguous float32 (n, d) array."""
    arr = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if dimension is not None and arr.shape[1] != dimension:
        raise SpecError(f"expected vectors of dimension {dimension}, got {arr.shape[1]}")
    return arr


def pack_rows(rows: Sequence[Any | None], dimension: int) -> tuple[np.ndarray, np.ndarray]:
    """Pack possibly ragged or missing vectors into ``(vectors (n, d), dims (n,))``.

    Rows whose length differs from ``dimension`` are zero-filled in ``vectors`` and
    keep their true length in ``dims``; missing rows (None) have dims 0.
    """
    n = len(rows)
    out = np.zeros((n, dimension), dtype=np.float32)
    dims = np.zeros(n, dtype=np.int32)
    for i, row in enumerate(rows):
        if row is None:
            continue
        vec = np.asarray(row, dtype=np.float32).reshape(-1)
        dims[i] = vec.shape[0]
        if vec.shape[0] == dimension:
            out[i] = vec
    return out, dims
