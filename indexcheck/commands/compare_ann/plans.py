"""compare-ann's query plans: what the backend ran at each depth (pgvector: EXPLAIN),
and the warning when a depth ran as an exact search rather than through the ANN index."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...stores.base import VectorStore
from ..kit.filtered_truth import FilterTruth
from .result import FetchRow


def plan_of(store: VectorStore, depth: int, filter: Any = None) -> str | None:
    """The store's query plan at ``depth`` (under ``filter``) when it can tell
    (``plan_for``), else None."""
    plan_for = getattr(store, "plan_for", None)
    if plan_for is None:
        return None
    return str(plan_for(depth) if filter is None else plan_for(depth, filter))


def main_filter(ft: FilterTruth) -> Any:
    """The filter most queries carry (its plan stands for the run's), None if unfiltered."""
    keys = [key for key in ft.groups.keys if key is not None]
    if not keys:
        return None
    return ft.groups.nodes[max(set(keys), key=keys.count)]


def exact_plan_warnings(rows: Sequence[FetchRow]) -> list[str]:
    """One warning naming the depths whose plan did not use the ANN index."""
    exact = [r.fetch for r in rows if r.plan is not None and not r.plan.startswith("Index")]
    if not exact:
        return []
    plans = sorted({r.plan for r in rows if r.fetch in exact and r.plan})
    return [
        f"at fetch {', '.join(map(str, exact))} PostgreSQL chose an exact plan "
        f"({', '.join(plans)}), not the ANN index: the search was exact and the figure "
        "says nothing about the index"
    ]
