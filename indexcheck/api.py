"""indexcheck from Python: each command as one function, and what front ends share.

``store`` is a spec string (``faiss:./index``) or an opened store; ``embedder`` a spec
string (``minilm``), an opened embedder or None for the default; ``chunks``/``questions``
a path or what :func:`load_chunks`/:func:`load_questions` return; ``cache`` a SQLite file
for embeddings (and judgements). Each function builds its command's settings object once
from its keywords and hands it to the command's run entry, which opens what the specs name
through the stores', embedders' and judges' own openers, runs, stamps the manifest once and
closes what it opened; what it is given it leaves open. The CLI calls these functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .commands.compare_ann.queries import DEFAULT_NOISE as DEFAULT_NOISE  # for the CLI
from .commands.judge.claims import ClaimVerdict
from .commands.judge.sheet.face import SheetOutcome as SheetOutcome
from .commands.judge.sheet.face import diff_sheet as diff_sheet
from .commands.judge.sheet.face import export_sheet as export_sheet
from .commands.judge.sheet.face import revise_sheet as revise_sheet
from .commands.judge.sheet.face import verify_sheet as verify_sheet
from .commands.kit.retrieval import DEFAULT_REFUSAL_PATTERN
from .commands.probe_scale.convert import convert_threshold as convert_threshold
from .commands.probe_scale.probe import MAX_PROBES as MAX_PROBES
from .commands.questions.terminal import questions_summary as questions_summary
from .commands.sweep_threshold.traces import observed_traces as observed_traces
from .embedders.base import Embedder
from .inputs.answers import DEFAULT_ANSWER_REFUSAL_PATTERN
from .inputs.answers import read_answers as read_answers  # the face's answers reader
from .inputs.chunk_stream import ChunkSource
from .inputs.corpus import Corpus
from .inputs.questions import Question
from .output.schemas import load as json_schema  # each --json result kind's JSON Schema
from .output.schemas import schema_for as schema_for
from .stores.base import VectorStore

if TYPE_CHECKING:
    from .commands.check_index import CheckIndexResult
    from .commands.ci import CiConfig, CiResult
    from .commands.compare_ann import AnnResult, QuerySet
    from .commands.diagnose import DiagnoseResult
    from .commands.diagnose.system.result import SystemDiagnoseResult
    from .commands.diagnose.trace_refusals import RefusalsResult
    from .commands.diff_index import DiffResult
    from .commands.embed import EmbedResult
    from .commands.judge import JudgeResult
    from .commands.judge.answer_checks import AnswerChecksResult
    from .commands.probe_scale import ScaleResult
    from .commands.questions import QuestionSetResult
    from .commands.repair import RepairResult
    from .commands.sweep_threshold import SweepResult
    from .embedders.minilm.manage import ModelInstall
    from .inputs.answers import AnswerRow
    from .inputs.embed_text import EmbedTemplate
    from .judges.base import Judge

StoreLike = str | VectorStore
EmbedderLike = str | Embedder | None
Say = Callable[[str], None]
Converter = Callable[[np.ndarray], np.ndarray]
PathLike = str | Path
#: the claim verdicts a judge gives and a reviewer may set (``sheet revise --verdict``)
VERDICTS = tuple(v.value for v in ClaimVerdict)


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
    from .commands.check_index import CheckIndexSettings
    from .commands.check_index.run import run_check_index

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
    """Which formula the store's scores follow, from ``probes`` (at most :data:`MAX_PROBES`)
    queries of ``k`` results under ``filter`` (a node, dict or JSON text); ``cache`` keeps
    the result per index fingerprint for later commands (unfiltered only). ``reuse``
    (unfiltered) returns the result kept for this index instead, probing (and keeping)
    only when there is none (``convert-threshold --store``)."""
    from .commands.probe_scale.run import ProbeScaleSettings, run_probe_scale

    settings = ProbeScaleSettings(store, probes, k, seed, filter, cache, reuse, trust_pickle)
    return run_probe_scale(settings, progress)


def embed(
    chunks: PathLike | Corpus, embedder: EmbedderLike = None, *, out: PathLike | None = None,
    faiss: PathLike | None = None, id_column: str = "id", text_column: str = "text",
    cache: PathLike | None = None, progress: Say | None = None,
) -> EmbedResult:  # fmt: skip
    """The reference re-embedding (``indexcheck embed``): each distinct chunk text embedded
    once into a NEW vectors file ``out`` (.parquet or .jsonl) and/or a NEW FAISS folder
    ``faiss``; one that exists is refused (exit 2) before the embedder opens."""
    from .commands.embed import EmbedSettings
    from .commands.embed.run import run_embed

    settings = EmbedSettings(
        chunks, embedder, out=out, faiss=faiss, id_column=id_column, text_column=text_column,
        cache=cache,
    )  # fmt: skip
    return run_embed(settings, progress)


def repair(
    store: StoreLike, *, out: PathLike | None, chunks: PathLike | Corpus | None = None,
    embedder: EmbedderLike = None, verify: int | str = 32, seed: int = 0,
    min_cosine: float = 0.999, dry_run: bool = False, check: bool = True,
    cache: PathLike | None = None, trust_pickle: bool = False, id_column: str = "id",
    text_column: str = "text", progress: Say | None = None, yes: bool = False,
    engine: str | Any = "local", ray_address: str | None = None,
) -> RepairResult:  # fmt: skip
    """A corrected copy of ``store`` in the NEW folder ``out`` (``vectors.parquet``, and a
    FAISS index for a FAISS source) or the new store a target spec names
    (``chroma:DIR?collection=C``, ``pgvector:DSN?table=NEW``; a hosted one only with
    ``yes``): each chunk's right vector reused from wherever it is
    stored, only the ones that exist nowhere embedded; ``verify`` chunks (or ``"all"``)
    checked against a fresh embedding with ``default_rng(seed)``; then check-index --all on
    the copy (``result.ok``). The source is never written; a target inside it is exit 2."""
    from .commands.repair import RepairSettings
    from .commands.repair.run import run_repair
    from .stores.targets import parse_target

    source = store if isinstance(store, str) else getattr(store, "spec", "")
    target = None if out is None else parse_target(out, source if isinstance(source, str) else "")
    settings = RepairSettings(
        store=store, out=target, chunks=chunks, embedder=embedder, verify=verify, seed=seed,
        min_cosine=min_cosine, dry_run=dry_run, check=check, cache=cache,
        trust_pickle=trust_pickle, id_column=id_column, text_column=text_column, yes=yes,
        engine=engine, ray_address=ray_address,
    )  # fmt: skip
    return run_repair(settings, progress)


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
    scores production recorded: nothing is retrieved, ``store`` (or None) names the scale.
    ``filter``: a node, dict or JSON text, AND-ed with each question's own."""
    from .commands.sweep_threshold.run import SweepThresholdSettings, run_sweep_threshold

    settings = SweepThresholdSettings(
        store=store, questions=questions, embedder=embedder, chunks=chunks, k=k, fetch=fetch,
        recall_target=recall_target, rule=rule, refusal_pattern=refusal_pattern,
        refusal_marked=refusal_marked, filter=filter, higher_is_better=higher_is_better,
        to_cosine=to_cosine, scale=scale, observed=observed, answers_format=answers_format,
        cache=cache, trust_pickle=trust_pickle,
    )  # fmt: skip
    return run_sweep_threshold(settings, progress)


