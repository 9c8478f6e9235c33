"""``indexcheck diagnose``: why did the assistant refuse this? One stage label per question."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import numpy as np

from ..core.answers import DEFAULT_ANSWER_REFUSAL_PATTERN
from ..core.diagnose import diagnose
from ..core.probe_scale import scale_converters
from ..core.retrieval import marked_refusals
from ..core.sweep_threshold.filters import question_filters
from ..errors import InputError
from ..filtered_questions import filters_manifest
from ..filters import parse_filter
from ..questions import load_questions
from .command import Command
from .finish import finish
from .options import (
    chunks_option,
    embedder_option,
    output_options,
    progress,
    questions_option,
    retrieval_options,
    seed_option,
    store_option,
)
from .session import open_corpus, session
from .traces import answers_format_option, read_answers_cli


@click.command("diagnose", cls=Command)
@store_option
@embedder_option
@questions_option
@chunks_option
@retrieval_options
@click.option(
    "--threshold",
    type=float,
    default=None,
    help="Refusal threshold the application applies (default: none).",
)
@click.option(
    "--threshold-scale",
    type=click.Choice(["backend", "cosine"]),
    default="backend",
    show_default=True,
    help="Scale --threshold is written on.",
)
@click.option(
    "--min-cosine",
    type=click.FloatRange(-1, 1),
    default=0.999,
    show_default=True,
    help="Re-embedding check of the expected chunks.",
)
@click.option(
    "--answers",
    "answers_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Answers file or trace export (as for `judge`, ids = question ids): continue past "
    "retrieval with CONTEXT_ASSEMBLY_LOSS and GENERATION_REFUSED.",
)
@answers_format_option
@click.option(
    "--judge",
    "judge_spec",
    default=None,
    metavar="SPEC",
    help="Judge the answers too (as `judge --judge`): UNGROUNDED for unsupported claims.",
)
@click.option(
    "--answer-refusal-pattern",
    default=DEFAULT_ANSWER_REFUSAL_PATTERN,
    show_default=True,
    help="Regex on the answer text marking a refusal (a 'refused' column wins).",
)
@click.option(
    "--system",
    "system_spec",
    default=None,
    metavar="py:MODULE:OBJECT",
    help="Run your own RAG application (retrieve/assemble/generate, or answer); see the "
    "README 'Diagnosing your own pipeline'. --store is then the application's index.",
)
@click.option(
    "--runs",
    type=click.IntRange(1, 1000),
    default=3,
    show_default=True,
    help="With --system: runs of every question (refusal rate, Wilson interval, flaky).",
)
@click.option(
    "--intervene",
    default=None,
    metavar="LIST",
    help="With --system: gold-context,fetch=F,exact,threshold=T,top-k=K,no-filter,realigned; "
    "each replayed on the failing questions beside an unchanged control.",
)
@click.option(
    "--budget-calls",
    type=click.IntRange(1),
    default=None,
    help="With --system: stop before the application call that would exceed N (exit 3; "
    "rerun with the same --cache to resume).",
)
@click.option(
    "--filter",
    "filter_text",
    default=None,
    metavar="JSON",
    help="A metadata filter every question is searched with (AND-ed with a question's "
    "own 'filter'); adds FILTERED_OUT and SHORT_RESULTS.",
)
@seed_option
@output_options
@click.pass_context
def diagnose_cmd(
    ctx: click.Context,
    store_spec: str,
    trust_pickle: bool,
    embedder_spec: str,
    cache_path: Path | None,
    questions_path: Path,
    chunks_path: Path | None,
    id_column: str,
    text_column: str,
    k: int,
    fetch: int,
    threshold: float | None,
    threshold_scale: str,
    min_cosine: float,
    refusal_pattern: str,
    answers_path: Path | None,
    answers_format: str | None,
    judge_spec: str | None,
    answer_refusal_pattern: str,
    system_spec: str | None,
    runs: int,
    intervene: str | None,
    budget_calls: int | None,
    filter_text: str | None,
    seed: int,
    json_path: str | None,
    report_dir: Path | None,
) -> None:
    """Trace each question's expected chunk through every stage; label the first that lost it."""
    if system_spec is None:
        from click.core import ParameterSource

        given = [
            f"--{name.replace('_', '-')}"
            for name in ("runs", "intervene", "budget_calls")
            if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE
        ]
        if given:
            raise InputError(f"{given[0]} needs --system py:module:object (your application)")
    if system_spec is not None and filter_text is not None:
        raise InputError(
            "--filter does not apply with --system: your application filters itself "
            "(the no-filter intervention replays it without its filter)"
        )
    common = parse_filter(filter_text) if filter_text is not None else None
    questions = load_questions(questions_path)
    if system_spec is not None:
        from .diagnose_system import run_system

        run_system(
            ctx,
            system_spec,
            questions,
            store_spec=store_spec,
            trust_pickle=trust_pickle,
            embedder_spec=embedder_spec,
            cache_path=cache_path,
            corpus=open_corpus(chunks_path, id_column, text_column),
            runs=runs,
            intervene=intervene,
            budget_calls=budget_calls,
            k=k,
            min_cosine=min_cosine,
            answer_refusal_pattern=answer_refusal_pattern,
            json_path=json_path,
            report_dir=report_dir,
            manifest={"seed": seed, "questions": str(questions_path)},
        )
        return
    answers = judged = judge_stats = answers_source = None
    if judge_spec and answers_path is None:
        raise InputError("--judge needs --answers: the answers to judge")
    corpus = open_corpus(chunks_path, id_column, text_column)
    if answers_path is not None:
        from ..core.answers import DEFAULT_CITATION_PATTERN, compile_pattern

        read = read_answers_cli(answers_path, DEFAULT_CITATION_PATTERN, answers_format, corpus)
        answers, answers_source = read.rows, read.source
        compile_pattern(answer_refusal_pattern, "--answer-refusal-pattern")
    opened = session(ctx, "diagnose")
    store = opened.open_store(store_spec, trust_pickle)
    embedder = opened.open_embedder(embedder_spec, cache_path)
    if judge_spec and answers is not None:  # paid requests: only once every input is good
        from ..core.id_pairing import refuse_absent_expected_ids

        refuse_absent_expected_ids(store, questions, corpus)
        judged, judge_stats = _judge_answers(answers, judge_spec, cache_path)
    with progress() as say:
        say("resolving the store's score scale")
        hib, to_cos, scale = scale_converters(store)
        backend_threshold = threshold
        if threshold is not None and threshold_scale == "cosine":
            from ..core.probe_scale import scale_for

            backend_threshold = float(scale_for(store).from_cosine(np.asarray([threshold]))[0])
        result = diagnose(
            store,
            embedder,
            questions,
            corpus,
            k=k,
            fetch=fetch,
            threshold=backend_threshold,
            higher_is_better=hib,
            to_cosine=to_cos,
            min_cosine=min_cosine,
            refusal_pattern=refusal_pattern,
            refusal_marked=marked_refusals(corpus),
            seed=seed,
            progress=say,
            answers=answers,
            judged=judged,
            answer_refusal_pattern=answer_refusal_pattern,
            filter=common,
        )
    code = finish(
        ctx,
        result,
        json_path=json_path,
        report_dir=report_dir,
        manifest={
            "seed": seed,
            "scale": scale,
            "questions": str(questions_path),
            **filters_manifest(question_filters(questions, common)),
            **({"judging": judge_stats} if judge_stats is not None else {}),
            **({"answers_source": answers_source} if answers_source is not None else {}),
        },
    )
    ctx.exit(code)


def _judge_answers(answers: list[Any], spec: str, cache_path: Path | None) -> tuple[Any, Any]:
    """Judge the answers (cached with the embeddings' --cache file) for UNGROUNDED."""
    from ..core.judge import judge_answers, load_prompt
    from ..judges import JudgementCache, open_judge

    judge = open_judge(spec)
    cache = JudgementCache(cache_path) if cache_path is not None else None
    try:
        result = judge_answers(answers, judge, load_prompt(), cache=cache)
    finally:
        if cache is not None:
            cache.close()
    return result.answers, judge.stats.as_dict()
