"""Is a saved baseline comparable with this run? Same kind of store, same embedder.

A baseline is a ci (or diagnose) JSON result; its ``manifest`` names the store
(``store.backend``, ``store.metric``, ``store.spec``) and the embedder
(``embedder.model_id``). A baseline is usually taken on the previous index and compared
after a reindex, so the index *location* and *content* are expected to differ (that is what
the comparison measures) and are not compared. What makes two runs different systems is
another backend or metric (scores and ranks on another scale) or another embedding model:
such a baseline is refused (exit 2) unless the caller allows it, and then every difference
is reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import InputError


def baseline_differences(
    baseline: Mapping[str, Any], backend: str, metric: str | None, model_id: str | None
) -> list[str]:
    """What differs between the baseline's store/embedder and this run's (empty: none).

    A baseline without a manifest cannot be checked and yields one note saying so.
    """
    manifest = baseline.get("manifest")
    if not isinstance(manifest, Mapping):
        return ["the baseline has no manifest, so its store and embedder cannot be checked"]
    out: list[str] = []
    store = manifest.get("store")
    if isinstance(store, Mapping):
        base_backend, base_metric = str(store.get("backend", "")), str(store.get("metric", ""))
        if base_backend and base_backend != backend:
            out.append(f"store backend {base_backend!r} in the baseline, {backend!r} now")
        elif base_metric and metric is not None and base_metric != metric:
            out.append(f"store metric {base_metric!r} in the baseline, {metric!r} now")
    embedder = manifest.get("embedder")
    if model_id is not None and isinstance(embedder, Mapping):
        base_model = str(embedder.get("model_id", ""))
        if base_model and base_model != model_id:
            out.append(f"embedder {base_model!r} in the baseline, {model_id!r} now")
    return out


def check_baseline(
    baseline: Mapping[str, Any],
    backend: str,
    metric: str | None,
    model_id: str | None,
    *,
    allow_any: bool = False,
) -> list[str]:
    """Refuse (InputError, exit 2) a baseline from another store or embedder unless
    ``allow_any``; return the differences to report (empty when none)."""
    diffs = [
        d
        for d in baseline_differences(baseline, backend, metric, model_id)
        if not d.startswith("the baseline has no manifest")
    ]
    if diffs and not allow_any:
        where = baseline.get("_path") or "the baseline"
        raise InputError(
            f"{where} was measured on another system ({'; '.join(diffs)}); write a new "
            "baseline on this store, or pass --baseline-any-store to compare anyway"
        )
    return baseline_differences(baseline, backend, metric, model_id)
