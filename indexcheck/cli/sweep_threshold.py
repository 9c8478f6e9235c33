"""``indexcheck sweep-threshold``: calibrate a refusal threshold, or prove none exists."""

from __future__ import annotations

from pathlib import Path

import click

from ..core.retrieval import marked_refusals, scale_converters
from ..core.sweep_filters import question_filters
from ..core.sweep_threshold import SweepResult, sweep_threshold
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
    store_option,
)
from .session import open_corpus, session


@click.command("sweep-threshold", cls=Command)
@store_option
@embedder_option
@questions_option
@retrieval_options
@click.option(
    "--recall",
    "recall_target",
    type=click.FloatRange(0, 1),
    default=0.95,
    show_default=True,
    help="In-scope recall the recommended threshold must keep.",
)
@click.option(
    "--rule",
    type=click.Choice(["recall", "youden"]),
    default="recall",
    show_default=True,
    help="How to pick the recommended threshold.",
)
@click.option(
    "--filter",
    "filter_text",
    default=None,
    metavar="JSON",
    help="A metadata filter every question is searched with (AND-ed with a question's "
    "own 'filter'); see README 'Filtered search'.",
)
@chunks_option
@output_options
@click.pass_context
def sweep_threshold_cmd(
    ctx: click.Context,
    store_spec: str,
    trust_pickle: bool,
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

    Chunks (optional) may mark refusal chunks with a truthy 'refusal' column.
    """
    common = parse_filter(filter_text) if filter_text is not None else None
    questions = load_questions(questions_path)
    corpus = open_corpus(chunks_path, id_column, text_column)
    marked = marked_refusals(corpus)
    opened = session(ctx, "sweep-threshold")
    store = opened.open_store(store_spec, trust_pickle)
    embedder = opened.open_embedder(embedder_spec, cache_path)
    with progress() as say:
        say("resolving the store's score scale")
        hib, to_cos, scale = scale_converters(store)
        say(f"retrieving {len(questions)} questions")
        result = sweep_threshold(
            store,
            embedder,
            questions,
            k=k,
            fetch=fetch,
            higher_is_better=hib,
            to_cosine=to_cos,
            scale=scale,
            recall_target=recall_target,
            rule=rule,
            refusal_pattern=refusal_pattern,
            refusal_marked=marked,
            filter=common,
        )
    code = finish(
        ctx,
        result,
        json_path=json_path,
        report_dir=report_dir,
        report=_plots,
        report_key=None,
        manifest={
            "questions": str(questions_path),
            **filters_manifest(question_filters(questions, common)),
        },
    )
    ctx.exit(code)


def _plots(result: SweepResult, folder: Path) -> list[Path]:
    """The score plots; their paths go into the result's ``plots`` key."""
    from ..report.plots import threshold_plots

    files = threshold_plots(result.to_dict(), folder)
    result.plots = [str(p) for p in files]
    return files
