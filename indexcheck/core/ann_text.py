"""compare-ann's recommendation sentence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .compare_ann import FetchRow


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%".replace(".00%", "%")


def recommendation(rows: list[FetchRow], k: int, target: float, best: int | None) -> str:
    if best is not None:
        r = next(r for r in rows if r.fetch == best)
        how = f"fetch {best}, re-rank exactly and keep {k}" if best > k else f"fetch {k}"
        return (
            f"{how}: the best chunk is missed in {_pct(r.best_miss_rate)} of queries "
            f"({r.best_misses}/{r.queries}), at most the target {_pct(target)}"
        )
    low = min(rows, key=lambda r: (r.best_miss_rate, r.fetch))
    tried = ", ".join(str(r.fetch) for r in rows)
    text = (
        f"none of the fetch depths tried ({tried}) brings the best-chunk miss rate to "
        f"{_pct(target)}; the lowest is {_pct(low.best_miss_rate)} at fetch {low.fetch}"
    )
    if len(rows) > 1 and rows[-1].best_misses >= rows[0].best_misses:
        return (
            f"{text}; fetching deeper does not help this index (its search stops by its own "
            "effort parameter, not by the number asked): raise efSearch/nprobe, e.g. "
            "--sweep efSearch=32,64,128"
        )
    return f"{text}: fetch deeper or raise the index's search effort (efSearch, nprobe)"


def _how(fetch: int, k: int) -> str:
    return f"fetch {fetch}, re-rank exactly and keep {k}" if fetch > k else f"fetch {k}"


def sweep_recommendation(
    key: str,
    value: int,
    row: dict[str, Any],
    k: int,
    target: float,
    configured: int | None,
    configured_fetch: int | None,
) -> str:
    """The sentence for a swept value that reaches the target (``row``: its FetchRow dict)."""
    as_set = f"{key}={configured}" if configured is not None else f"{key} as the index was saved"
    if configured_fetch is None:
        now = f"as configured ({as_set}) no fetch depth tried reaches it"
    else:
        now = f"as configured ({as_set}) {_how(configured_fetch, k)} reaches it too, at more effort"
    return (
        f"set {key}={value} and {_how(int(row['fetch']), k)}: the best chunk is missed in "
        f"{_pct(row['best_miss_rate'])} of queries ({row['best_misses']}/{row['queries']}), "
        f"at most the target {_pct(target)}; {now}"
    )


def sweep_none(key: str, runs: Sequence[dict[str, Any]], k: int, target: float) -> str:
    """The sentence when neither the configured index nor any swept value reaches it."""
    tried = ", ".join(str(r["value"]) for r in runs)
    low = min(
        ((row["best_miss_rate"], r["value"], row["fetch"]) for r in runs for row in r["by_fetch"]),
        default=None,
    )
    text = (
        f"none of the {key} values tried ({tried}) brings the best-chunk miss rate to "
        f"{_pct(target)} at any fetch depth tried, nor does the index as configured"
    )
    if low is None:
        return text
    rate, value, fetch = low
    return (
        f"{text}; the lowest is {_pct(rate)} at {key}={value}, fetch {fetch}: try higher "
        f"{key} values or deeper fetch depths"
    )