def compare_ann(
    store: StoreLike, queries: int | np.ndarray | QuerySet = 500, *, k: int = 4,
    fetch: Sequence[int] | None = (4, 10, 20, 50), target: float = 0.01, seed: int = 0,
    noise: float | None = None, questions: PathLike | None = None,
    query_vectors: PathLike | None = None, truth_from: str | None = None,
    truth_store: StoreLike | None = None, chunks: PathLike | Corpus | None = None,
    embedder: EmbedderLike = None, cache_dir: Path | bool | None = None, filter: Any = None,
    filters: Sequence[Any] | None = None, sweep: tuple[str, Sequence[int]] | str | None = None,
    truth: Any = None, true_vectors: Any = None, engine: str | Any = None,
    ray_address: str | None = None, cache: PathLike | None = None,
    progress: Say | None = None, trust_pickle: bool = False, id_column: str = "id",
    text_column: str = "text",
) -> AnnResult:  # fmt: skip
    """Approximate vs exact search at each fetch depth (``indexcheck compare-ann``).
    ``queries``: a number of stored vectors to sample (moved by ``noise``), float32 (q, d)
    vectors or a QuerySet, unless a ``questions`` file (embedded with ``embedder``) or a
    ``query_vectors`` file is given. ``filter`` (JSON text or parsed) is AND-ed with each
    question's own; ``filters`` gives one per query. ``sweep=(key, values)`` or ``"key=v1,v2"``
    also measures each value of the index's search parameter (``store`` a spec). For an index
    that compresses, ``truth_from="chunks"`` or ``truth_store`` gives the vectors as added.
    Each option is documented on :class:`~indexcheck.commands.compare_ann.CompareAnnSettings`."""
    from .commands.compare_ann import CompareAnnSettings
    from .commands.compare_ann.run import run_compare_ann

    settings = CompareAnnSettings(
        store=store, queries=queries, k=k, fetch=fetch, target=target, seed=seed, noise=noise,
        questions=questions, query_vectors=query_vectors, truth_from=truth_from,
        truth_store=truth_store, chunks=chunks, embedder=embedder, cache_dir=cache_dir,
        filter=filter, filters=filters, sweep=sweep, truth=truth, true_vectors=true_vectors,
        engine=engine, ray_address=ray_address, cache=cache, trust_pickle=trust_pickle,
        id_column=id_column, text_column=text_column,
    )  # fmt: skip
    return run_compare_ann(settings, progress)


