"""The small protocol every repair target's writer follows: ``open`` once with the vectors'
dimension, ``write`` batches in row order, then ``commit`` (the copy appears whole) or
``abort`` (nothing that looks complete is left). No writer ever opens the source."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np


@dataclass(frozen=True)
class Batch:
    """Rows of the repaired copy, in order: ``vectors`` float32 (m, d) beside the ids,
    texts, metadata dicts and text hashes (each of length m)."""

    ids: list[str]
    vectors: np.ndarray
    texts: list[str]
    metadata: list[dict[str, Any]]
    hashes: list[str]

    def __len__(self) -> int:
        return len(self.ids)

    def rows(self) -> Iterator[tuple[str, np.ndarray, str, dict[str, Any]]]:
        """Each row's id, vector float32 (d,), text and metadata."""
        return zip(self.ids, self.vectors, self.texts, self.metadata, strict=True)

    def metadata_json(self) -> list[str]:
        """Each row's metadata as a JSON object string."""
        return [json.dumps(m, ensure_ascii=False, default=str) for m in self.metadata]


@dataclass(frozen=True)
class Source:
    """What a target needs to know of the source to be written in its layout: its kind
    (spec scheme), metric as the store names it, and ``details`` (``info().details``:
    collection or table names, a FAISS folder's layout, Qdrant's payload layout)."""

    kind: str
    metric: str
    details: dict[str, Any]


class Writer(Protocol):
    """One target kind's writer. File targets write into ``folder`` (a staging folder the
    caller publishes); server targets write a staging table or collection and rename it
    in ``commit`` (or delete it in ``abort``)."""

    def open(self, folder: Path, dimension: int) -> None:
        """Make the empty collection, table or file."""

    def write(self, batch: Batch) -> None:
        """Add ``batch`` after the rows written so far."""

    def commit(self) -> None:
        """Finish writing (close files and clients); the caller publishes the folder."""

    def abort(self) -> None:
        """Release what ``open`` took; the caller removes the staging folder."""

    def proof(self, out: Path) -> str:
        """The spec check-index reads the published copy at ``out`` with."""


class ClientWriter:
    """A writer over one SDK client that holds the staging folder open: ``commit`` and
    ``abort`` both close it (the caller publishes or removes the folder)."""

    _client: Any = None

    def commit(self) -> None:
        self.abort()

    def abort(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


__all__ = ["Batch", "ClientWriter", "Source", "Writer"]
