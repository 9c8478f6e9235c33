"""sweep-threshold's run on opened objects, the same for the api (and so the CLI): every
question retrieved from the store (:func:`.sweep_threshold`), or with ``observed`` the scores
the production traces recorded (:func:`.observed.sweep_observed`), the store then only naming
the scale."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...embedders.base import Embedder
from ...errors import InputError
from ...inputs.answers import DEFAULT_CITATION_PATTERN, AnswerRow, read_answers
from ...inputs.corpus import Corpus
from ...inputs.questions import Question
from ...stores.base import VectorStore
from . import SweepResult, prepare, sweep_threshold
from .observed import refuse_absent_scores, refuse_filter, sweep_observed

Converter = Callable[[np.ndarray], np.ndarray]


def run_sweep(
    store: VectorStore | None, embedder: Embedder | None, questions: Sequence[Question], *,
    observed: str | Path | Sequence[AnswerRow] | None = None, answers_format: str | None = None,
    corpus: Corpus | None = None, k: int = 4, fetch: int = 20,
    higher_is_better: bool | None = None, to_cosine: Converter | None = None,
    scale: dict[str, Any] | None = None, recall_target: float = 0.95, rule: str = "recall",
    refusal_pattern: str | None = None, refusal_marked: Sequence[str] | None = None,
    filter: Any = None, progress: Callable[[str], None] | None = None,
) -> tuple[SweepResult, dict[str, Any]]:  # fmt: skip
    """The sweep and its manifest facts. Without ``observed``: ``questions`` retrieved from
    ``store`` with ``embedder``. With ``observed`` (a trace export or answers file, read as
    ``answers_format``, None: sniffed; or rows already read): its traced scores swept, on
    the scale ``store`` names (probed or read from the cache, unless ``higher_is_better``
    is given; no store: the traces' own, higher unless told), no embedder used, a
    ``filter`` refused; the facts say what the join with ``questions`` did."""
    if observed is None:
        if store is None:
            raise InputError(
                "sweep-threshold needs a store (to retrieve every question) or observed "
                "traces (the scores production recorded)"
            )
        assert embedder is not None, "the api opens the embedder whenever it retrieves"
        result = sweep_threshold(
            store, embedder, questions, corpus=corpus, k=k, fetch=fetch, filter=filter,
            higher_is_better=higher_is_better, to_cosine=to_cosine, scale=scale, rule=rule,
            recall_target=recall_target, refusal_pattern=refusal_pattern,
            refusal_marked=refusal_marked, progress=progress,
        )  # fmt: skip
        return result, {}
    refuse_filter(filter)
    source = str(observed) if isinstance(observed, str | Path) else "--observed"
    if isinstance(observed, str | Path):
        read = read_answers(observed, DEFAULT_CITATION_PATTERN, fmt=answers_format, chunks=corpus)
        observed = read.rows
    refuse_absent_scores(observed, source)  # before the store's scale is probed
    setup = prepare(
        store, corpus, higher_is_better=higher_is_better, to_cosine=to_cosine,
        refusal_marked=refusal_marked, progress=progress,
    )  # fmt: skip
    result, facts = sweep_observed(
        observed, questions, k=k, higher_is_better=setup.higher_is_better,
        to_cosine=setup.to_cosine, scale=setup.scale if scale is None else scale, rule=rule,
        recall_target=recall_target, refusal_pattern=refusal_pattern,
        refusal_marked=setup.refusal_marked, source=source,
    )  # fmt: skip
    return result, {"observed": facts}


__all__ = ["run_sweep"]
