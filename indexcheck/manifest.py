"""The manifest every JSON result carries: what ran, on what, with which seed, at what cost."""

from __future__ import annotations

import platform
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from . import __version__
from .embedders.base import Embedder
from .stores.base import VectorStore


@dataclass
class Run:
    """Wall-clock timer started when a command starts; ``manifest()`` closes it."""

    command: str
    started: float = field(default_factory=time.perf_counter)
    started_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))

    def manifest(
        self,
        store: VectorStore | None = None,
        embedder: Embedder | None = None,
        seed: int | None = None,
        fingerprint: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        m: dict[str, Any] = {
            "tool": "indexcheck",
            "version": __version__,
            "command": self.command,
            "started_at": self.started_at,
            "wall_seconds": round(time.perf_counter() - self.started, 3),
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "seed": seed,
        }
        if store is not None:
            info = store.info()
            m["store"] = {
                "spec": store.spec,
                "backend": info.backend,
                "count": info.count,
                "dimension": info.dimension,
                "metric": info.metric,
                "score": info.score,
                "approximate": info.approximate,
            }
            m["index_fingerprint"] = fingerprint or store.fingerprint()
        if embedder is not None:
            m["embedder"] = {
                "model_id": embedder.model_id,
                "dimension": embedder.dimension,
                "runtime": getattr(getattr(embedder, "inner", embedder), "runtime", None),
            }
            stats = embedder.stats
            m["embedding"] = stats.as_dict()
        m.update(extra)
        return m
