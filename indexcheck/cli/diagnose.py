"""``indexcheck diagnose``: why did the assistant refuse this? One stage label per question."""

from __future__ import annotations

from pathlib import Path

import click

from .. import api
from ..errors import InputError
from .command import Command
from .finish import finish
from .options import (
    answer_refusal_option,
    answers_options,
    budget_calls_option,
    choice_option,
    chunks_option,
    embedder_option,
    filter_option,
    min_cosine_option,
    number_option,
    output_options,
    questions_option,
    retrieval_options,
    seed_option,
    spec_option,
    store_option,
)
from .progress import progress
from .session import warn_spec


@click.command("diagnose", cls=Command)
@store_option
@embedder_option
@questions_option
@chunks_option
@retrieval_options
@number_option(
    "--threshold", click.FLOAT, None, "Refusal threshold the application applies (default: none)."
)
@choice_option(
    "--threshold-scale", ["backend", "cosine"], "backend", "Scale --threshold is written on."
)
@min_cosine_option("Re-embedding check of the expected chunks.")
@answers_options(
    "Answers file or trace export (as for `judge`, ids = question ids): continue past "
    "retrieval with CONTEXT_ASSEMBLY_LOSS and GENERATION_REFUSED.",
    required=False,
)
@spec_option(
    "--judge",
    "judge_spec",
    "Judge the answers too (as `judge --judge`): UNGROUNDED for unsupported claims.",
)
@answer_refusal_option("--answer-refusal-pattern")
@click.option(
    "--system",
    "system_spec",
    default=None,
    metavar="py:MODULE:OBJECT",
    help="Run your own RAG application (retrieve/assemble/generate, or answer); see the "
    "README 'Diagnosing your own pipeline'. --store is then the application's index.",
)
@number_option(
    "--runs",
    click.IntRange(1, 1000),
    3,
    "With --system: runs of every question (refusal rate, Wilson interval, flaky).",
)
@click.option(
    "--intervene",
    default=None,
    metavar="LIST",
    help="With --system: gold-context,fetch=F,exact,threshold=T,top-k=K,no-filter,realigned; "
    "each replayed on the failing questions beside an unchanged control.",
)
@budget_calls_option(
    "With --system: stop before the application call that would exceed N (exit 3; "
    "rerun with the same --cache to resume)."
)
@filter_option(
    "A metadata filter every question is searched with (AND-ed with a question's "
    "own 'filter'); adds FILTERED_OUT and SHORT_RESULTS."
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
    warn_spec(store_spec)
    with progress() as say:
        result = api.diagnose(
            store_spec, questions_path, chunks_path, embedder_spec, k=k, fetch=fetch,
            threshold=threshold, threshold_scale=threshold_scale, min_cosine=min_cosine,
            refusal_pattern=refusal_pattern, seed=seed, answers=answers_path, judge=judge_spec,
            answer_refusal_pattern=answer_refusal_pattern, filter=filter_text, system=system_spec,
            runs=runs, intervene=intervene, budget_calls=budget_calls, cache=cache_path,
            progress=say, trust_pickle=trust_pickle, answers_format=answers_format,
            id_column=id_column, text_column=text_column, warn=_warn,
        )  # fmt: skip
    ctx.exit(finish(ctx, result))


def _warn(line: str) -> None:
    """A trace export's warning, on stderr as it is read (before the run, as before)."""
    click.echo(line, err=True)
