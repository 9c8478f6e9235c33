"""Keeping the candidates an application's ``assemble`` step keeps: those at or past a
score threshold, then the first ``top_k`` (``diagnose --system``'s default, and the
LangChain adapter's)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

C = TypeVar("C")


def keep_ranked(
    candidates: Sequence[C],
    *,
    top_k: int | None = None,
    threshold: float | None = None,
    higher_is_better: bool = True,
    sort: bool = False,
) -> list[C]:
    """The candidates whose ``score`` (None counts as 0.0) is at least ``threshold`` (at
    most, when lower is better), cut to the first ``top_k``; ``sort`` orders them best
    first (stable) before, else they keep the order given. None keeps everything."""
    sign = 1.0 if higher_is_better else -1.0

    def score(c: Any) -> float:
        return sign * (c.score or 0.0)

    kept = sorted(candidates, key=lambda c: -score(c)) if sort else list(candidates)
    if threshold is not None:
        kept = [c for c in kept if score(c) >= sign * threshold]
    return kept if top_k is None else kept[:top_k]


__all__ = ["keep_ranked"]
