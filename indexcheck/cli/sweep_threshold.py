"""``indexcheck sweep-threshold``: calibrate a refusal threshold, or prove none exists."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .. import api
from ..errors import InputError
from .command import Command
from .finish import finish
from .option_types import SHARE
from .options import (
    answers_format_option,
    choice_option,
    chunks_option,
    embedder_option,
    filter_option,
    input_file,
    number_option,
    optional_store_option,
    output_options,
    questions_option,
    retrieval_options,
    stack,
)
from .progress import progress
from .session import open_corpus, warn_spec

#: --store (retrieve every question) or --observed (scores from production traces)
_store_or_observed = stack(
    optional_store_option,
    input_file(
        "--observed",
        "observed_path",
        "A trace export (or answers file) whose retrieved documents carry the scores "
        "production saw: sweep those, query no store. --store, when given too, only names "
        "the score scale (probed).",
    ),
    answers_format_option,
    click.option(
        "--scores-lower-is-better",
        is_flag=True,
        help="With --observed and no --store: the traced scores are distances (smaller "
        "means more similar).",
    ),
)


@click.command("sweep-threshold", cls=Command)
@_store_or_observed
@embedder_option
@questions_option
@retrieval_options
@number_option(
    "--recall",
    SHARE,
    0.95,
    "In-scope recall the recommended threshold must keep.",
    dest="recall_target",
)
@choice_option("--rule", ["recall", "youden"], "recall", "How to pick the recommended threshold.")
@filter_option(
    "A metadata filter every question is searched with (AND-ed with a question's "
    "own 'filter'); see README 'Filtered search'."
)
@chunks_option
@output_options
@click.pass_context
def sweep_threshold_cmd(
    ctx: click.Context,
    store_spec: str | None,
    trust_pickle: bool,
    observed_path: Path | None,
    answers_format: str | None,
    scores_lower_is_better: bool,
    embedder_spec: str,
    cache_path: Path | None,
    questions_path: Path,
    k: int,
    fetch: int,
    recall_target: float,
    rule: str,
    refusal_pattern: str,
    filter_text: str | None,
    chunks_path: Path | None,
    id_column: str,
    text_column: str,
    json_path: str | None,
    report_dir: Path | None,
) -> None:
    """Sweep every observed score as a refusal threshold; recommend one or prove none works.

    Chunks (optional) may mark refusal chunks with a truthy 'refusal' column. With
    --observed, the candidates are the documents each traced answer retrieved, with the
    scores production saw; the store is not queried.
    """
    if observed_path is not None:
        _observed(ctx, locals())
        return
    if store_spec is None:
        raise InputError(
            "sweep-threshold needs --store (retrieve every question) or --observed TRACES "
            "(the scores production traces recorded)"
        )
    corpus = open_corpus(chunks_path, id_column, text_column)
    warn_spec(store_spec)
    with progress() as say:
        result = api.sweep_threshold(
            store_spec, questions_path, embedder_spec, chunks=corpus, k=k, fetch=fetch,
            recall_target=recall_target, rule=rule, refusal_pattern=refusal_pattern,
            filter=filter_text, cache=cache_path, progress=say, trust_pickle=trust_pickle,
        )  # fmt: skip
    ctx.exit(finish(ctx, result, report=api.sweep_plots, report_key=None))


def _observed(ctx: click.Context, a: dict[str, Any]) -> None:
    """sweep-threshold --observed: the sweep over the scores production traces recorded."""
    corpus = open_corpus(a["chunks_path"], a["id_column"], a["text_column"])
    traces = api.observed_traces(
        a["observed_path"], a["answers_format"], chunks=corpus, filter=a["filter_text"]
    )
    for warning in traces.warnings:  # escaped below the face
        click.echo(f"warning: {warning}", err=True)
    warn_spec(a["store_spec"])  # the store, when given, only names the scale
    result = api.sweep_threshold(
        a["store_spec"], a["questions_path"], chunks=corpus, k=a["k"],
        recall_target=a["recall_target"], rule=a["rule"], refusal_pattern=a["refusal_pattern"],
        observed=traces,
        higher_is_better=None if a["store_spec"] is not None else not a["scores_lower_is_better"],
        trust_pickle=a["trust_pickle"],
    )  # fmt: skip
    for warning in result.warnings:  # escaped below the face
        click.echo(f"warning: {warning}", err=True)
    ctx.exit(finish(ctx, result, report=api.sweep_plots, report_key=None))
