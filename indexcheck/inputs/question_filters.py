"""Where a run's metadata filters come from: each question's own ``filter`` and the one
``--filter`` given for every question (the two are AND-ed), and what the manifest keeps."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..filters import And, Node, canonical, parse_filter
from .questions import load_questions


def question_filters(path: Path) -> list[dict[str, Any] | None]:
    """Each question's filter (canonical object) in file order, None where it has none."""
    return [q.filter for q in load_questions(path, require_labels=False)]


def run_filters(n: int, own: Sequence[Any] | None, common: Node | None) -> list[Node | None] | None:
    """One filter per query: the question's own AND ``common``; None when none has one."""
    if own is not None and len(own) != n:
        raise ValueError(f"{len(own)} question filters for {n} queries")
    mine = [None if f is None else parse_filter(f) for f in (own or [None] * n)]
    out: list[Node | None] = []
    for node in mine:
        if node is None or common is None:
            out.append(node if common is None else common)
        else:
            out.append(And((node, common)))
    return out if any(f is not None for f in out) else None


def filters_manifest(filters: Sequence[Node | None] | None) -> dict[str, Any]:
    """``{"filters": [every distinct filter, canonical]}`` for the manifest, or nothing."""
    if not filters:
        return {}
    return {"filters": sorted({canonical(f) for f in filters if f is not None})}
