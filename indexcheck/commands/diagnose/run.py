"""diagnose's one entry from the face: read what the settings name, open the store and
embedder, run (retrieval stages, or the user's application with ``system``), stamp the
manifest once, close."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ...embedders.base import Embedder
from ...errors import InputError
from ...inputs.corpus import Corpus
from ...inputs.questions import Question
from ...output.manifest import Run, stamp
from ...stores.base import VectorStore
from ...stores.opening import opened
from . import report as _report  # noqa: F401 (its renderer: the result's summary in a notebook)
from .result import DiagnoseResult
from .settings import DiagnoseSettings
from .system.result import SystemDiagnoseResult

Say = Callable[[str], None]


@dataclasses.dataclass(frozen=True)
class Inputs:
    """The questions, chunks and common filter read from the settings (in that order: a
    bad filter is refused before any file is read), and their manifest entries."""

    questions: Sequence[Question]
    corpus: Corpus | None
    filter: Any
    manifest: dict[str, Any]


def read_inputs(settings: DiagnoseSettings) -> Inputs:
    """The filter parsed (JSON text), the questions and chunks read (paths)."""
    from ...filters import parse_filter
    from ...inputs.given import corpus_of, questions_of

    common = settings.filter
    if isinstance(common, str):
        common = parse_filter(common)
    questions = questions_of(settings.questions)
    corpus = corpus_of(settings.chunks, settings.id_column, settings.text_column)
    given = settings.questions
    manifest = {"questions": str(given)} if isinstance(given, str | Path) else {}
    return Inputs(questions, corpus, common, manifest)


def read_answers_of(settings: DiagnoseSettings, inputs: Inputs) -> tuple[Any, dict[str, Any]]:
    """``settings.answers`` as rows (a file or trace export read, its source for the
    manifest), the answer refusal pattern checked; the filters' manifest entries."""
    from ...inputs.answers import DEFAULT_CITATION_PATTERN, compile_pattern, read_answers
    from ...inputs.question_filters import filters_manifest
    from ..sweep_threshold.filters import question_filters

    if settings.judge is not None and settings.answers is None:
        raise InputError("--judge needs --answers: the answers to judge")
    answers, facts = settings.answers, {}
    if isinstance(answers, str | Path):
        read = read_answers(
            answers, DEFAULT_CITATION_PATTERN, fmt=settings.answers_format, chunks=inputs.corpus
        )
        answers = read.rows
        if read.source is not None:
            facts["answers_source"] = read.source
    if answers is not None:
        compile_pattern(settings.answer_refusal_pattern, "--answer-refusal-pattern")
    facts.update(filters_manifest(question_filters(inputs.questions, inputs.filter)))
    return answers, facts


def run_diagnose(
    settings: DiagnoseSettings, progress: Say | None = None, warn: Say | None = None
) -> DiagnoseResult | SystemDiagnoseResult:
    """diagnose from the face: everything read and checked before the store opens (a trace
    export's warnings go to ``warn`` as they are read, escaped); the result stamped with the
    run's manifest (seed, scale, judging, the questions file, the answers' source, the
    filters; with ``system`` the application and its cost)."""
    inputs = read_inputs(settings)
    if settings.system is not None:
        return _run_system(settings, inputs, progress)
    answers, facts = read_answers_of(settings, inputs)
    if warn is not None:
        from .trace_refusals import warning_lines

        for line in warning_lines(facts.get("answers_source")):
            warn(line)
    settings = dataclasses.replace(settings, answers=answers, filter=inputs.filter)
    started, s = Run("diagnose"), settings
    with opened(s.store, s.embedder, trust_pickle=s.trust_pickle, cache=s.cache) as (store, e):
        result, run_facts = diagnose_opened(settings, store, e, inputs, progress)
        stamp(result, started, store, e, seed=s.seed, **run_facts, **inputs.manifest, **facts)
        return result


def diagnose_opened(
    settings: DiagnoseSettings,
    store: VectorStore,
    embedder: Embedder,
    inputs: Inputs,
    progress: Say | None = None,
) -> tuple[DiagnoseResult, dict[str, Any]]:
    """On opened objects: with ``answers`` and ``judge``, the answers judged for UNGROUNDED
    (judgements cached in ``cache``) once every input is good (judging is paid, so
    expected ids absent from the store are refused first); the scale, the threshold on the
    backend's scale and the refusal chunks (:func:`prepare`); then :func:`diagnose`.
    Returns the result and its manifest facts (``scale``; ``judging``, the judge's call
    stats, when it was called)."""
    from functools import partial

    from ...judges import opened_judge
    from ..kit.id_pairing import refuse_absent_expected_ids
    from ..probe_scale.setup import ScoreRequest
    from . import diagnose, prepare

    facts: dict[str, Any] = {}
    questions, corpus, s = inputs.questions, inputs.corpus, settings
    if s.judge is not None and s.answers is not None:
        from ..judge.run import judged_answers

        refuse_absent_expected_ids(store, questions, corpus)
        judged, facts["judging"] = judged_answers(
            s.answers, partial(opened_judge, s.judge), s.cache
        )
        settings = dataclasses.replace(settings, judged=judged)
    asked = ScoreRequest(
        s.threshold, s.threshold_scale, s.higher_is_better, s.to_cosine, s.refusal_marked
    )
    setup = prepare(store, corpus, asked, progress=progress)
    result = diagnose(settings, store, embedder, questions, corpus, setup, progress)
    return result, {"scale": setup.scale, **facts}


def _run_system(
    settings: DiagnoseSettings, inputs: Inputs, progress: Say | None
) -> SystemDiagnoseResult:
    """diagnose --system: the application loaded and the interventions parsed before
    anything opens; run, replay and label (:mod:`.system`)."""
    from .system import diagnose_system, prepare_system

    s = settings
    app, interventions = prepare_system(settings)
    started = Run("diagnose")
    with opened(s.store, s.embedder, trust_pickle=s.trust_pickle, cache=s.cache) as (store, e):
        r = diagnose_system(
            settings, app, interventions, inputs.questions, inputs.corpus, store, e, progress
        )
        stamp(r, started, store, e, seed=s.seed, system=r.system, cost=r.cost, **inputs.manifest)
        return r


__all__ = ["DiagnoseSettings", "Inputs", "diagnose_opened", "read_inputs", "run_diagnose"]
