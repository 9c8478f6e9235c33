"""indexcheck from Python: each command as one function taking specs or opened objects.

``store`` is a spec string (``faiss:./index``) or an opened store; ``embedder`` a spec
string (``minilm``), an opened embedder or None for the default; ``chunks``/``questions``
a path or what :func:`load_chunks`/:func:`load_questions` return. What a function opens
from a spec it also closes; what it is given it leaves open. The core never sees a spec
string. Each result is stamped here, by :func:`indexcheck.manifest.stamp` as in ``finish``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .core.retrieval import DEFAULT_REFUSAL_PATTERN
from .corpus import Corpus, load_chunks
from .embedders import open_embedder
from .embedders.base import Embedder
from .manifest import Run, stamp
from .questions import Question, load_questions
from .stores import StoreOptions, open_store
from .stores.base import VectorStore

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
    from .judges.base import Judge

StoreLike = str | VectorStore
EmbedderLike = str | Embedder | None


@contextmanager
def _opened(
    store: StoreLike, embedder: EmbedderLike | bool = False, trust_pickle: bool = False
) -> Iterator[tuple[VectorStore, Embedder | None]]:
    """The store (and embedder, unless ``embedder is False``), closing what was opened here."""
    with ExitStack() as stack:
        if isinstance(store, str):
            store = open_store(store, StoreOptions(trust_pickle=trust_pickle))
            stack.callback(store.close)
        emb: Embedder | None = None
        if embedder is not False:
            emb = embedder if isinstance(embedder, Embedder) else _embedder(embedder)
        yield store, emb


def _embedder(spec: object) -> Embedder:
    from .embedders.cache import CachedEmbedder

    return CachedEmbedder(open_embedder(spec if isinstance(spec, str) else None), None)


def _corpus(chunks: str | Path | Corpus | None) -> Corpus | None:
    return load_chunks(chunks) if isinstance(chunks, str | Path) else chunks


def _questions(questions: str | Path | Sequence[Question]) -> Sequence[Question]:
    return load_questions(questions) if isinstance(questions, str | Path) else questions


def check_index(
    store: StoreLike,
    chunks: str | Path | Corpus | None,
    embedder: EmbedderLike = None,
    **options: Any,
) -> CheckIndexResult:
    """Re-embed chunks and compare each with its stored vector (cosine, float32).

    ``options`` as :func:`indexcheck.core.check_index.check_index` (sample, seed,
    min_cosine, window, ...); ``result.ok`` is the verdict.
    """
    from .core.check_index import check_index as run

    started = Run("check-index")
    with _opened(store, embedder, options.pop("trust_pickle", False)) as (s, e):
        assert e is not None
        result = run(s, e, _corpus(chunks), **options)
        stamp(result, started, s, e, seed=options.get("seed"))
        return result


def probe_scale(store: StoreLike, **options: Any) -> ScaleResult:
    """Which formula the store's scores follow (probes, k, seed as the CLI)."""
    from .core.probe_scale import probe_scale as run

    started = Run("probe-scale")
    with _opened(store, trust_pickle=options.pop("trust_pickle", False)) as (s, _):
        result = run(s, **options)
        stamp(result, started, s)
        return result


def sweep_threshold(
    store: StoreLike,
    questions: str | Path | Sequence[Question],
    embedder: EmbedderLike = None,
    **options: Any,
) -> SweepResult:
    """Sweep every observed score as a refusal threshold; the store's scale is probed
    (or read from the cache) unless ``higher_is_better``/``to_cosine`` are given."""
    from .core.probe_scale import scale_converters
    from .core.sweep_threshold import sweep_threshold as run

    started = Run("sweep-threshold")
    with _opened(store, embedder, options.pop("trust_pickle", False)) as (s, e):
        assert e is not None
        if "higher_is_better" not in options:
            hib, to_cos, scale = scale_converters(s)
            options.update(higher_is_better=hib, to_cosine=to_cos, scale=scale)
        result = run(s, e, _questions(questions), **options)
        stamp(result, started, s, e)
        return result


