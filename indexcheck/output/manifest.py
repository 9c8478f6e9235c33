"""The manifest every JSON result carries: what ran, on what, with which seed, at what cost.

Stamped in one place, :func:`stamp`: by ``finish`` for the CLI and by :mod:`indexcheck.api`
for library callers. The core never stamps; a result may carry ``manifest_facts`` (seed,
fingerprint, parameters, and for ci each check's timing and embedding cost) as data.
"""

from __future__ import annotations

import platform
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from .._version import __version__
from ..embedders.base import Embedder
from ..stores.base import VectorStore


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
            audit = getattr(embedder, "audit", None)  # the audit of the --cache hits
            if audit is not None and getattr(embedder, "cache", None) is not None:
                m["cache_audit"] = audit.to_dict()
        m.update(extra)
        return m


class Stampable(Protocol):
    manifest: dict[str, Any]


def stamp(
    result: Stampable,
    run: Run,
    store: VectorStore | None = None,
    embedder: Embedder | None = None,
    **extra: Any,
) -> None:
    """Give ``result`` its manifest: ``run``'s (store, embedder, seed, cost, wall time)
    with the result's ``manifest_facts`` when it has none yet; ``extra`` is added either
    way. A ci result's checks get theirs from the timing and cost it recorded per check."""
    facts = dict(getattr(result, "manifest_facts", None) or {})
    checks: dict[str, dict[str, Any]] = facts.pop("checks", None) or {}
    if checks:
        facts["seconds_by_check"] = {n: c.get("wall_seconds") for n, c in checks.items()}
    if not result.manifest:
        result.manifest = run.manifest(store, embedder, **{**facts, **extra})
    else:
        result.manifest.update(extra)
    subs: dict[str, dict[str, Any]] = getattr(result, "results", None) or {}
    for name, fact in checks.items():
        sub = subs.get(name)
        if sub is None or sub.get("manifest"):
            continue
        fact = dict(fact)
        uses = embedder if fact.pop("with_embedder", True) else None
        sub["manifest"] = Run(name).manifest(store, uses, **fact)


__all__ = ["Run", "stamp"]
