"""sweep-threshold's run on an opened store and embedder, the same for the api (and so the
CLI): the scale and refusal chunks (:func:`.prepare`), then the sweep."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...corpus import Corpus
from ...embedders.base import Embedder
from ...questions import Question
from ...stores.base import VectorStore
from . import prepare, sweep_threshold
from .result import SweepResult


def run_sweep(
    store: VectorStore,
    embedder: Embedder,
    questions: Sequence[Question],
    corpus: Corpus | None = None,
    *,
    k: int = 4,
    fetch: int = 20,
    recall_target: float = 0.95,
    rule: str = "recall",
    refusal_pattern: str | None = None,
    refusal_marked: Sequence[str] | None = None,
    filter: Any = None,
    higher_is_better: bool | None = None,
    to_cosine: Callable[[np.ndarray], np.ndarray] | None = None,
    scale: dict[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
) -> SweepResult:
    """:func:`sweep_threshold` on the store's scale, probed (or read from the cache) unless
    ``higher_is_better`` is given; ``corpus`` may mark refusal chunks (``refusal`` column)
    unless ``refusal_marked`` names them; ``scale`` replaces the summary recorded."""
    setup = prepare(
        store,
        corpus,
        higher_is_better=higher_is_better,
        to_cosine=to_cosine,
        refusal_marked=refusal_marked,
        progress=progress,
    )
    if progress is not None:
        progress(f"retrieving {len(questions)} questions")
    return sweep_threshold(
        store,
        embedder,
        questions,
        k=k,
        fetch=fetch,
        higher_is_better=setup.higher_is_better,
        to_cosine=setup.to_cosine,
        scale=setup.scale if scale is None else scale,
        recall_target=recall_target,
        rule=rule,
        refusal_pattern=refusal_pattern,
        refusal_marked=setup.refusal_marked,
        filter=filter,
    )


__all__ = ["run_sweep"]
