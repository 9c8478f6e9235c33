"""``indexcheck judge``: grade answers' claims against their context (its evidence sheet's
own commands are in :mod:`.sheet`); a thin wrapper over :func:`indexcheck.api.judge`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .. import api
from .command import Command
from .finish import finish
from .options import (
    answer_refusal_option,
    answers_options,
    cache_option,
    choice_option,
    chunks_option,
    citation_pattern_option,
    folder_option,
    input_file,
    output_options,
    retries_option,
    seed_option,
    spec_option,
)
from .progress import progress
from .session import open_corpus


@click.command("judge", cls=Command, writes=("sheet_dir",))
@answers_options(
    "Answers (JSONL, CSV or Parquet): id, question, answer, contexts [{id, text}]; "
    "or a trace export (Phoenix/OpenInference, OTLP, Langfuse, LangSmith)."
)
@chunks_option
@spec_option(
    "--judge",
    "judge_spec",
    "mistral:MODEL, openai:BASE_URL?model=NAME or py:module:function "
    "[env INDEXCHECK_JUDGE]. Pick a model other than the one that answered.",
    envvar="INDEXCHECK_JUDGE",
    required=True,
)
@input_file(
    "--prompt",
    "prompt_path",
    "Judge prompt file (default: the shipped judge_v1.md).",
    dir_okay=False,
)
@retries_option
@click.option(
    "--allow-unjudged",
    is_flag=True,
    help="Do not fail the run for answers whose reply never parsed.",
)
@answer_refusal_option()
@citation_pattern_option("Regex of citation markers in the answer; group 1 holds the ids.")
@cache_option("judgements (and embeddings)")
@input_file(
    "--labels",
    "labels_path",
    "Human verdicts (JSONL) to measure the judge's agreement with.",
    dir_okay=False,
)
@folder_option("--sheet", "sheet_dir", "Evidence sheet folder: append this run's claim rows.")
@click.option(
    "--sheet-hashes-only",
    is_flag=True,
    help="Store question and answer hashes in the sheet instead of their texts.",
)
@choice_option("--sheet-format", ["jsonl", "parquet"], "jsonl")
@spec_option(
    "--store",
    "store_spec",
    "The store the contexts came from: its fingerprint goes into the sheet.",
)
@click.option("--reviewer", default=None, help="Who ran this judgement (goes into the sheet).")
@click.option("--note", default=None, help="A note for the sheet rows.")
@seed_option
@output_options
@click.pass_context
def judge_cmd(
    ctx: click.Context,
    answers_path: Path,
    answers_format: str | None,
    chunks_path: Path | None,
    id_column: str,
    text_column: str,
    judge_spec: str,
    prompt_path: Path | None,
    retries: int,
    allow_unjudged: bool,
    refusal_pattern: str,
    citation_pattern: str,
    cache_path: Path | None,
    labels_path: Path | None,
    sheet_dir: Path | None,
    sheet_hashes_only: bool,
    sheet_format: str,
    store_spec: str | None,
    reviewer: str | None,
    note: str | None,
    seed: int,
    json_path: str | None,
    report_dir: Path | None,
) -> None:
    """Grade each answer's claims against the context it was given, and check the evidence."""
    # every input is read and checked (below the face) before the first request that costs
    corpus = open_corpus(chunks_path, id_column, text_column)  # pairs trace documents
    with progress() as say:
        result = api.judge(
            answers_path, judge_spec, prompt=prompt_path, cache=cache_path, retries=retries,
            refusal_pattern=refusal_pattern, allow_unjudged=allow_unjudged, progress=say,
            store=store_spec or None, chunks=corpus, answers_format=answers_format,
            citation_pattern=citation_pattern, answer_checks=True, labels=labels_path, seed=seed,
            sheet=sheet_dir, sheet_hashes_only=sheet_hashes_only, sheet_format=sheet_format,
            reviewer=reviewer, note=note, warn=warn,
        )  # fmt: skip
    ctx.exit(finish(ctx, result, render=render, report=api.judge_report))


def render(result: Any, console: Any) -> None:
    """The judge's terminal summary (:func:`indexcheck.api.judge_summary`)."""
    api.judge_summary(result, console)


def warn(message: str) -> None:
    """A warning about the inputs (already escaped below the face) on stderr."""
    click.echo(f"warning: {message}", err=True)


__all__ = ["judge_cmd", "render"]
