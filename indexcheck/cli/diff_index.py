"""``indexcheck diff-index``: is the new index the old one plus the changes?"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from ..core.diff_index import DiffResult, diff_index
from ..corpus import load_chunks
from ..errors import InputError
from ..textsafe import escape_rich as escape
from .command import Command
from .finish import finish
from .options import output_options, progress, seed_option
from .session import session

SHOWN_ROWS = 20


@click.command("diff-index", cls=Command)
@click.option("--old", "old_spec", required=True, metavar="SPEC", help="The index in production.")
@click.option("--new", "new_spec", required=True, metavar="SPEC", help="The rebuilt index.")
@click.option("--trust-pickle", is_flag=True, help="Allow reading LangChain's index.pkl.")
@click.option("--chunks-old", type=click.Path(path_type=Path), help="Chunks of the old index.")
@click.option("--chunks-new", type=click.Path(path_type=Path), help="Chunks of the new index.")
@click.option("--id-column", default="id", show_default=True)
@click.option("--text-column", default="text", show_default=True)
@click.option(
    "--embedder",
    "embedder_spec",
    default=None,
    metavar="SPEC",
    help="Re-embed a sample of added and changed texts with it (as check-index does).",
)
@click.option(
    "--cache",
    "cache_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="SQLite file caching embeddings by (model, text hash).",
)
@click.option(
    "--sample-new", type=click.IntRange(0), default=None, help="New texts to check [100]."
)
@click.option("--all-new", is_flag=True, help="Check every added and changed text.")
@seed_option
@click.option(
    "--min-cosine",
    type=click.FloatRange(-1.0, 1.0),
    default=0.999,
    show_default=True,
    help="An unchanged text whose vector moved under this cosine is an error.",
)
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder for the spill files (default: a temporary folder, removed after).",
)
@click.option(
    "--memory-limit",
    default="256MB",
    show_default=True,
    help="DuckDB's memory limit for the join; it spills to disk past it.",
)
@output_options
@click.pass_context
def diff_index_cmd(
    ctx: click.Context,
    old_spec: str,
    new_spec: str,
    trust_pickle: bool,
    chunks_old: Path | None,
    chunks_new: Path | None,
    id_column: str,
    text_column: str,
    embedder_spec: str | None,
    cache_path: Path | None,
    sample_new: int | None,
    all_new: bool,
    seed: int,
    min_cosine: float,
    workdir: Path | None,
    memory_limit: str,
    json_path: str | None,
    report_dir: Path | None,
) -> None:
    """Pair old and new by text hash, compare every unchanged text's vectors, list the rest."""
    if embedder_spec is None and (sample_new is not None or all_new):
        raise InputError("--sample-new and --all-new re-embed new texts; add --embedder SPEC")
    if sample_new is not None and all_new:
        raise InputError("pass --sample-new N or --all-new, not both")
    c_old = load_chunks(chunks_old, id_column, text_column) if chunks_old else None
    c_new = load_chunks(chunks_new, id_column, text_column) if chunks_new else None
    opened = session(ctx, "diff-index")
    new = opened.open_store(new_spec, trust_pickle)  # the first opened heads the manifest
    old = opened.open_store(old_spec, trust_pickle)
    embedder = opened.open_embedder(embedder_spec, cache_path) if embedder_spec else None
    with progress() as say:
        result = diff_index(
            old,
            new,
            chunks_old=c_old,
            chunks_new=c_new,
            embedder=embedder,
            sample_new=None if all_new else (100 if sample_new is None else sample_new),
            seed=seed,
            min_cosine=min_cosine,
            workdir=workdir,
            memory_limit=memory_limit,
            progress=say,
        )
    from ..report.diff_index import write_report

    old_store = {"spec": old.spec, "count": old.info().count, "fingerprint": old.fingerprint()}
    code = finish(
        ctx,
        result,
        json_path=json_path,
        report_dir=report_dir,
        render=render,
        report=write_report,
        manifest={
            "seed": seed,
            "old_store": old_store,
            "chunks_old": str(chunks_old) if chunks_old else None,
            "chunks_new": str(chunks_new) if chunks_new else None,
        },
    )
    ctx.exit(code)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def render(result: DiffResult, console: Console) -> None:
    """Faults first (a table), then the findings, then a one-line verdict."""
    bad = result.chunks
    if bad:
        table = Table(title="chunks that are not unchanged")
        for col in ("id", "old id", "status", "cosine", "holds vector of"):
            table.add_column(col, overflow="fold")
        for c in bad[:SHOWN_ROWS]:
            table.add_row(
                escape(c.id or ""),
                escape(c.old_id or ""),
                c.status if c.checked is None else f"{c.status} ({c.checked})",
                _fmt(c.cosine),
                escape(c.holds_vector_of or ""),
            )
        console.print(table)
        if len(bad) > SHOWN_ROWS:
            console.print(f"... and {len(bad) - SHOWN_ROWS} more (see --json)")
    tags = {"error": "[red]error[/red]", "warning": "[yellow]warning[/yellow]", "info": "info"}
    for f in result.findings:
        console.print(f"{tags.get(f.severity, f.severity)} {f.kind}: {escape(f.message)}")
    verdict = "[bold green]PASS[/bold green]" if result.ok else "[bold red]FAIL[/bold red]"
    counts = ", ".join(f"{k} {v}" for k, v in result.counts.items())
    new_line = ""
    if result.new_texts is not None:
        new_line = f"; {result.new_texts.get('checked', 0)} new texts re-embedded"
    else:
        n_new = result.counts.get("added", 0) + result.counts.get("changed", 0)
        if n_new:
            new_line = f"; {n_new} new texts not re-embedded (add --embedder)"
    console.print(
        f"{verdict} {result.counts.get('unchanged', 0)}/{result.compared} unchanged texts at "
        f"cosine >= {result.threshold:g} (min {_fmt(result.min_cosine)}); {counts}{new_line}; "
        f"{result.manifest.get('wall_seconds', 0):.1f}s"
    )
