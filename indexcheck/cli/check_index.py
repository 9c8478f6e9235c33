"""``indexcheck check-index``: re-embed chunks and prove each stored vector is its own.

Its terminal summary and ``check-index.md`` are the result's own sections
(``CheckIndexResult.sections()``), rendered by ``finish`` through :mod:`indexcheck.report`."""

from __future__ import annotations

from pathlib import Path

import click

from ..core.check_index import check_index
from .command import Command
from .finish import finish
from .options import (
    chunks_option,
    embedder_option,
    output_options,
    progress,
    seed_option,
    store_option,
)
from .session import open_corpus, session


@click.command("check-index", cls=Command)
@store_option
@embedder_option
@chunks_option
@click.option("--sample", type=int, default=100, show_default=True, help="Chunks to check.")
@click.option("--all", "check_all", is_flag=True, help="Check every chunk (and list orphans).")
@seed_option
@click.option(
    "--min-cosine",
    type=click.FloatRange(-1.0, 1.0),
    default=0.999,
    show_default=True,
    help="A stored vector under this cosine with its text's fresh embedding is flagged.",
)
@click.option(
    "--window",
    type=click.IntRange(0),
    default=16,
    show_default=True,
    help="Neighbours searched first when diagnosing a shifted chunk.",
)
@output_options
@click.pass_context
def check_index_cmd(
    ctx: click.Context,
    store_spec: str,
    trust_pickle: bool,
    embedder_spec: str,
    cache_path: Path | None,
    chunks_path: Path | None,
    id_column: str,
    text_column: str,
    sample: int,
    check_all: bool,
    seed: int,
    min_cosine: float,
    window: int,
    json_path: str | None,
    report_dir: Path | None,
) -> None:
    """Re-embed chunks and compare them with their stored vectors; diagnose what differs."""
    corpus = open_corpus(chunks_path, id_column, text_column)
    opened = session(ctx, "check-index")
    store = opened.open_store(store_spec, trust_pickle)
    embedder = opened.open_embedder(embedder_spec, cache_path)
    with progress() as say:
        result = check_index(
            store,
            embedder,
            corpus,
            sample=None if check_all else sample,
            seed=seed,
            min_cosine=min_cosine,
            window=window,
            progress=say,
        )
    code = finish(
        ctx,
        result,
        json_path=json_path,
        report_dir=report_dir,
        manifest={"seed": seed, "chunks": str(chunks_path) if chunks_path else None},
    )
    ctx.exit(code)