def diagnose(
    store: StoreLike, questions: PathLike | Sequence[Question],
    chunks: PathLike | Corpus | None = None, embedder: EmbedderLike = None, *, k: int = 4,
    fetch: int = 20, threshold: float | None = None, threshold_scale: str = "backend",
    higher_is_better: bool | None = None, to_cosine: Converter | None = None,
    min_cosine: float = 0.999, refusal_pattern: str | None = None,
    refusal_marked: Sequence[str] | None = None, seed: int = 0,
    answers: PathLike | Sequence[AnswerRow] | None = None, judged: Sequence[Any] | None = None,
    judge: str | Judge | None = None, answer_refusal_pattern: str = DEFAULT_ANSWER_REFUSAL_PATTERN,
    filter: Any = None, system: str | Any | None = None, runs: int = 3,
    intervene: str | Sequence[str] | None = None, budget_calls: int | None = None,
    cache: PathLike | None = None, progress: Say | None = None, trust_pickle: bool = False,
    answers_format: str | None = None, id_column: str = "id", text_column: str = "text",
    warn: Say | None = None,
) -> DiagnoseResult | SystemDiagnoseResult:  # fmt: skip
    """One stage label per question: where the expected chunk was lost. ``threshold`` on the
    store's scale, or a cosine with ``threshold_scale="cosine"``. ``answers`` (rows, or a
    file read as ``answers_format``), graded by ``judge``, continue past retrieval. With
    ``system`` (``py:module:object`` or the app): ``runs`` runs, ``intervene`` replays."""
    given = {n: v for n, v in locals().items() if n not in ("progress", "warn")}
    from .commands.diagnose.run import DiagnoseSettings, run_diagnose

    return run_diagnose(DiagnoseSettings(**given), progress, warn)  # fields named as the keywords


def trace_refusals(
    answers: PathLike, refusal_pattern: str = DEFAULT_ANSWER_REFUSAL_PATTERN, *,
    answers_format: str | None = None, chunks: PathLike | Corpus | None = None,
    id_column: str = "id", text_column: str = "text",
    questions: PathLike | Sequence[Question] | None = None, out: PathLike | None = None,
) -> RefusalsResult:  # fmt: skip
    """The answers of a trace export (or answers file) that refused; with ``out``, written as
    a question set for ``diagnose``, labelled from ``questions`` or what the trace retrieved."""
    from .commands.diagnose.trace_refusals import TraceRefusalsSettings, trace_refusals

    given = (answers, refusal_pattern, answers_format, chunks, id_column, text_column)
    return trace_refusals(TraceRefusalsSettings(*given, questions, out))


def answers_warnings(source: Mapping[str, Any] | None) -> list[str]:
    """``warning: ...`` lines, escaped, for what a trace export's ``source`` warned of."""
    from .commands.diagnose.trace_refusals import warning_lines

    return warning_lines(source)


