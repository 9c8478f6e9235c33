"""compare-ann at each value of a search parameter (one shared ground truth), and the
sweep made part of the verdict."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...stores.base import VectorStore
from ..ground_truth import GroundTruth
from .compare import DEFAULT_FETCH, Say, _quiet, compare_ann
from .queries import QuerySet
from .result import AnnResult, Truths, row_dict
from .wording import sentences, sweep_none, sweep_recommendation


def sweep_ann(
    key: str,
    values: Sequence[int],
    open_at: Callable[[int], VectorStore],
    queries: np.ndarray | QuerySet,
    truth: GroundTruth | Truths,
    *,
    k: int = 4,
    fetch: Sequence[int] | None = DEFAULT_FETCH,
    target: float = 0.01,
    seed: int = 0,
    progress: Say | None = None,
    filters: Sequence[Any] | None = None,
) -> dict[str, Any]:
    """compare-ann at each value of a search parameter, sharing one ground truth (a
    :class:`Truths` carries the true one too, when the first run had it).

    ``open_at(value)`` gives the same index searched with ``key=value`` (the caller opens
    it; the CLI rewrites the spec); each store is closed here once measured. Returns
    ``{"param", "runs": [{"value", "spec", "by_fetch", "recommended_fetch",
    "recommendation"}]}``.
    """
    say = progress or _quiet
    runs = []
    for v in values:
        say(f"sweep {key}={v}")
        store = open_at(v)
        try:
            r = compare_ann(
                store, queries, k, fetch, target, seed, progress=say, truth=truth, filters=filters
            )
        finally:
            store.close()
        runs.append(
            {
                "value": v,
                "spec": store.spec,
                "by_fetch": [row_dict(row) for row in r.by_fetch],
                "recommended_fetch": r.recommended_fetch,
                "recommendation": r.recommendation,
            }
        )
    return {"param": key, "runs": runs}


def apply_sweep(result: AnnResult, sweep: dict[str, Any]) -> AnnResult:
    """Make a sweep part of the verdict (``sweep`` is :func:`sweep_ann`'s result).

    ``ok`` when the index as configured or any swept value reaches the target. The
    recommendation names the smallest swept value that reaches it, with its smallest fetch
    depth, unless the index as configured reaches it at a setting no higher (or at a
    setting the store does not tell: then that value is mentioned as an alternative).
    """
    key = str(sweep["param"])
    raw = result.store.get("details", {}).get(key)
    configured = int(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else None
    runs = list(sweep["runs"])
    reaching = sorted(
        (int(r["value"]), int(r["recommended_fetch"]))
        for r in runs
        if r["recommended_fetch"] is not None
    )
    result.sweep = sweep
    base = result.recommended_fetch
    if reaching:
        value, depth = reaching[0]
        if base is not None and (configured is None or configured <= value):
            if configured is None:
                result.recommendation += (
                    f" Of the {key} values tried, {value} is the smallest that reaches the "
                    f"target too (at fetch {depth})."
                )
            return result
        run = next(r for r in runs if r["value"] == value)
        row = next(r for r in run["by_fetch"] if r["fetch"] == depth)
        text = sweep_recommendation(key, value, row, result.k, result.target, configured, base)
        result.recommendation = sentences([text, *result.warnings])
        result.recommended_setting = {key: value, "fetch": depth}
        result.ok = True
        return result
    if base is None:
        text = sweep_none(key, runs, result.k, result.target, result.compression_loss)
        result.recommendation = sentences([text, *result.warnings])
        result.ok = False
    return result
