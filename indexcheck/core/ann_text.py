"""compare-ann's recommendation sentence."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