def compare_ann(
    store: StoreLike,
    queries: int | np.ndarray | QuerySet = 500,
    *,
    truth_from: str | None = None,
    truth_store: StoreLike | None = None,
    chunks: str | Path | Corpus | None = None,
    embedder: EmbedderLike = None,
    **options: Any,
) -> AnnResult:
    """Approximate vs exact search at each fetch depth. ``queries``: a number of stored
    vectors to sample (moved by ``noise``), float32 (q, d) vectors, or a QuerySet.

    For an index that compresses (FAISS PQ/SQ/LSH), measure against the vectors as added:
    ``truth_from="chunks"`` re-embeds the texts (``chunks``, or the store's) with
    ``embedder``, or ``truth_store`` (a spec or store) holds them under the same ids.
    Other ``options`` as :func:`indexcheck.core.compare_ann.compare_ann`."""
    from .core.compare_ann import DEFAULT_NOISE, sample_queries
    from .core.compare_ann import compare_ann as run
    from .core.compare_ann.queries import sample_from_vectors
    from .core.compare_ann.truth import from_chunks, from_store
    from .errors import InputError

    if truth_from not in (None, "chunks"):
        raise InputError(f"truth_from must be 'chunks' or None, got {truth_from!r}")
    if truth_from and truth_store is not None:
        raise InputError("truth_from and truth_store cannot be combined; pick one")
    noise = options.pop("noise", DEFAULT_NOISE)
    trust = options.pop("trust_pickle", False)
    started = Run("compare-ann")
    with ExitStack() as stack:
        s, e = stack.enter_context(_opened(store, embedder if truth_from else False, trust))
        tv = None
        if truth_from == "chunks":
            assert e is not None
            tv = from_chunks(s, e, _corpus(chunks))
        elif truth_store is not None:
            t, _ = stack.enter_context(_opened(truth_store, False, trust))
            tv = from_store(s, t)
        seed = options.get("seed", 0)
        if isinstance(queries, int):
            if tv is not None:
                queries = sample_from_vectors(tv.ids, tv.vectors, queries, seed, noise)
            else:
                queries = sample_queries(s, queries, seed, noise)
        result = run(s, queries, true_vectors=tv, **options)
        stamp(result, started, s, e, seed=options.get("seed"))
        return result


def diagnose(
    store: StoreLike,
    questions: str | Path | Sequence[Question],
    chunks: str | Path | Corpus | None = None,
    embedder: EmbedderLike = None,
    *,
    system: str | Any | None = None,
    runs: int = 3,
    intervene: str | Sequence[str] | None = None,
    budget_calls: int | None = None,
    cache: str | Path | None = None,
    **options: Any,
) -> DiagnoseResult | SystemDiagnoseResult:
    """One stage label per question: where the expected chunk was lost. With ``system``
    (``py:module:object`` or the app object): run it ``runs`` times, replay failing questions
    under ``intervene`` beside a control (:mod:`indexcheck.core.system`)."""
    from .core.diagnose import diagnose as run
    from .core.probe_scale import scale_converters
    from .core.retrieval import marked_refusals
    from .core.system import diagnose_system_from as system_run

    corpus = _corpus(chunks)
    started = Run("diagnose")
    with _opened(store, embedder, options.pop("trust_pickle", False)) as (s, e):
        if system is not None:
            kw = dict(runs=runs, intervene=intervene, budget_calls=budget_calls, cache=cache)
            r = system_run(system, _questions(questions), corpus, s, e, **kw, **options)
            stamp(r, started, s, e, system=r.system, cost=r.cost)
            return r
        assert e is not None
        if "higher_is_better" not in options:
            hib, to_cos, _ = scale_converters(s)
            options.update(higher_is_better=hib, to_cosine=to_cos)
        options.setdefault("refusal_marked", marked_refusals(corpus))
        result = run(s, e, _questions(questions), corpus, **options)
        stamp(result, started, s, e, seed=options.get("seed"))
        return result


