"""probe-scale's run on an opened store, the same for the api (and so the CLI): probe now,
or reuse what an earlier probe of the same index kept; and keep a result for later commands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...stores.base import VectorStore
from .probe import probe_scale
from .result import ScaleResult
from .scale import cache_path, scale_for, write_cache


def measure_scale(
    store: VectorStore,
    probes: int = 16,
    k: int = 8,
    seed: int = 0,
    *,
    filter: Any = None,
    reuse: bool = False,
    progress: Callable[[str], None] | None = None,
) -> ScaleResult:
    """``probes`` queries of ``k`` results (under ``filter``); with ``reuse`` (unfiltered)
    the result kept for this index's fingerprint instead, probed (and kept) only when there
    is none. A reused result's manifest is left empty, for this run's."""
    if progress is not None:
        progress(f"probing {store.spec} with {probes} queries")
    if reuse and filter is None:
        result = scale_for(store, probes=probes, k=k, seed=seed)
        result.manifest = {}  # this run's, not the one that measured it
        return result
    return probe_scale(store, probes, k, seed, filter=filter)


def keep_scale(result: ScaleResult, store: VectorStore) -> None:
    """Keep ``result`` (with its manifest) under the store's fingerprint for later commands,
    and name the file in its manifest."""
    path = cache_path(store)
    write_cache(result, path)
    result.manifest["cache"] = str(path)


__all__ = ["keep_scale", "measure_scale"]
