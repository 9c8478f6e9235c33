"""Every option of ``diagnose`` (and ``diagnose --system``) as :func:`indexcheck.api.diagnose`
receives it: built once at the face and passed down unchanged."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...inputs.answers import DEFAULT_ANSWER_REFUSAL_PATTERN
from ..kit.settings import AT_LEAST_1, COSINE, SEED, Settings, bound


@dataclass(frozen=True)
class DiagnoseSettings(Settings):
    """The api's keywords, same names and defaults (the callbacks aside)."""

    #: a spec or an opened store (the core takes the opened one)
    store: Any = None
    #: a questions file or loaded questions
    questions: str | Path | Sequence[Any] = ()
    #: a chunks file (read with ``id_column``/``text_column``), a Corpus, or None
    chunks: Any = None
    embedder: Any = None
    k: int = field(default=4, metadata=AT_LEAST_1)
    fetch: int = field(default=20, metadata=AT_LEAST_1)
    #: the application's refusal threshold, on ``threshold_scale`` (None: no threshold)
    threshold: float | None = None
    threshold_scale: str = "backend"
    #: the store's direction (None: probed, or read from the scale cache)
    higher_is_better: bool | None = None
    to_cosine: Callable[[np.ndarray], np.ndarray] | None = None
    min_cosine: float = field(default=0.999, metadata=COSINE)
    refusal_pattern: str | None = None
    #: chunk ids of refusal chunks (None: the chunks file's truthy ``refusal`` column)
    refusal_marked: Sequence[str] | None = None
    seed: int = field(default=0, metadata=SEED)
    #: an answers file or trace export (read as ``answers_format``), or loaded rows
    answers: Any = None
    #: answers already judged (judge results), instead of ``judge``
    judged: Sequence[Any] | None = None
    #: a judge spec or an opened judge, grading ``answers`` for UNGROUNDED
    judge: Any = None
    answer_refusal_pattern: str = DEFAULT_ANSWER_REFUSAL_PATTERN
    #: a filter as JSON text, a mapping or a parsed node, AND-ed with each question's own
    filter: Any = None
    #: ``py:module:object`` or the application object (diagnose --system)
    system: Any = None
    #: with ``system``: runs of every question
    runs: int = field(default=3, metadata=bound(1, 1000))
    #: with ``system``: ``"gold-context,fetch=20"`` or a list of those
    intervene: str | Sequence[str] | None = None
    #: with ``system``: stop before the application call that would exceed it
    budget_calls: int | None = field(default=None, metadata=AT_LEAST_1)
    #: a SQLite file for embeddings, judgements and --system's staged calls
    cache: str | Path | None = None
    trust_pickle: bool = False
    #: the trace format of an ``answers`` file (None: sniffed)
    answers_format: str | None = None
    id_column: str = "id"
    text_column: str = "text"


__all__ = ["DiagnoseSettings"]
