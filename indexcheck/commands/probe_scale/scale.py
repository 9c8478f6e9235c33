"""The store's score scale as every command uses it: cached per fingerprint, else probed,
else documented; and the backend -> cosine converter built from it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import InputError
from ...scales.transforms import CATALOGUE
from ...stores.base import VectorStore
from ...vectors import row_norms
from ..kit.caches import default_scale_dir, read_json, scale_cache_path, write_json_atomic
from .probe import UNIT_NORM_TOL, _named, probe_scale
from .result import ScaleResult

# -- cache and documented fallback -----------------------------------------------------


default_cache_dir = default_scale_dir
cache_path = scale_cache_path


def _read_cache(path: Path) -> ScaleResult | None:
    data = read_json(path)
    try:
        result = ScaleResult.from_dict(data) if data is not None else None
    except (ValueError, TypeError):
        return None  # unreadable: probe again
    if result is not None and result.source != "operator_assumed":
        # an assumed operator stays assumed when read back: the cache must not launder it
        result.source = "cached"
    return result


def write_cache(result: ScaleResult, path: Path) -> None:
    """Write a result atomically (a temporary file, then rename)."""
    write_json_atomic(result.to_dict(), path)


def documented_scale(store: VectorStore) -> ScaleResult:
    """The formula ``info().score`` documents, unmeasured (``source="documented"``); reads
    one block of at most 64 vectors to tell whether they are unit-norm, queries nothing."""
    info = store.info()
    t = CATALOGUE.get(info.score)
    normalized: bool | None = None
    for batch in store.iter_vectors(64):
        vecs = np.asarray(batch.vectors, dtype=np.float64)[np.asarray(batch.dims) > 0]
        if vecs.size:
            normalized = bool(np.all(np.abs(row_norms(vecs) - 1) <= UNIT_NORM_TOL))
        break
    result = _named(
        t,
        normalized,
        documented=info.score,
        source="documented",
        message=(
            f"documented by {info.backend} as {info.score}, not measured; run "
            "indexcheck probe-scale to measure it"
        ),
    )
    if t is None:
        result.higher_is_better = info.higher_is_better
    return result


def scale_for(
    store: VectorStore,
    *,
    cache_dir: Path | None = None,
    probe: bool = True,
    refresh: bool = False,
    probes: int = 16,
    k: int = 8,
    seed: int = 0,
) -> ScaleResult:
    """The store's score scale: cached (per fingerprint), else probed and cached, else
    (``probe=False``) the documented formula. ``refresh`` probes even when cached."""
    path = cache_path(store, cache_dir)
    if not refresh:
        cached = _read_cache(path) if path.is_file() else None
        if cached is not None:
            return cached
    if not probe:
        return documented_scale(store)
    result = probe_scale(store, probes=probes, k=k, seed=seed)
    write_cache(result, path)
    return result


def scale_converters(
    store: VectorStore, *, probe: bool = True, result: Any = None
) -> tuple[bool, Callable[[np.ndarray], np.ndarray] | None, dict[str, Any]]:
    """(higher_is_better, backend->cosine converter or None, scale summary) for a store,
    from ``result`` (a ScaleResult already at hand) or the probed (or cached) transform."""
    if result is None:
        result = scale_for(store, probe=probe)
    summary = {
        "transform": result.transform,
        "higher_is_better": result.higher_is_better,
        "normalized": result.normalized,
        "to_cosine": result.to_cosine_formula,
        "from_cosine": result.from_cosine_formula,
        "source": getattr(result, "source", None),
    }
    hib = result.higher_is_better
    if hib is None:  # the probe named no transform: keep the documented direction
        hib = store.info().higher_is_better
    to_cos: Callable[[np.ndarray], np.ndarray] | None = result.to_cosine
    try:
        result.to_cosine(np.asarray([0.5]))
    except InputError:
        to_cos = None
    return bool(hib if hib is not None else True), to_cos, summary
