"""indexcheck from Python: each command as one function taking specs or opened objects.

``store`` is a spec string (``faiss:./index``) or an opened store; ``embedder`` a spec
string (``minilm``), an opened embedder or None for the default; ``chunks``/``questions``
a path or what :func:`load_chunks`/:func:`load_questions` return; ``cache`` a SQLite file
for embeddings (and judgements). What a function opens from a spec it also closes; what it
is given it leaves open. The core never sees a spec string; each command's setup (scale,
threshold conversion, refusal marking) is its core package's ``prepare``. Each result is
stamped here, by :func:`indexcheck.manifest.stamp`. The CLI calls these functions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, closing, contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .chunk_stream import ChunkSource, FileChunks
from .core.answers import DEFAULT_ANSWER_REFUSAL_PATTERN
from .core.retrieval import DEFAULT_REFUSAL_PATTERN
from .corpus import Corpus, load_chunks
from .embedders import opened_embedder
from .embedders.base import Embedder
from .engine import open_engine
from .manifest import Run, stamp
from .questions import Question, load_questions
from .stores.base import VectorStore
from .stores.opening import opened_store

if TYPE_CHECKING:
    from .core.answers import AnswerRow
    from .core.check_index import CheckIndexResult
    from .core.ci import CiResult
    from .core.ci.config import CiConfig
    from .core.compare_ann import AnnResult, QuerySet
    from .core.diagnose import DiagnoseResult
    from .core.diff_index import DiffResult
    from .core.judge import JudgeResult
    from .core.judge.answer_checks import AnswerChecksResult
    from .core.probe_scale import ScaleResult
    from .core.questions import QuestionSetResult
    from .core.sweep_threshold import SweepResult
    from .core.system.result import SystemDiagnoseResult
    from .embed_text import EmbedTemplate
    from .judges.base import Judge

StoreLike = str | VectorStore
EmbedderLike = str | Embedder | None
Say = Callable[[str], None]
Converter = Callable[[np.ndarray], np.ndarray]
PathLike = str | Path


@contextmanager
def _opened(
    store: StoreLike | None, embedder: EmbedderLike | bool = False, *, trust_pickle: bool = False,
    cache: PathLike | None = None,
) -> Iterator[tuple[Any, Embedder | None]]:  # fmt: skip
    """The store (and embedder behind the ``cache``, unless ``embedder is False``), closing
    what was opened here when the block ends, also when it raises."""
    with ExitStack() as stack:
        s = None if store is None else stack.enter_context(opened_store(store, trust_pickle))
        path = Path(cache) if cache is not None else None
        e = None if embedder is False else stack.enter_context(opened_embedder(embedder, path))
        yield s, e


def _corpus(chunks: PathLike | Corpus | None) -> Corpus | None:
    return load_chunks(chunks) if isinstance(chunks, str | Path) else chunks


def _path(path: PathLike | None) -> Path | None:
    return None if path is None else Path(path)


def _engine(stack: ExitStack, engine: str | Any, ray_address: str | None) -> Any:
    """``engine`` as given, or opened from its name ("local", "ray") and closed with ``stack``."""
    if not isinstance(engine, str):
        return engine
    return stack.enter_context(closing(open_engine(engine, ray_address)))


def _questions(questions: PathLike | Sequence[Question]) -> Sequence[Question]:
    return load_questions(questions) if isinstance(questions, str | Path) else questions


def check_index(
    store: StoreLike, chunks: PathLike | Corpus | ChunkSource | None,
    embedder: EmbedderLike = None, *, sample: int | None = 100, seed: int = 0,
    min_cosine: float = 0.999, window: int = 16, diagnose_budget: int = 2000,
    only: Sequence[str] | None = None, max_fault_rate: float | None = None,
    template: EmbedTemplate | None = None, stream: bool = False, rows: PathLike | None = None,
    block: int = 4096, engine: str | Any = None, ray_address: str | None = None,
    concurrency: int = 1, cache: PathLike | None = None, progress: Say | None = None,
    tick: Callable[[str, int, int | None], None] | None = None, trust_pickle: bool = False,
) -> CheckIndexResult:  # fmt: skip
    """Re-embed ``sample`` chunks (None: all) and compare each with its stored vector
    (cosine of float32 unit vectors >= ``min_cosine``); ``result.ok`` is the verdict.
    ``stream`` checks every chunk in blocks of ``block`` (memory stays flat; ``chunks`` a
    path is read block by block, None reads the store's texts), each chunk's row written to
    ``rows``, embedded by ``engine`` ("local", "ray" with ``ray_address``, or an engine)."""
    from .core.check_index import check_index as run
    from .core.check_index.streamed import check_all

    started = Run("check-index")
    with ExitStack() as stack:
        if stream and not hasattr(engine, "embed_blocks"):
            engine = stack.enter_context(closing(open_engine(engine or "local", ray_address)))
        s, e = stack.enter_context(_opened(store, embedder, trust_pickle=trust_pickle, cache=cache))
        assert e is not None
        if concurrency > 1:
            getattr(e, "inner", e).concurrency = concurrency  # up to N batches at once
        if stream:
            source = FileChunks(chunks) if isinstance(chunks, str | Path) else chunks
            result = check_all(
                s, e, source, min_cosine=min_cosine, window=window, rows_path=rows,
                engine=engine, say=progress, tick=tick, block=block, template=template,
            )  # fmt: skip
        else:
            result = run(
                s, e, _corpus(chunks), sample=sample, seed=seed, min_cosine=min_cosine,  # type: ignore[arg-type]
                window=window, diagnose_budget=diagnose_budget, only=only, progress=progress,
                max_fault_rate=max_fault_rate, template=template,
            )  # fmt: skip
        stamp(result, started, s, e, seed=seed)
        return result


def probe_scale(
    store: StoreLike, probes: int = 16, k: int = 8, seed: int = 0, *, filter: Any = None,
    cache: bool = False, reuse: bool = False, progress: Say | None = None,
    trust_pickle: bool = False,
) -> ScaleResult:  # fmt: skip
    """Which formula the store's scores follow, from ``probes`` queries of ``k`` results;
    ``cache`` keeps the result per index fingerprint for later commands (unfiltered only).
    ``reuse`` (unfiltered) returns the result kept for this index instead, probing (and
    keeping) only when there is none (``convert-threshold --store``)."""
    from .core.probe_scale import cache_path, scale_for, write_cache
    from .core.probe_scale import probe_scale as run

    started = Run("probe-scale")
    with _opened(store, trust_pickle=trust_pickle) as (s, _):
        if progress is not None:
            progress(f"probing {s.spec} with {probes} queries")
        if reuse and filter is None:
            result = scale_for(s, probes=probes, k=k, seed=seed)
            result.manifest = {}  # this call's, not the run that measured it
        else:
            result = run(s, probes, k, seed, filter=filter)
        stamp(result, started, s)  # the cached copy carries the manifest too
        if cache and filter is None:
            write_cache(result, cache_path(s))
            result.manifest["cache"] = str(cache_path(s))
        return result


def sweep_threshold(
    store: StoreLike, questions: PathLike | Sequence[Question], embedder: EmbedderLike = None, *,
    chunks: PathLike | Corpus | None = None, k: int = 4, fetch: int = 20,
    recall_target: float = 0.95, rule: str = "recall", refusal_pattern: str | None = None,
    refusal_marked: Sequence[str] | None = None, filter: Any = None,
    higher_is_better: bool | None = None, to_cosine: Converter | None = None,
    scale: dict[str, Any] | None = None, cache: PathLike | None = None,
    progress: Say | None = None, trust_pickle: bool = False,
) -> SweepResult:  # fmt: skip
    """Sweep every observed score as a refusal threshold (float32 scores on the store's own
    scale). The scale is probed (or read from the cache) unless ``higher_is_better`` is
    given; ``chunks`` may mark refusal chunks with a truthy ``refusal`` column."""
    from .core.sweep_threshold import prepare
    from .core.sweep_threshold import sweep_threshold as run

    started = Run("sweep-threshold")
    with _opened(store, embedder, trust_pickle=trust_pickle, cache=cache) as (s, e):
        assert e is not None
        setup = prepare(
            s, _corpus(chunks), higher_is_better=higher_is_better, to_cosine=to_cosine,
            refusal_marked=refusal_marked, progress=progress,
        )  # fmt: skip
        qs = _questions(questions)
        if progress is not None:
            progress(f"retrieving {len(qs)} questions")
        result = run(
            s, e, qs, k=k, fetch=fetch, higher_is_better=setup.higher_is_better,
            to_cosine=setup.to_cosine, scale=setup.scale if scale is None else scale,
            recall_target=recall_target, rule=rule, refusal_pattern=refusal_pattern,
            refusal_marked=setup.refusal_marked, filter=filter,
        )  # fmt: skip
        stamp(result, started, s, e)
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
    value of its search parameter (``store`` a spec: it is reopened at each value).

    For an index that compresses (FAISS PQ/SQ/LSH), measure against the vectors as added:
    ``truth_from="chunks"`` re-embeds the texts (``chunks``, or the store's) with
    ``embedder``, or ``truth_store`` (a spec or store) holds them under the same ids."""
    from .core.compare_ann import DEFAULT_NOISE
    from .core.compare_ann.run import run_compare
    from .core.compare_ann.setup import check_query_choice, check_truth_choice
    from .core.exact import engine_scope
    from .stores.opening import swept_opener

    check_truth_choice(truth_from, truth_store)
    check_query_choice(questions, query_vectors)
    open_at = None
    if sweep is not None:  # refuse a parameter the store has not before any work
        spec = store if isinstance(store, str) else store.spec
        open_at = swept_opener(spec, sweep[0], sweep[1], trust_pickle)
    started = Run("compare-ann")
    with ExitStack() as stack:
        stack.enter_context(engine_scope(_engine(stack, engine, ray_address)))
        uses = embedder if truth_from == "chunks" or questions is not None else False
        s, e = stack.enter_context(_opened(store, uses, trust_pickle=trust_pickle, cache=cache))
        t = None
        if truth_store is not None:
            t, _ = stack.enter_context(_opened(truth_store, trust_pickle=trust_pickle))
        result, facts = run_compare(
            s, queries, k=k, fetch=fetch, target=target, seed=seed, truth_from=truth_from,
            noise=DEFAULT_NOISE if noise is None else noise, truth_store=t, embedder=e,
            corpus=_corpus(chunks), questions=_path(questions), cache_dir=cache_dir,
            query_vectors=_path(query_vectors), filter=filter, filters=filters, truth=truth,
            true_vectors=true_vectors, sweep=sweep, open_at=open_at, progress=progress,
        )  # fmt: skip
        stamp(result, started, s, e, seed=seed, **facts)
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
    failing questions under ``intervene`` beside a control (:mod:`indexcheck.core.system`).
    """
    from .core.diagnose import diagnose as run
    from .core.diagnose import prepare_run
    from .judges import opened_judge

    corpus, qs, started = _corpus(chunks), _questions(questions), Run("diagnose")
    if system is not None:
        from .core.system import diagnose_system, prepare_system

        app, interventions = prepare_system(system, intervene, budget_calls, answer_refusal_pattern)
        with _opened(store, embedder, trust_pickle=trust_pickle, cache=cache) as (s, e):
            r = diagnose_system(
                app, qs, runs=runs, interventions=interventions, store=s, embedder=e,
                corpus=corpus, cache_path=cache, min_cosine=min_cosine, depth=k,
                progress=progress,
            )  # fmt: skip
            stamp(r, started, s, e, seed=seed, system=r.system, cost=r.cost)
            return r
    with _opened(store, embedder, trust_pickle=trust_pickle, cache=cache) as (s, e):
        assert e is not None
        setup, judged, extra = prepare_run(
            s, qs, corpus, answers=answers, judged=judged, cache=cache,
            open_judge=None if judge is None else partial(opened_judge, judge),
            threshold=threshold, threshold_scale=threshold_scale,
            higher_is_better=higher_is_better, to_cosine=to_cosine,
            refusal_marked=refusal_marked, progress=progress,
        )  # fmt: skip
        result = run(
            s, e, qs, corpus, k=k, fetch=fetch, threshold=setup.threshold,
            higher_is_better=setup.higher_is_better, to_cosine=setup.to_cosine,
            min_cosine=min_cosine, refusal_pattern=refusal_pattern,
            refusal_marked=setup.refusal_marked, seed=seed, progress=progress,
            answers=answers, judged=judged, answer_refusal_pattern=answer_refusal_pattern,
            filter=filter,
        )  # fmt: skip
        stamp(result, started, s, e, seed=seed, scale=setup.scale, **extra)
        return result


def diff_index(
    old: StoreLike, new: StoreLike, chunks_old: PathLike | Corpus | None = None,
    chunks_new: PathLike | Corpus | None = None, embedder: EmbedderLike = None, *,
    sample_new: int | None = 100, seed: int = 0, min_cosine: float = 0.999,
    workdir: Path | None = None, memory_limit: str = "256MB", engine: str | Any = None,
    ray_address: str | None = None, cache: PathLike | None = None, progress: Say | None = None,
    trust_pickle: bool = False,
) -> DiffResult:  # fmt: skip
    """Is ``new`` the ``old`` index plus the changes? (``indexcheck diff-index``)

    Old and new are paired by text hash (ids may differ); every text in both must keep its
    vector (cosine of unit vectors >= ``min_cosine``). ``chunks_old``/``chunks_new`` give
    the texts of an index that stores none. ``embedder`` None re-embeds nothing (unlike the
    other functions, there is no default model here): a spec or an opened embedder
    re-embeds ``sample_new`` added/changed texts (None: all). ``engine`` is "local",
    "ray" (with ``ray_address``) or an engine object. ``result.ok`` is the verdict.
    """
    from .core.diff_index import diff_index as run

    started = Run("diff-index")
    with ExitStack() as stack:
        if isinstance(engine, str):
            engine = open_engine(engine, ray_address)
            stack.callback(engine.close)
        n, _ = stack.enter_context(_opened(new, trust_pickle=trust_pickle))
        o, _ = stack.enter_context(_opened(old, trust_pickle=trust_pickle))
        uses = False if embedder is None else embedder
        _, emb = stack.enter_context(_opened(None, uses, cache=cache))
        result = run(
            o, n, chunks_old=_corpus(chunks_old), chunks_new=_corpus(chunks_new),
            embedder=emb, sample_new=sample_new, seed=seed, min_cosine=min_cosine,
            workdir=workdir, memory_limit=memory_limit, progress=progress, engine=engine,
        )  # fmt: skip
        old_store = {"spec": o.spec, "count": o.info().count, "fingerprint": o.fingerprint()}
        stamp(result, started, n, emb, seed=seed, old_store=old_store)
        return result


def run_ci(
    config: CiConfig | PathLike, baseline: dict[str, Any] | None = None,
    progress: Say | None = None, *, baseline_any_store: bool = False,
) -> CiResult:  # fmt: skip
    """``indexcheck ci`` from Python: opens the configured store (and the old index of
    ``[ci.diff-index]``) and embedder, refuses a ``baseline`` measured on another store or
    embedder (unless ``baseline_any_store``), runs the checks, closes them."""
    from .core.ci import run_ci as run
    from .core.ci.config import CiConfig, needs_embedder

    if not isinstance(config, CiConfig):
        config = CiConfig.from_toml(Path(config))
    started, trust = Run("ci"), config.trust_pickle
    with ExitStack() as stack:
        uses = config.embedder if needs_embedder(config) else False
        store, embedder = stack.enter_context(
            _opened(config.store, uses, trust_pickle=trust, cache=config.cache)
        )
        old_store = None
        if config.diff_index is not None:
            old_store, _ = stack.enter_context(_opened(config.diff_index.old, trust_pickle=trust))
        result = run(
            config, baseline, progress, store=store, embedder=embedder, old_store=old_store,
            baseline_any_store=baseline_any_store,
        )  # fmt: skip
        stamp(result, started, store, embedder)
        return result


def judge(
    answers: PathLike | Sequence[AnswerRow], judge: str | Judge, *, prompt: PathLike | None = None,
    cache: PathLike | None = None, retries: int = 2, refusal_pattern: str | None = None,
    allow_unjudged: bool = False, progress: Say | None = None,
) -> JudgeResult:  # fmt: skip
    """Grade each answer's claims against the context it was given (``indexcheck judge``).

    ``answers`` a JSONL/CSV/Parquet path or loaded rows; ``judge`` a spec
    (``mistral:MODEL``, ``openai:URL?model=M``, ``py:module:function``) or an opened judge;
    ``prompt`` a prompt file (default: the shipped one); ``cache`` a SQLite file for
    judgements. ``result.ok`` is the verdict; groundedness is never NaN.
    """
    from .core.answers import load_answers
    from .core.judge import judge_answers, load_prompt
    from .judges import judgement_cache, opened_judge

    rows = load_answers(Path(answers)) if isinstance(answers, str | Path) else answers
    loaded, started = load_prompt(prompt), Run("judge")
    with opened_judge(judge) as opened, judgement_cache(cache) as replies:
        assert opened is not None
        result = judge_answers(
            rows, opened, loaded, retries=retries, refusal_pattern=refusal_pattern,
            cache=replies, allow_unjudged=allow_unjudged, progress=progress,
        )  # fmt: skip
    stamp(
        result,
        started,
        judge={"model_id": opened.model_id},
        judging=opened.stats.as_dict(),
        prompt={"version": loaded.version, "source": loaded.source},
    )
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
    """A verified question set from the chunks (``indexcheck questions generate``).

    ``chunks`` a chunks file or Corpus, or None with ``store`` (a store that keeps its
    texts); ``generator`` and ``judge`` (default: the generator) are judge specs
    (``mistral:MODEL``, ``openai:URL?model=M``, ``py:module:function``) or opened judges;
    ``embedder`` as elsewhere (default minilm). With ``out``, the kept questions are written
    as JSONL and their provenance (with ``provenance`` added) as ``OUT.manifest.json``.
    ``cache`` a SQLite file for replies and embeddings. ``result.complete`` is False when
    ``budget_calls`` stopped the run; ``result.drops`` counts every question each gate removed.
    """
    from .core.questions import generate_questions as run
    from .core.questions.output import corpus_from_store, finish_run
    from .core.retrieval import marked_refusals
    from .errors import InputError
    from .judges import judgement_cache, opened_judge

    started, corpus = Run("questions generate"), _corpus(chunks)
    if corpus is None and store is None:
        raise InputError("generate_questions needs chunks or a store that holds texts")
    with ExitStack() as stack:
        enter = stack.enter_context
        s = None if corpus is not None else enter(opened_store(store, trust_pickle))  # type: ignore[arg-type]
        corpus = corpus if s is None else corpus_from_store(s)
        gen, ver = enter(opened_judge(generator)), enter(opened_judge(judge))
        assert gen is not None
        _, emb = enter(_opened(None, False if dry_run else embedder, cache=cache))
        replies = enter(judgement_cache(None if dry_run else cache))
        options = dict(
            n=n, oos=oos, multi_hop=multi_hop, dedupe=dedupe, max_quote=max_quote,
            fetch=fetch, link_min=link_min, retries=retries, budget_calls=budget_calls,
        )  # fmt: skip
        result = run(
            corpus, gen, emb, judge=ver, seed=seed, refusal_pattern=refusal_pattern,
            refusal_marked=marked_refusals(corpus), cache=replies, dry_run=dry_run,
            progress=progress, **options,
        )  # fmt: skip
        facts = finish_run(
            result, generator=gen.model_id, seed=seed, options=options, provenance=provenance,
            out=out, embedder=emb, dry_run=dry_run,
        )  # fmt: skip
        stamp(result, started, s, emb, **facts)
        return result


def check_answers(
    answers: PathLike | Sequence[AnswerRow], chunks: PathLike | Corpus, *,
    citation_pattern: str | None = None, id_column: str = "id", text_column: str = "text",
) -> AnswerChecksResult:  # fmt: skip
    """Flag what answers state that neither their context nor the knowledge base holds
    (``indexcheck check-answers``), with no model.

    ``answers`` a JSONL/CSV/Parquet path (read as ``judge`` reads it, ``citation_pattern``
    marking the citations to drop) or loaded rows; ``chunks`` a chunks file (its
    ``id_column``/``text_column``) or a loaded corpus. ``result.ok`` is True when nothing is
    flagged; ``result.to_dict()`` has every answer's flags and the rates with intervals.
    """
    from .core.answers import DEFAULT_CITATION_PATTERN, load_answers
    from .core.judge.answer_checks import check_answers as run

    started = Run("check-answers")
    pattern = citation_pattern or DEFAULT_CITATION_PATTERN
    rows = load_answers(Path(answers), pattern) if isinstance(answers, str | Path) else answers
    corpus = (
        load_chunks(chunks, id_column, text_column) if isinstance(chunks, str | Path) else chunks
    )
    result = run(rows, corpus)
    path = str(answers) if isinstance(answers, str | Path) else None
    stamp(result, started, answers_file=path)
    return result
