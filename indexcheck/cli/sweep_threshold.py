"""``indexcheck sweep-threshold``: calibrate a refusal threshold, or prove none exists."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from ..core.retrieval import marked_refusals, scale_converters
from ..core.sweep_threshold import SweepResult, sweep_threshold
from ..questions import load_questions
from ..textsafe import escape_rich as esc
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
    chunks_path: Path | None,
    id_column: str,
    text_column: str,
    json_path: str | None,
    report_dir: Path | None,
) -> None:
    """Sweep every observed score as a refusal threshold; recommend one or prove none works.

    Chunks (optional) may mark refusal chunks with a truthy 'refusal' column.
    """
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
        )
    code = finish(
        ctx,
        result,
        json_path=json_path,
        report_dir=report_dir,
        render=render,
        report=_plots,
        report_key=None,
        manifest={"questions": str(questions_path)},
    )
    ctx.exit(code)


def _plots(result: SweepResult, folder: Path) -> list[Path]:
    """The score plots; their paths go into the result's ``plots`` key."""
    from ..report.plots import threshold_plots

    files = threshold_plots(result.to_dict(), folder)
    result.plots = [str(p) for p in files]
    return files


def _s(score: dict[str, float | None] | None) -> str:
    if score is None:
        return "-"
    cos = score.get("cosine")
    backend = score.get("backend")
    b = "-" if backend is None else f"{backend:.4f}"
    return b if cos is None else f"{b} (cos {cos:.4f})"


def render(result: SweepResult, console: Console) -> None:
    """Key figures, the rows around the recommendation, and the verdict."""
    transform = result.scale.get("transform") or "unknown"
    console.print(
        f"{result.in_scope} in-scope, {result.out_of_scope} out-of-scope questions; k={result.k}, "
        f"fetch={result.fetch}; backend score {transform}"
    )
    console.print(f"lowest in-scope best expected score: {_s(result.min_in_scope_best)}")
    console.print(f"highest out-of-scope top score:      {_s(result.max_out_of_scope_top)}")
    if result.handled_by_content:
        console.print(f"handled by refusal chunks: {esc(', '.join(result.handled_by_content))}")
    if result.not_retrieved:
        console.print(
            f"expected chunk not in top {result.k}: {esc(', '.join(result.not_retrieved))}"
        )
    if result.overlap["in_scope"] or result.overlap["out_of_scope"]:
        console.print(
            f"overlap: in-scope {esc(', '.join(result.overlap['in_scope'])) or '-'}; "
            f"out-of-scope {esc(', '.join(result.overlap['out_of_scope'])) or '-'}"
        )
    table = Table(title="thresholds around the recommendation (* ), loosest first")
    for col in ("threshold", "recall", "oos handled", "false refusals", "false answers"):
        table.add_column(col, justify="right")
    rows = result.table
    at = next((i for i, r in enumerate(rows) if r is result.recommended_row), len(rows) - 1)
    shown = rows[max(0, at - 6) : at + 6]
    for r in shown:
        rec, rej = r["in_scope_recall"], r["out_of_scope_rejection"]
        mark = " *" if r is result.recommended_row else ""
        table.add_row(
            _s(r["threshold"]) + mark,
            f"{rec['k']}/{rec['n']}",
            f"{rej['k']}/{rej['n']}",
            str(r["false_refusals"]),
            str(r["false_answers"]),
        )
    console.print(table)
    tag = "[bold green]PASS[/bold green]" if result.ok else "[bold red]FAIL[/bold red]"
    console.print(f"{tag} {esc(result.verdict)}")
