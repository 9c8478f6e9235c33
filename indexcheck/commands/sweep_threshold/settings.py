"""sweep-threshold's options, as :func:`indexcheck.api.sweep_threshold` receives them: one
frozen object built once at the face and passed down unchanged."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..kit.settings import AT_LEAST_1, SHARE, Settings

if TYPE_CHECKING:
    from ...embedders.base import Embedder
    from ...inputs.answers import AnswerRow
    from ...inputs.corpus import Corpus
    from ...inputs.questions import Question
    from ...stores.base import VectorStore


@dataclass(frozen=True)
class SweepThresholdSettings(Settings):
    """Every option of sweep-threshold; the names and defaults of the api's keywords."""

    #: a spec or an opened store (with ``observed``: it only names the scale; None: none)
    store: str | VectorStore | None
    #: a question set file or the questions loaded
    questions: str | Path | Sequence[Question]
    #: a spec, an opened embedder or None for the default (unused with ``observed``)
    embedder: str | Embedder | None = None
    #: a chunks file or a Corpus; its truthy ``refusal`` column marks refusal chunks
    chunks: str | Path | Corpus | None = None
    k: int = field(default=4, metadata=AT_LEAST_1)
    fetch: int = field(default=20, metadata=AT_LEAST_1)
    recall_target: float = field(default=0.95, metadata=SHARE)
    #: ``recall`` or ``youden``: how the recommended threshold is picked
    rule: str = "recall"
    refusal_pattern: str | None = None
    #: refusal chunk ids; None: those ``chunks`` marks
    refusal_marked: Sequence[str] | None = None
    #: one metadata filter for every question: a parsed node, a dict, or JSON text (parsed here)
    filter: Any = None
    #: the scale's direction; None: probed (or read from the cache)
    higher_is_better: bool | None = None
    #: backend score array -> cosine array, when the caller names the direction
    to_cosine: Callable[[np.ndarray], np.ndarray] | None = None
    #: the scale summary the result reports (None: the probed one)
    scale: dict[str, Any] | None = None
    #: a trace export or answers file, or its rows: sweep the scores production recorded
    observed: str | Path | Sequence[AnswerRow] | None = None
    answers_format: str | None = None
    #: SQLite file caching embeddings
    cache: str | Path | None = None
    trust_pickle: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        # a bad filter is refused before any file is read (with observed: refused as given)
        if isinstance(self.filter, str) and self.observed is None:
            from ...filters import parse_filter

            object.__setattr__(self, "filter", parse_filter(self.filter))


__all__ = ["SweepThresholdSettings"]
