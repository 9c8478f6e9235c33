"""indexcheck from Python: each command as one function taking specs or opened objects.

``store`` is a spec string (``faiss:./index``) or an opened store; ``embedder`` a spec
string (``minilm``), an opened embedder or None for the default; ``chunks``/``questions``
a path or what :func:`load_chunks`/:func:`load_questions` return; ``cache`` a SQLite file
for embeddings (and judgements). What a function opens from a spec it also closes; what it
is given it leaves open. The core never sees a spec string: each command's whole run on
opened objects (scale, threshold conversion, refusal marking) is in its core package. Each
result is stamped here, by :func:`indexcheck.output.manifest.stamp`. The CLI calls these functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .commands.kit.retrieval import DEFAULT_REFUSAL_PATTERN, marked_refusals
from .embedders.base import Embedder
from .engines import entered_engine
from .inputs.answers import DEFAULT_ANSWER_REFUSAL_PATTERN
from .inputs.chunk_stream import ChunkSource
from .inputs.corpus import Corpus
from .inputs.given import corpus_of as _corpus
from .inputs.given import questions_of as _questions
from .inputs.questions import Question
from .judges import judgement_cache, opened_judge
from .output.manifest import Run, stamp
from .stores.base import VectorStore
from .stores.opening import opened, opened_pair, swept_opener

if TYPE_CHECKING:
    from .commands.check_index import CheckIndexResult
    from .commands.ci import CiConfig, CiResult
    from .commands.compare_ann import AnnResult, QuerySet
    from .commands.diagnose import DiagnoseResult
    from .commands.diagnose.system.result import SystemDiagnoseResult
    from .commands.diff_index import DiffResult
    from .commands.embed import EmbedResult
    from .commands.judge import JudgeResult
    from .commands.judge.answer_checks import AnswerChecksResult
    from .commands.probe_scale import ScaleResult
    from .commands.questions import QuestionSetResult
    from .commands.sweep_threshold import SweepResult
    from .inputs.answers import AnswerRow
    from .inputs.embed_text import EmbedTemplate
    from .judges.base import Judge

StoreLike = str | VectorStore
EmbedderLike = str | Embedder | None
Say = Callable[[str], None]
Converter = Callable[[np.ndarray], np.ndarray]
PathLike = str | Path


def check_index(
    store: StoreLike, chunks: PathLike | Corpus | ChunkSource | None,
    embedder: EmbedderLike = None, *, sample: int | None = 100, seed: int = 0,
    min_cosine: float = 0.999, window: int = 16, diagnose_budget: int = 2000,
    only: Sequence[str] | None = None, max_fault_rate: float | None = None,
    template: str | EmbedTemplate | None = None, stream: bool = False,
    rows: PathLike | None = None, block: int = 4096, engine: str | Any = None,
    ray_address: str | None = None, concurrency: int = 1, cache: PathLike | None = None,
    progress: Say | None = None, tick: Callable[[str, int, int | None], None] | None = None,
    trust_pickle: bool = False, id_column: str = "id", text_column: str = "text",
) -> CheckIndexResult:  # fmt: skip
    """Re-embed ``sample`` chunks (None: all; the store is then read in its order, without
    an id map) and compare each with its stored vector (unit float32 cosine >= ``min_cosine``;
    ``result.ok``: the verdict). ``stream``: in blocks of ``block`` (flat memory; a ``chunks``
    path read by block, None: the store's texts), rows written to ``rows``, embedded by
    ``engine`` ("local", "ray" with ``ray_address``, or an engine). A ``chunks`` path is read
    with its ``id_column``/``text_column``; ``template`` may be the ``--embed-template`` text."""
    from .commands.check_index import CheckIndexSettings, run_check_index

    settings = CheckIndexSettings(
        store=store, chunks=chunks, embedder=embedder, sample=sample, seed=seed,
        min_cosine=min_cosine, window=window, diagnose_budget=diagnose_budget, only=only,
        max_fault_rate=max_fault_rate, template=template, stream=stream, rows=rows, block=block,
        engine=engine, ray_address=ray_address, concurrency=concurrency, cache=cache,
        trust_pickle=trust_pickle, id_column=id_column, text_column=text_column,
    )  # fmt: skip
    return run_check_index(settings, progress, tick)


def probe_scale(
    store: StoreLike, probes: int = 16, k: int = 8, seed: int = 0, *, filter: Any = None,
    cache: bool = False, reuse: bool = False, progress: Say | None = None,
    trust_pickle: bool = False,
) -> ScaleResult:  # fmt: skip
    """Which formula the store's scores follow, from ``probes`` queries of ``k`` results;
    ``cache`` keeps the result per index fingerprint for later commands (unfiltered only).
    ``reuse`` (unfiltered) returns the result kept for this index instead, probing (and
    keeping) only when there is none (``convert-threshold --store``)."""
    from .commands.probe_scale.run import keep_scale, measure_scale

    started = Run("probe-scale")
    with opened(store, trust_pickle=trust_pickle) as (s, _):
        result = measure_scale(s, probes, k, seed, filter=filter, reuse=reuse, progress=progress)
        stamp(result, started, s)  # the kept copy carries the manifest too
        if cache and filter is None:
            keep_scale(result, s)
        return result


def embed(
    chunks: PathLike | Corpus, embedder: EmbedderLike = None, *, out: PathLike | None = None,
    faiss: PathLike | None = None, id_column: str = "id", text_column: str = "text",
    cache: PathLike | None = None, progress: Say | None = None,
) -> EmbedResult:  # fmt: skip
    """The reference re-embedding (``indexcheck embed``): each distinct chunk text embedded
    once into a NEW vectors file ``out`` (.parquet or .jsonl) and/or a NEW FAISS folder
    ``faiss``; one that exists is refused (exit 2) before the embedder opens."""
    from .commands.embed import EmbedSettings, run_embed

    settings = EmbedSettings(
        chunks, embedder, out=out, faiss=faiss, id_column=id_column, text_column=text_column,
        cache=cache,
    )  # fmt: skip
    return run_embed(settings, progress)


def sweep_threshold(
    store: StoreLike | None, questions: PathLike | Sequence[Question],
    embedder: EmbedderLike = None, *, chunks: PathLike | Corpus | None = None, k: int = 4,
    fetch: int = 20, recall_target: float = 0.95, rule: str = "recall",
    refusal_pattern: str | None = None, refusal_marked: Sequence[str] | None = None,
    filter: Any = None, higher_is_better: bool | None = None, to_cosine: Converter | None = None,
    scale: dict[str, Any] | None = None, observed: PathLike | Sequence[AnswerRow] | None = None,
    answers_format: str | None = None, cache: PathLike | None = None,
    progress: Say | None = None, trust_pickle: bool = False,
) -> SweepResult:  # fmt: skip
    """Sweep every observed score as a refusal threshold (float32 scores on the store's own
    scale). The scale is probed (or read from the cache) unless ``higher_is_better`` is
    given; ``chunks`` may mark refusal chunks with a truthy ``refusal`` column. ``observed``
    (a trace export or answers file, read as ``answers_format``, or its rows) sweeps the
    scores production recorded: nothing is retrieved, ``store`` (or None) names the scale."""
    from .commands.sweep_threshold.run import run_sweep

    started = Run("sweep-threshold")
    uses = embedder if observed is None else False  # observed scores: nothing is embedded
    with opened(store, uses, trust_pickle=trust_pickle, cache=cache) as (s, e):
        result, facts = run_sweep(
            s, e, _questions(questions), corpus=_corpus(chunks), k=k, fetch=fetch, rule=rule,
            recall_target=recall_target, refusal_pattern=refusal_pattern, filter=filter,
            refusal_marked=refusal_marked, higher_is_better=higher_is_better,
            to_cosine=to_cosine, scale=scale, observed=observed, answers_format=answers_format,
            progress=progress,
        )  # fmt: skip
        stamp(result, started, s, e, **facts)
        return result


def compare_ann(
    store: StoreLike, queries: int | np.ndarray | QuerySet = 500, *, k: int = 4,
    fetch: Sequence[int] | None = (4, 10, 20, 50), target: float = 0.01, seed: int = 0,
    noise: float | None = None, questions: PathLike | None = None,
    query_vectors: PathLike | None = None, truth_from: str | None = None,
    truth_store: StoreLike | None = None, chunks: PathLike | Corpus | None = None,
    embedder: EmbedderLike = None, cache_dir: Path | None = None, filter: Any = None,
    filters: Sequence[Any] | None = None, sweep: tuple[str, Sequence[int]] | None = None,
    truth: Any = None, true_vectors: Any = None, engine: str | Any = None,
    ray_address: str | None = None, cache: PathLike | None = None,
    progress: Say | None = None, trust_pickle: bool = False,
) -> AnnResult:  # fmt: skip
    """Approximate vs exact search at each fetch depth. ``queries``: a number of stored
    vectors to sample (moved by ``noise``), float32 (q, d) vectors, or a QuerySet; or a
    ``questions`` file embedded with ``embedder``, or a ``query_vectors`` file (.npy or
    Parquet). ``filter`` (a parsed filter) is AND-ed with each question's own; ``filters``
    gives one per query instead. ``sweep=(key, values)`` also measures the index at each
    value of its search parameter (``store`` a spec: reopened at each value). For an
    index that compresses (FAISS PQ/SQ/LSH), measure against the vectors as added:
    ``truth_from="chunks"`` re-embeds the texts (``chunks``, or the store's) with
    ``embedder``, or ``truth_store`` (a spec or store) holds them under the same ids."""
    from .commands.compare_ann import compare_ann
    from .commands.compare_ann.setup import check_choices, manifest_facts, prepare_queries
    from .commands.kit.exact import engine_scope

    check_choices(truth_from, truth_store, questions, query_vectors)
    open_at = swept_opener(store, sweep, trust_pickle)  # a bad parameter: before any work
    started = Run("compare-ann")
    with ExitStack() as stack:
        stack.enter_context(engine_scope(entered_engine(stack, engine, ray_address)))
        uses = embedder if truth_from == "chunks" or questions is not None else False
        s, e = stack.enter_context(opened(store, uses, trust_pickle=trust_pickle, cache=cache))
        t, _ = stack.enter_context(opened(truth_store, trust_pickle=trust_pickle))
        tv, qs, filters = prepare_queries(
            s, queries, seed=seed, noise=noise, truth_from=truth_from, truth_store=t, embedder=e,
            corpus=_corpus(chunks), questions=questions, query_vectors=query_vectors, filter=filter,
            cache_dir=cache_dir, filters=filters, true_vectors=true_vectors, progress=progress,
        )  # fmt: skip
        result = compare_ann(
            s, qs, k, fetch, target, seed, cache_dir, progress, truth=truth, true_vectors=tv,
            filters=filters, sweep=sweep, open_at=open_at,
        )  # fmt: skip
        stamp(result, started, s, e, seed=seed, **manifest_facts(qs, filters))
        return result


def diagnose(
    store: StoreLike, questions: PathLike | Sequence[Question],
    chunks: PathLike | Corpus | None = None, embedder: EmbedderLike = None, *, k: int = 4,
    fetch: int = 20, threshold: float | None = None, threshold_scale: str = "backend",
    higher_is_better: bool | None = None, to_cosine: Converter | None = None,
    min_cosine: float = 0.999, refusal_pattern: str | None = None,
    refusal_marked: Sequence[str] | None = None, seed: int = 0,
    answers: Sequence[AnswerRow] | None = None, judged: Sequence[Any] | None = None,
    judge: str | Judge | None = None, answer_refusal_pattern: str = DEFAULT_ANSWER_REFUSAL_PATTERN,
    filter: Any = None, system: str | Any | None = None, runs: int = 3,
    intervene: str | Sequence[str] | None = None, budget_calls: int | None = None,
    cache: PathLike | None = None, progress: Say | None = None, trust_pickle: bool = False,
) -> DiagnoseResult | SystemDiagnoseResult:  # fmt: skip
    """One stage label per question: where the expected chunk was lost. ``threshold`` the
    application's refusal threshold on the store's scale, or a cosine with
    ``threshold_scale="cosine"`` (converted through the store's probed scale). ``answers``
    continue past retrieval; ``judge`` (a spec or judge) grades them for UNGROUNDED. With
    ``system`` (``py:module:object`` or the app object): run it ``runs`` times, replay
    failing questions under ``intervene`` beside a control (:mod:`indexcheck.commands.diagnose.system`)."""
    from .commands.diagnose import run_diagnose
    from .commands.diagnose.system import diagnose_system, prepare_system

    corpus, qs, started = _corpus(chunks), _questions(questions), Run("diagnose")
    if system is not None:  # refused before anything opens
        app, interventions = prepare_system(system, intervene, budget_calls, answer_refusal_pattern)
    with opened(store, embedder, trust_pickle=trust_pickle, cache=cache) as (s, e):
        if system is not None:
            r = diagnose_system(
                app, qs, runs=runs, interventions=interventions, store=s, embedder=e, corpus=corpus,
                cache_path=cache, min_cosine=min_cosine, depth=k, progress=progress,
            )  # fmt: skip
            stamp(r, started, s, e, seed=seed, system=r.system, cost=r.cost)
            return r
        result, facts = run_diagnose(
            s, e, qs, corpus, k=k, fetch=fetch, threshold=threshold, to_cosine=to_cosine,
            threshold_scale=threshold_scale, higher_is_better=higher_is_better, seed=seed,
            min_cosine=min_cosine, refusal_pattern=refusal_pattern, refusal_marked=refusal_marked,
            answers=answers, judged=judged, cache=cache, filter=filter, progress=progress,
            open_judge=None if judge is None else partial(opened_judge, judge),
            answer_refusal_pattern=answer_refusal_pattern,
        )  # fmt: skip
        stamp(result, started, s, e, seed=seed, **facts)
        return result


def diff_index(
    old: StoreLike, new: StoreLike, chunks_old: PathLike | Corpus | None = None,
    chunks_new: PathLike | Corpus | None = None, embedder: EmbedderLike = None, *,
    sample_new: int | None = 100, seed: int = 0, min_cosine: float = 0.999,
    workdir: Path | None = None, memory_limit: str = "256MB", engine: str | Any = None,
    ray_address: str | None = None, cache: PathLike | None = None, progress: Say | None = None,
    trust_pickle: bool = False,
) -> DiffResult:  # fmt: skip
    """Is ``new`` the ``old`` index plus the changes? (``indexcheck diff-index``) Old and new
    are paired by text hash (ids may differ); every text in both must keep its vector
    (cosine of unit vectors >= ``min_cosine``). ``chunks_old``/``chunks_new`` give the texts
    of an index that stores none. ``embedder`` None (no default model here) re-embeds
    nothing; a spec or an opened embedder re-embeds ``sample_new`` added/changed texts (None:
    all), by ``engine`` ("local", "ray" with ``ray_address``, or an engine). ``result.ok``
    is the verdict."""
    from .commands.diff_index import diff_index
    from .commands.diff_index.run import described

    started = Run("diff-index")
    with ExitStack() as stack:
        engine = entered_engine(stack, engine, ray_address)
        n, o = stack.enter_context(opened_pair(new, old, trust_pickle, lookups=False))  # by text
        uses = False if embedder is None else embedder
        _, e = stack.enter_context(opened(None, uses, cache=cache))
        result = diff_index(
            o, n, chunks_old=_corpus(chunks_old), chunks_new=_corpus(chunks_new),
            embedder=e, sample_new=sample_new, seed=seed, min_cosine=min_cosine,
            workdir=workdir, memory_limit=memory_limit, progress=progress, engine=engine,
        )  # fmt: skip
        stamp(result, started, n, e, seed=seed, old_store=described(o))
        return result


def run_ci(
    config: CiConfig | PathLike, baseline: dict[str, Any] | None = None,
    progress: Say | None = None, *, baseline_any_store: bool = False,
) -> CiResult:  # fmt: skip
    """``indexcheck ci`` from Python: opens the configured store (and the old index of
    ``[ci.diff-index]``) and embedder, refuses a ``baseline`` measured on another store or
    embedder (unless ``baseline_any_store``), runs the checks, closes them."""
    from .commands.ci import run_ci as run
    from .commands.ci.config import CiConfig, needs_embedder

    if not isinstance(config, CiConfig):
        config = CiConfig.from_toml(Path(config))
    started, trust, cache = Run("ci"), config.trust_pickle, config.cache
    with ExitStack() as stack:
        uses = config.embedder if needs_embedder(config) else False
        s, e = stack.enter_context(opened(config.store, uses, trust_pickle=trust, cache=cache))
        old = config.diff_index.old if config.diff_index is not None else None
        old_store, _ = stack.enter_context(opened(old, trust_pickle=trust))
        result = run(
            config, baseline, progress, store=s, embedder=e, old_store=old_store,
            baseline_any_store=baseline_any_store,
        )  # fmt: skip
        stamp(result, started, s, e)
        return result


def judge(
    answers: PathLike | Sequence[AnswerRow], judge: str | Judge, *, prompt: PathLike | None = None,
    cache: PathLike | None = None, retries: int = 2,
    refusal_pattern: str | None = DEFAULT_ANSWER_REFUSAL_PATTERN, allow_unjudged: bool = False,
    progress: Say | None = None, store: StoreLike | None = None,
    chunks: PathLike | Corpus | None = None, answers_format: str | None = None,
) -> JudgeResult:  # fmt: skip
    """Grade each answer's claims against its context (``indexcheck judge``): ``answers`` a
    JSONL/CSV/Parquet path, a trace export (``answers_format``; None: sniffed; ``chunks``, a
    chunks file or corpus, pairs its documents without ids) or rows; ``judge`` a spec
    (``mistral:MODEL``, ``py:module:fn``) or a judge; ``prompt`` a prompt file (default:
    shipped); ``cache`` a SQLite file of verdicts; ``refusal_pattern`` marks refusals (None:
    none). ``result.ok``: the verdict (never NaN); ``store``, where the contexts came from,
    is in the manifest with its fingerprint."""
    from .commands.judge.run import run_judge

    started = Run("judge")
    with opened(store) as (s, _):
        result, facts = run_judge(
            answers, partial(opened_judge, judge), prompt=prompt, cache=cache, retries=retries,
            refusal_pattern=refusal_pattern, allow_unjudged=allow_unjudged, progress=progress,
            chunks=_corpus(chunks), answers_format=answers_format,
        )  # fmt: skip
        stamp(result, started, s, **facts)
        return result


def generate_questions(
    chunks: PathLike | Corpus | None, generator: str | Judge, *, out: PathLike | None = None,
    store: StoreLike | None = None, embedder: EmbedderLike = None,
    judge: str | Judge | None = None, n: int = 30, oos: int = 10, multi_hop: float = 0.25,
    seed: int = 0, dedupe: float = 0.95, max_quote: float = 0.6, fetch: int = 20,
    link_min: float = 0.5, refusal_pattern: str | None = DEFAULT_REFUSAL_PATTERN, retries: int = 2,
    cache: PathLike | None = None, budget_calls: int | None = None, dry_run: bool = False,
    provenance: Mapping[str, Any] | None = None, progress: Say | None = None,
    trust_pickle: bool = False,
) -> QuestionSetResult:  # fmt: skip
    """A verified question set from the chunks (``indexcheck questions generate``):
    ``chunks`` a chunks file or Corpus, or None with ``store`` (a store that keeps its
    texts); ``generator`` and ``judge`` (default: the generator) judge specs
    (``mistral:MODEL``, ``openai:URL?model=M``, ``py:module:function``) or opened judges;
    ``embedder`` as elsewhere (default minilm). With ``out``, the kept questions are written
    as JSONL and their provenance (with ``provenance`` added) as ``OUT.manifest.json``.
    ``cache`` a SQLite file for replies and embeddings. ``result.complete`` is False when
    ``budget_calls`` stopped the run; ``result.drops`` counts the questions each gate removed."""
    from .commands.questions import generate_questions as generate
    from .commands.questions.output import chunks_of, finish_run

    started, corpus = Run("questions generate"), _corpus(chunks)
    with ExitStack() as stack:
        enter = stack.enter_context
        s, _ = enter(opened(None if corpus is not None else store, trust_pickle=trust_pickle))
        corpus = chunks_of(corpus, s)  # neither: refused before anything opens
        gen, ver = enter(opened_judge(generator)), enter(opened_judge(judge))
        assert gen is not None
        _, emb = enter(opened(None, False if dry_run else embedder, cache=cache))
        options: dict[str, Any] = dict(
            n=n, oos=oos, multi_hop=multi_hop, dedupe=dedupe, max_quote=max_quote, fetch=fetch,
            link_min=link_min, retries=retries, budget_calls=budget_calls,
        )  # fmt: skip
        result = generate(
            corpus, gen, emb, cache=enter(judgement_cache(None if dry_run else cache)), judge=ver,
            seed=seed, refusal_pattern=refusal_pattern, refusal_marked=marked_refusals(corpus),
            dry_run=dry_run, progress=progress, **options,
        )  # fmt: skip
        stamp(result, started, s, emb, **finish_run(result, options, provenance, out, emb))
        return result


def check_answers(
    answers: PathLike | Sequence[AnswerRow], chunks: PathLike | Corpus, *,
    citation_pattern: str | None = None, id_column: str = "id", text_column: str = "text",
    answers_format: str | None = None,
) -> AnswerChecksResult:  # fmt: skip
    """Flag what answers state that neither their context nor the knowledge base holds
    (``check-answers``), with no model: ``answers`` a JSONL/CSV/Parquet path or a trace export
    (read as ``judge`` reads it: ``citation_pattern`` marks the citations to drop,
    ``answers_format`` a trace format, None: sniffed) or loaded rows; ``chunks`` a chunks file
    (``id_column``/``text_column``) or a corpus. ``result.ok``: nothing flagged."""
    from .commands.judge.run import run_check_answers

    started = Run("check-answers")
    result, facts = run_check_answers(
        answers, chunks, citation_pattern=citation_pattern, id_column=id_column,
        text_column=text_column, answers_format=answers_format,
    )  # fmt: skip
    stamp(result, started, **facts)
    return result