def diff_index(
    old: StoreLike, new: StoreLike, chunks_old: PathLike | Corpus | None = None,
    chunks_new: PathLike | Corpus | None = None, embedder: EmbedderLike = None, *,
    sample_new: int | None = 100, seed: int = 0, min_cosine: float = 0.999,
    workdir: Path | None = None, memory_limit: str = "256MB", engine: str | Any = None,
    ray_address: str | None = None, cache: PathLike | None = None, progress: Say | None = None,
    trust_pickle: bool = False, id_column: str = "id", text_column: str = "text",
) -> DiffResult:  # fmt: skip
    """Is ``new`` the ``old`` index plus the changes? (``indexcheck diff-index``) Old and new
    are paired by text hash (ids may differ); every text in both must keep its vector
    (cosine of unit vectors >= ``min_cosine``). ``chunks_old``/``chunks_new`` give the texts
    of an index that stores none (a file is read with ``id_column``/``text_column``).
    ``embedder`` None (no default model here) re-embeds nothing; a spec or an opened
    embedder re-embeds ``sample_new`` added/changed texts (None: all), by ``engine``
    ("local", "ray" with ``ray_address``, or an engine). ``result.ok`` is the verdict."""
    from .commands.diff_index import DiffIndexSettings
    from .commands.diff_index.run import run_diff_index

    settings = DiffIndexSettings(
        old=old, new=new, chunks_old=chunks_old, chunks_new=chunks_new, embedder=embedder,
        sample_new=sample_new, seed=seed, min_cosine=min_cosine, workdir=workdir,
        memory_limit=memory_limit, engine=engine, ray_address=ray_address, cache=cache,
        trust_pickle=trust_pickle, id_column=id_column, text_column=text_column,
    )  # fmt: skip
    return run_diff_index(settings, progress)


def run_ci(
    config: CiConfig | PathLike, baseline: dict[str, Any] | PathLike | None = None,
    progress: Say | None = None, *, baseline_any_store: bool = False,
) -> CiResult:  # fmt: skip
    """``indexcheck ci`` from Python: opens the configured store (and the old index of
    ``[ci.diff-index]``) and embedder, refuses a ``baseline`` (a parsed ci JSON or its path)
    measured on another store or embedder (unless ``baseline_any_store``), runs the checks,
    closes them."""
    from .commands.ci import CiSettings
    from .commands.ci.run import run_configured

    settings = CiSettings(config=config, baseline=baseline, baseline_any_store=baseline_any_store)
    return run_configured(settings, progress)


def read_ci_config(path: PathLike) -> CiConfig:
    """The validated ``[ci]`` table of a TOML file (InputError naming a bad key)."""
    from .commands.ci.run import read_config

    return read_config(path)


def read_baseline(path: PathLike) -> dict[str, Any]:
    """A saved ci (or diagnose) JSON result to compare with (DataFileError when unusable)."""
    from .commands.ci import load_baseline

    return load_baseline(path)


def write_ci_junit(result: CiResult, path: PathLike) -> None:
    """ci's ``--junit`` file: one testcase per gate, written atomically (OutputError)."""
    from .commands.ci.junit import write_junit

    write_junit(result, path)


def write_ci_report(result: CiResult, folder: PathLike) -> list[Path]:
    """ci's ``--report`` folder: report.html (self-contained), report.md and plots."""
    from .output.render.html import write_report

    return write_report([result], Path(folder), title="indexcheck ci")


def model_status() -> list[dict[str, Any]]:
    """Each pinned file of the default model (minilm): ``package``, ``file``, ``ok``, and
    its ``path`` or the ``error`` saying why it does not verify."""
    from .embedders.minilm.model import status

    return status()


def model_runtime(recalibrate: bool = False) -> dict[str, Any]:
    """The runtime the default model runs on here: ``runtime``, ``threads``, ``why`` and the
    measured ``rates`` (texts/s); ``recalibrate`` times both runtimes again."""
    from .embedders.minilm.manage import runtime_status

    return runtime_status(recalibrate)


def install_model(progress: Say | None = None) -> ModelInstall:
    """pip-install the default model's pinned files (``--require-hashes``) and verify them;
    the outcome says whether they were ``already`` there or the ``error``."""
    from .embedders.minilm.manage import install

    return install(progress or (lambda _m: None))


