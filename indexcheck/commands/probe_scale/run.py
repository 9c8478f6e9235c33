"""probe-scale's run from its settings, the same for the api (and so the CLI): probe now,
or reuse what an earlier probe of the same index kept; stamp the manifest once; and keep a
result for later commands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...filters import canonical
from ...output.manifest import Run, stamp
from ...stores.base import VectorStore
from ...stores.opening import opened
from ..kit.filtered_truth import as_node
from . import report as _report  # noqa: F401 (its renderer: the result's summary in a notebook)
from .probe import probe_scale
from .result import ScaleResult
from .scale import cache_path, scale_for, write_cache
from .settings import ProbeScaleSettings

Say = Callable[[str], None]


def run_probe_scale(settings: ProbeScaleSettings, progress: Say | None = None) -> ScaleResult:
    """Open the store the settings name, measure (or reuse) its scale, stamp the manifest
    (with the filter probed under, canonical), keep an unfiltered result when asked, close."""
    started = Run("probe-scale")
    with opened(settings.store, trust_pickle=settings.trust_pickle) as (store, _):
        result = measure_scale(store, settings, progress)
        node = as_node(settings.filter)
        filters: dict[str, Any] = {} if node is None else {"filters": [canonical(node)]}
        stamp(result, started, store, **filters)  # the kept copy carries the manifest too
        if settings.cache and settings.filter is None:
            keep_scale(result, store)
        return result


def measure_scale(
    store: VectorStore, settings: ProbeScaleSettings, progress: Say | None = None
) -> ScaleResult:
    """The settings' ``probes`` queries of ``k`` results (under ``filter``); with ``reuse``
    (unfiltered) the result kept for this index's fingerprint instead, probed (and kept)
    only when there is none. A reused result's manifest is left empty, for this run's."""
    probes, k, seed, filter = settings.probes, settings.k, settings.seed, settings.filter
    if progress is not None:
        progress(f"probing {store.spec} with {probes} queries")
    if settings.reuse and filter is None:
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


__all__ = ["ProbeScaleSettings", "keep_scale", "measure_scale", "run_probe_scale"]
