"""Fetching stored vectors in batches, each answer checked to hold one row per id asked."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ...errors import IncompleteResultError
from ...stores.base import VectorStore
from ...stores.protocol import Fetched


def fetch_batches(
    store: VectorStore, ids: Sequence[str], batch: int, fix: str = ""
) -> Iterator[tuple[int, list[str], Fetched]]:
    """(offset into ``ids``, the batch's ids, the store's answer) for each batch of at most
    ``batch`` ids, in order. An answer without one row per id asked is
    :class:`IncompleteResultError` (exit 3) saying so, followed by ``fix``."""
    for start in range(0, len(ids), batch):
        part = list(ids[start : start + batch])
        got = store.fetch(part)
        if len(got.ids) != len(part) or got.vectors.shape[0] != len(part):
            raise IncompleteResultError(
                f"{store.spec} returned {got.vectors.shape[0]} vectors for {len(part)} ids{fix}"
            )
        yield start, part, got


__all__ = ["fetch_batches"]
