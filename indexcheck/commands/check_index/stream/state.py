"""What every pass of one streamed check (``check-index --all``) reads: the settings, the
opened objects and the scratch files, in one place instead of long argument lists."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ....embedders.base import Embedder
from ....inputs.chunk_stream import ChunkSource
from ....stores.base import VectorStore
from ..settings import CheckIndexSettings
from .chunk_spill import ChunkSpill
from .scratch import ScratchRows

Tick = Callable[[str, int, int | None], None]
"""Progress callback: (task, done, total or None)."""


@dataclass(frozen=True)
class StreamRun:
    """One streamed check: ``fresh`` holds the unit fresh vectors in corpus order,
    ``pending`` the stored vectors no neighbour explained, ``ids`` the chunks' ids and text
    hashes on disk; ``from_store``: the texts are the store's own (no chunks given)."""

    settings: CheckIndexSettings
    store: VectorStore
    embedder: Embedder
    source: ChunkSource
    from_store: bool
    fresh: ScratchRows
    pending: ScratchRows
    ids: ChunkSpill
    #: the engine that embeds the blocks (see :mod:`indexcheck.engines`)
    engine: Any
    say: Callable[[str], None]
    tick: Tick
    #: the store's row count as it reports it (0: unknown)
    store_count: int


__all__ = ["StreamRun", "Tick"]