def judge(
    answers: PathLike | Sequence[AnswerRow], judge: str | Judge, *, prompt: PathLike | None = None,
    cache: PathLike | None = None, retries: int = 2,
    refusal_pattern: str | None = DEFAULT_ANSWER_REFUSAL_PATTERN, allow_unjudged: bool = False,
    progress: Say | None = None, store: StoreLike | None = None,
    chunks: PathLike | Corpus | None = None, answers_format: str | None = None,
    citation_pattern: str | None = None, answer_checks: bool = False,
    labels: PathLike | None = None, seed: int = 0, sheet: PathLike | None = None,
    sheet_hashes_only: bool = False, sheet_format: str = "jsonl", reviewer: str | None = None,
    note: str | None = None, warn: Say | None = None,
) -> JudgeResult:  # fmt: skip
    """Grade each answer's claims against its context (``indexcheck judge``): ``answers`` a
    JSONL/CSV/Parquet path, a trace export (``answers_format``; None: sniffed; ``chunks``, a
    chunks file or corpus, pairs its documents without ids) or rows; ``judge`` a spec
    (``mistral:MODEL``, ``py:module:fn``) or a judge; ``prompt`` a prompt file (default:
    shipped); ``cache`` a SQLite file of verdicts; ``refusal_pattern`` marks refusals (None:
    none). ``result.ok``: the verdict (never NaN); ``store``, where the contexts came from,
    is in the manifest with its fingerprint. ``answer_checks`` adds the no-model checks,
    ``labels`` (human verdicts) the calibration (resampled with ``seed``), ``sheet`` appends
    the run to an evidence sheet (signed with INDEXCHECK_SHEET_KEY); ``warn`` gets warnings."""
    given = dict(locals())  # the keywords are the settings' fields
    from .commands.judge import JudgeSettings
    from .commands.judge.run import run_judge

    settings = JudgeSettings(**{k: v for k, v in given.items() if k not in ("progress", "warn")})
    return run_judge(settings, progress, warn)


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
    given = dict(locals())  # the keywords are the settings' fields
    from .commands.questions import GenerateQuestionsSettings
    from .commands.questions.run import run_generate_questions

    settings = GenerateQuestionsSettings(**{k: v for k, v in given.items() if k != "progress"})
    return run_generate_questions(settings, progress)


def check_answers(
    answers: PathLike | Sequence[AnswerRow], chunks: PathLike | Corpus, *,
    citation_pattern: str | None = None, id_column: str = "id", text_column: str = "text",
    answers_format: str | None = None, warn: Say | None = None,
) -> AnswerChecksResult:  # fmt: skip
    """Flag what answers state that neither their context nor the knowledge base holds
    (``check-answers``), with no model: ``answers`` a JSONL/CSV/Parquet path or a trace export
    (read as ``judge`` reads it: ``citation_pattern`` marks the citations to drop,
    ``answers_format`` a trace format, None: sniffed; ``warn`` gets its warnings) or loaded
    rows; ``chunks`` a chunks file (``id_column``/``text_column``) or a corpus.
    ``result.ok``: nothing flagged."""
    from .commands.judge import CheckAnswersSettings
    from .commands.judge.run import run_check_answers

    settings = CheckAnswersSettings(
        answers, chunks, citation_pattern=citation_pattern, id_column=id_column,
        text_column=text_column, answers_format=answers_format,
    )  # fmt: skip
    return run_check_answers(settings, warn)