def diff_index(
    old: StoreLike,
    new: StoreLike,
    chunks_old: str | Path | Corpus | None = None,
    chunks_new: str | Path | Corpus | None = None,
    embedder: EmbedderLike = None,
    **options: Any,
) -> DiffResult:
    """Is ``new`` the ``old`` index plus the changes? (``indexcheck diff-index``)

    Old and new are paired by text hash (ids may differ); every text in both must keep its
    vector (cosine of unit vectors >= ``min_cosine``). ``chunks_old``/``chunks_new`` give
    the texts of an index that stores none. ``embedder`` None re-embeds nothing (unlike the
    other functions, there is no default model here): a spec or an opened embedder
    re-embeds ``sample_new`` added/changed texts (None: all). ``engine`` is "local",
    "ray" (with ``ray_address``) or an engine object. Other ``options`` as
    :func:`indexcheck.core.diff_index.diff_index` (seed, min_cosine, workdir,
    memory_limit). ``result.ok`` is the verdict.
    """
    from .core.diff_index import diff_index as run
    from .engine import open_engine

    trust = options.pop("trust_pickle", False)
    engine = options.pop("engine", None)
    address = options.pop("ray_address", None)
    started = Run("diff-index")
    with ExitStack() as stack:
        if isinstance(engine, str):
            engine = open_engine(engine, address)
            stack.callback(engine.close)
        n, _ = stack.enter_context(_opened(new, trust_pickle=trust))
        o, _ = stack.enter_context(_opened(old, trust_pickle=trust))
        emb = None
        if embedder is not None:
            emb = embedder if isinstance(embedder, Embedder) else _embedder(embedder)
        result = run(
            o,
            n,
            chunks_old=_corpus(chunks_old),
            chunks_new=_corpus(chunks_new),
            embedder=emb,
            engine=engine,
            **options,
        )
        old_store = {"spec": o.spec, "count": o.info().count, "fingerprint": o.fingerprint()}
        stamp(result, started, n, emb, seed=options.get("seed", 0), old_store=old_store)
        return result


