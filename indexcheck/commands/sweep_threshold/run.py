"""sweep-threshold's run from its settings, the same for the api (and so the CLI): every
question retrieved from the store (:func:`.sweep_threshold`), or with ``observed`` the scores
the production traces recorded (:func:`.observed.sweep_observed`), the store then only naming
the scale; the manifest stamped once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ...embedders.base import Embedder
from ...errors import InputError
from ...inputs.answers import DEFAULT_CITATION_PATTERN, AnswerRow, read_answers
from ...inputs.corpus import Corpus
from ...inputs.given import corpus_of, questions_of
from ...inputs.question_filters import filters_manifest
from ...inputs.questions import Question
from ...output.manifest import Run, stamp
from ...stores.base import VectorStore
from ...stores.opening import opened
from ..probe_scale.setup import ScoreRequest
from . import SweepResult, prepare, sweep_threshold
from . import report as _report  # noqa: F401 (its renderer: the result's summary in a notebook)
from .filters import question_filters
from .observed import refuse_absent_scores, refuse_filter, sweep_observed
from .settings import SweepThresholdSettings
from .traces import ObservedTraces, unlabelled_warning

Say = Callable[[str], None]


def run_sweep_threshold(
    settings: SweepThresholdSettings, progress: Say | None = None
) -> SweepResult:
    """Load the questions (and chunks), open the store and embedder the settings name
    (nothing is embedded with ``observed``), sweep, stamp the manifest (the questions
    file, the filters or what the join with the traces did) and close what was opened."""
    s, started = settings, Run("sweep-threshold")
    questions, corpus = questions_of(s.questions), corpus_of(s.chunks)
    if s.observed is None and s.store is None:  # before the embedder opens
        raise InputError(
            "sweep-threshold needs a store (to retrieve every question) or observed "
            "traces (the scores production recorded)"
        )
    uses = s.embedder if s.observed is None else False  # observed scores: nothing is embedded
    with opened(s.store, uses, trust_pickle=s.trust_pickle, cache=s.cache) as (store, embedder):
        if s.observed is None:
            result = _retrieved(s, store, embedder, questions, corpus, progress)
            facts = filters_manifest(question_filters(questions, s.filter))
        else:
            result, observed = _observed(s, store, questions, corpus, progress)
            facts = {"observed": observed}
        given = {"questions": str(s.questions)} if isinstance(s.questions, str | Path) else {}
        stamp(result, started, store, embedder, **given, **facts)
        return result


def _retrieved(
    s: SweepThresholdSettings,
    store: VectorStore | None,
    embedder: Embedder | None,
    questions: Sequence[Question],
    corpus: Corpus | None,
    progress: Say | None,
) -> SweepResult:
    assert store is not None and embedder is not None, "both opened whenever it retrieves"
    return sweep_threshold(s, store, embedder, questions, corpus, progress)


def _observed(
    s: SweepThresholdSettings,
    store: VectorStore | None,
    questions: Sequence[Question],
    corpus: Corpus | None,
    progress: Say | None,
) -> tuple[SweepResult, dict[str, Any]]:
    """``observed`` (a file read as ``answers_format``, None: sniffed; traces read ahead;
    or rows) swept on the scale the store names (probed or cached, unless
    ``higher_is_better`` is given; no store: the traces' own, higher unless told); a
    ``filter`` refused. Returns the result and what the join did (with the file and format
    of traces read ahead)."""
    refuse_filter(s.filter)
    rows: Sequence[AnswerRow]
    source, named = "--observed", {}
    if isinstance(s.observed, str | Path):
        source = str(s.observed)
        read = read_answers(
            s.observed, DEFAULT_CITATION_PATTERN, fmt=s.answers_format, chunks=corpus
        )
        rows = read.rows
    else:
        assert s.observed is not None
        rows = s.observed
        if isinstance(rows, ObservedTraces):
            named = {"file": rows.file, "format": rows.format}
    refuse_absent_scores(rows, source)  # before the store's scale is probed
    asked = ScoreRequest(
        higher_is_better=s.higher_is_better, to_cosine=s.to_cosine, refusal_marked=s.refusal_marked
    )
    setup = prepare(store, corpus, asked, progress=progress)
    result, facts = sweep_observed(rows, questions, s, setup, source)
    result.warnings = unlabelled_warning(facts)
    return result, {**named, **facts}


__all__ = ["SweepThresholdSettings", "run_sweep_threshold"]