# --- for front ends (this CLI, a notebook, a service) --------------------------------------
# Presenting a result, guarding a run's outputs and wording a failure: the pieces the command
# line is built from, so that what it prints is what a Python caller can get.
from .commands.kit.retrieval import DEFAULT_REFUSAL_PATTERN as DEFAULT_REFUSAL_PATTERN  # noqa: E402
from .embedders import check_embedder_spec as check_embedder_spec  # noqa: E402
from .embedders.cache import CachedEmbedder as CachedEmbedder  # noqa: E402
from .filters import parse_filter as parse_filter  # noqa: E402
from .inputs.answers import DEFAULT_CITATION_PATTERN as DEFAULT_CITATION_PATTERN  # noqa: E402
from .inputs.config_file import did_you_mean as did_you_mean  # noqa: E402
from .inputs.config_file import find_config as find_config  # noqa: E402
from .inputs.config_file import read_config as read_config  # noqa: E402
from .inputs.files import read_toml as read_toml  # noqa: E402
from .inputs.files import require_file as require_file  # noqa: E402
from .inputs.formats.traces.sniff import FORMATS as TRACE_FORMATS  # noqa: E402
from .inputs.limits import set_record_limit as set_record_limit  # noqa: E402
from .inputs.rowfiles import check_output_suffix as check_rows_suffix  # noqa: E402
from .output.guard import OutputPlan as OutputPlan  # noqa: E402
from .output.present import json_to_stdout as json_to_stdout  # noqa: E402
from .output.present import write_json as write_json  # noqa: E402
from .output.render import blocks as _blocks  # noqa: E402, F401 (a result's notebook summary)
from .output.render.judge import judge_report as judge_report  # noqa: E402
from .output.render.judge_terminal import render as judge_summary  # noqa: E402
from .plugins import hookimpl as hookimpl  # noqa: E402
from .plugins import manager as plugin_manager  # noqa: E402
from .remote.waiting import set_override as set_waiting  # noqa: E402
from .safety.edge import debug_traceback as debug_traceback  # noqa: E402
from .safety.edge import failure as failure  # noqa: E402
from .safety.edge import guarded as guarded  # noqa: E402
from .safety.edge import one_line as one_line  # noqa: E402
from .safety.secrets import spec_password_warning as spec_password_warning  # noqa: E402


def sections(result: Any) -> list[Any]:
    """A result's report sections, then its terminal summary (``terminal=True``), from the
    renderer registered for its type; a result dict (a ``--json`` file) gives its report's."""
    from .commands import reports  # noqa: F401  (every command's renderer registered)
    from .output.registry import sections as of

    return of(result)


def write_report(result: Any, folder: PathLike, name: str | None = None) -> list[Path]:
    """Write the result's report pages ``NAME.html`` and ``NAME.md`` (default: the
    command's name) and its plots into ``folder``; returns the files written."""
    from .commands import reports  # noqa: F401
    from .output.present import write_report as write

    return write(result, folder, name or str(result.manifest.get("command")))


def sweep_plots(result: Any, folder: PathLike) -> list[Path]:
    """sweep-threshold's ``--report``: its pages ``sweep-threshold.html`` and ``.md`` and
    its plots."""
    from .commands import reports  # noqa: F401
    from .output.render.html import sweep_report

    return sweep_report(result, folder)


def render_summary(result: Any, console: Any) -> None:
    """Print the result's terminal summary, as the CLI does, on a rich ``console``."""
    from .commands import reports  # noqa: F401
    from .output.present import render_summary as render

    render(result, console)


__all__ = [
    # the commands
    "check_answers",
    "check_index",
    "compare_ann",
    "convert_threshold",
    "diagnose",
    "diff_index",
    "embed",
    "generate_questions",
    "judge",
    "probe_scale",
    "run_ci",
    "sweep_threshold",
    "trace_refusals",
    # the commands' files and helpers
    "answers_warnings",
    "diff_sheet",
    "export_sheet",
    "install_model",
    "model_runtime",
    "model_status",
    "observed_traces",
    "read_answers",
    "read_baseline",
    "read_ci_config",
    "revise_sheet",
    "verify_sheet",
    "SheetOutcome",
    # presenting results
    "json_schema",
    "json_to_stdout",
    "judge_report",
    "judge_summary",
    "questions_summary",
    "render_summary",
    "schema_for",
    "sections",
    "sweep_plots",
    "write_ci_junit",
    "write_ci_report",
    "write_json",
    "write_report",
    # for front ends
    "DEFAULT_ANSWER_REFUSAL_PATTERN",
    "DEFAULT_CITATION_PATTERN",
    "DEFAULT_NOISE",
    "DEFAULT_REFUSAL_PATTERN",
    "MAX_PROBES",
    "TRACE_FORMATS",
    "VERDICTS",
    "CachedEmbedder",
    "OutputPlan",
    "check_embedder_spec",
    "check_rows_suffix",
    "debug_traceback",
    "failure",
    "guarded",
    "hookimpl",
    "one_line",
    "parse_filter",
    "plugin_manager",
    "did_you_mean",
    "find_config",
    "read_config",
    "read_toml",
    "require_file",
    "set_record_limit",
    "set_waiting",
    "spec_password_warning",
]
