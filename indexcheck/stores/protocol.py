"""What a store is and returns: the :class:`VectorStore` protocol the checks need, and its
result types (:class:`StoreInfo`, :class:`Fetched`, :class:`VectorBatch`).

Conventions (faiss-like): vectors are float32 ``(n, d)``; query results are a score
matrix ``D`` float32 ``(q, k)`` in the backend's own score scale with NaN where fewer
than k results came back, and an id matrix ``I`` (numpy object array ``(q, k)`` of
``str``, ``None`` where missing), since store ids are strings, not positions.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np


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
    """What the checks need from a store; every :class:`BaseStore` satisfies it, and so
    do test fakes that do not inherit from it (``indexcheck.testing.fakes.MemoryStore``)."""

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

    def query(
        self, vectors: np.ndarray, k: int, filter: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Approximate (normal) search: ``vectors`` float32 (q, d) -> (D (q, k), I (q, k)),
        under a portable metadata ``filter`` (:mod:`indexcheck.filters`) when given."""
        ...

    def exact_query(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact search in the backend's scale; only when ``has_exact``."""
        ...

    def close(self) -> None: ...