def run_ci(
    config: CiConfig | str | Path,
    baseline: dict[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
) -> CiResult:
    """``indexcheck ci`` from Python: opens the configured store (and the old index of
    ``[ci.diff-index]``) and embedder, runs the checks, closes them."""
    from .core.ci import run_ci as run
    from .core.ci.config import CiConfig, needs_embedder

    if not isinstance(config, CiConfig):
        config = CiConfig.from_toml(Path(config))
    started = Run("ci")
    options = StoreOptions(trust_pickle=config.trust_pickle)
    with ExitStack() as stack:
        store = open_store(config.store, options)
        stack.callback(store.close)
        old_store = None
        if config.diff_index is not None:
            old_store = open_store(config.diff_index.old, options)
            stack.callback(old_store.close)
        embedder = None
        if needs_embedder(config):
            embedder = cached_embedder(config.embedder, config.cache)
            cache = getattr(embedder, "cache", None)
            if cache is not None:
                stack.callback(cache.close)
        result = run(
            config, baseline, progress, store=store, embedder=embedder, old_store=old_store
        )
        stamp(result, started, store, embedder)
        return result


def judge(
    answers: str | Path | Sequence[AnswerRow],
    judge: str | Judge,
    *,
    prompt: str | Path | None = None,
    cache: str | Path | None = None,
    **options: Any,
) -> JudgeResult:
    """Grade each answer's claims against the context it was given (``indexcheck judge``).

    ``answers`` a JSONL/CSV/Parquet path or loaded rows; ``judge`` a spec
    (``mistral:MODEL``, ``openai:URL?model=M``, ``py:module:function``) or an opened judge;
    ``prompt`` a prompt file (default: the shipped one); ``cache`` a SQLite file for
    judgements. ``options`` as :func:`indexcheck.core.judge.judge_answers` (retries,
    refusal_pattern, allow_unjudged). ``result.ok`` is the verdict; groundedness is never NaN.
    """
    from .core.answers import load_answers
    from .core.judge import judge_answers, load_prompt
    from .judges import JudgementCache, open_judge

    rows = load_answers(Path(answers)) if isinstance(answers, str | Path) else answers
    loaded = load_prompt(prompt)
    opened = open_judge(judge) if isinstance(judge, str) else judge
    store = JudgementCache(Path(cache)) if cache is not None else None
    started = Run("judge")
    try:
        result = judge_answers(rows, opened, loaded, cache=store, **options)
    finally:
        if store is not None:
            store.close()
    stamp(
        result,
        started,
        judge={"model_id": opened.model_id},
        judging=opened.stats.as_dict(),
        prompt={"version": loaded.version, "source": loaded.source},
    )
    return result


def generate_questions(
    chunks: str | Path | Corpus | None,
    generator: str | Judge,
    *,
    out: str | Path | None = None,
    store: StoreLike | None = None,
    embedder: EmbedderLike = None,
    judge: str | Judge | None = None,
    n: int = 30,
    oos: int = 10,
    multi_hop: float = 0.25,
    seed: int = 0,
    dedupe: float = 0.95,
    max_quote: float = 0.6,
    fetch: int = 20,
    link_min: float = 0.5,
    refusal_pattern: str | None = DEFAULT_REFUSAL_PATTERN,
    retries: int = 2,
    cache: str | Path | None = None,
    budget_calls: int | None = None,
    dry_run: bool = False,
    trust_pickle: bool = False,
) -> QuestionSetResult:
    """A verified question set from the chunks (``indexcheck questions generate``).

    ``chunks`` a chunks file or Corpus, or None with ``store`` (a store that keeps its
    texts); ``generator`` and ``judge`` (default: the generator) are judge specs
    (``mistral:MODEL``, ``openai:URL?model=M``, ``py:module:function``) or opened judges;
    ``embedder`` as elsewhere (default minilm). With ``out``, the kept questions are written
    as JSONL and their provenance as ``OUT.manifest.json``. ``cache`` a SQLite file for
    replies and embeddings. ``result.complete`` is False when ``budget_calls`` stopped the
    run; ``result.drops`` counts every question each gate removed.
    """
    from .core.questions import generate_questions as run
    from .core.questions.output import corpus_from_store, manifest_of, write_question_set
    from .core.retrieval import marked_refusals
    from .judges import JudgementCache, open_judge

    started = Run("questions generate")
    with ExitStack() as stack:
        corpus = _corpus(chunks)
        opened_store = None
        if corpus is None:
            if store is None:
                from .errors import InputError

                raise InputError("generate_questions needs chunks or a store that holds texts")
            opened_store, _ = stack.enter_context(_opened(store, trust_pickle=trust_pickle))
            corpus = corpus_from_store(opened_store)
        gen = open_judge(generator) if isinstance(generator, str) else generator
        ver = open_judge(judge) if isinstance(judge, str) else judge
        for spec, opened in ((generator, gen), (judge, ver)):
            if isinstance(spec, str):
                stack.callback(getattr(opened, "close", lambda: None))
        emb = None
        if not dry_run:
            emb = (
                embedder
                if isinstance(embedder, Embedder)
                else cached_embedder(
                    embedder if isinstance(embedder, str) else None,
                    Path(cache) if cache is not None else None,
                )
            )
        replies = JudgementCache(Path(cache)) if cache is not None and not dry_run else None
        if replies is not None:
            stack.callback(replies.close)
        result = run(
            corpus,
            gen,
            emb,
            judge=ver,
            n=n,
            oos=oos,
            multi_hop=multi_hop,
            seed=seed,
            dedupe=dedupe,
            max_quote=max_quote,
            fetch=fetch,
            link_min=link_min,
            refusal_pattern=refusal_pattern,
            refusal_marked=marked_refusals(corpus),
            retries=retries,
            cache=replies,
            budget_calls=budget_calls,
            dry_run=dry_run,
        )
        provenance = {
            "seed": seed,
            "generator": {"model_id": gen.model_id},
            "judge": result.judge,
            "prompts": result.prompt_versions,
        }
        stamp(result, started, opened_store, emb, **provenance)
        if out is not None and result.questions:
            result.out = str(out)
            model = emb.model_id if emb is not None else None
            write_question_set(result.questions, Path(out), manifest_of(result, provenance, model))
        return result


def check_answers(
    answers: str | Path | Sequence[AnswerRow],
    chunks: str | Path | Corpus,
    *,
    citation_pattern: str | None = None,
    id_column: str = "id",
    text_column: str = "text",
) -> AnswerChecksResult:
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


def cached_embedder(spec: str | None, cache_path: Path | None) -> Embedder:
    """The embedder behind a hash-keyed cache: each distinct text is embedded once."""
    from .embedders.cache import CachedEmbedder, EmbeddingCache

    inner = open_embedder(spec)
    cache = EmbeddingCache(cache_path) if cache_path is not None else None
    return CachedEmbedder(inner, cache)


__all__ = [
    "cached_embedder",
    "check_answers",
    "check_index",
    "compare_ann",
    "diagnose",
    "diff_index",
    "generate_questions",
    "judge",
    "load_chunks",
    "load_questions",
    "open_embedder",
    "open_store",
    "probe_scale",
    "run_ci",
    "sweep_threshold",
]
