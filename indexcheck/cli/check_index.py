"""``indexcheck check-index``: re-embed chunks and prove each stored vector is its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from ..chunk_stream import FileChunks
from ..core.check_index import IntegrityResult, check_index
from ..core.check_stream import check_all as check_all_streamed
from ..embed_text import EmbedTemplate
from ..engine import open_engine
from ..errors import InputError
from ..textsafe import escape_rich as esc
from .command import Command
from .engine_options import engine_options
from .finish import finish
from .options import (
    check_file_output,
    chunks_option,
    embedder_option,
    output_options,
    progress,
    seed_option,
    store_option,
)
from .progress import progress_bars
from .session import open_corpus, session

SHOWN_ROWS = 20


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
@click.option(
    "--max-fault-rate",
    type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
    default=None,
    help="Size the random sample to prove the fault rate is under this (about 3/P chunks).",
)
@click.option(
    "--rows",
    "rows_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    callback=check_file_output("--rows"),
    help="With --all: write every checked row to this Parquet file, block by block.",
)
@click.option(
    "--block-size",
    type=click.IntRange(1),
    default=4096,
    show_default=True,
    help="With --all: chunks embedded, compared and cached per block (a killed run loses at "
    "most one).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Hosted embedders: requests in flight at once (429 and Retry-After still honoured).",
)
@click.option(
    "--embed-template",
    "embed_template",
    default=None,
    callback=lambda _c, _p, v: None if v is None else EmbedTemplate.parse(v),
    help='The text the indexer embedded, e.g. "{metadata}\\n\\n{text}" (LlamaIndex\'s '
    "default); fields {text}, {id}, {metadata}, {meta[KEY]}.",
)
@engine_options
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
    max_fault_rate: float | None,
    rows_path: Path | None,
    block_size: int,
    concurrency: int,
    engine: str,
    ray_address: str | None,
    embed_template: EmbedTemplate | None,
    json_path: str | None,
    report_dir: Path | None,
) -> None:
    """Re-embed chunks and compare them with their stored vectors; diagnose what differs."""
    if rows_path is not None and not check_all:
        raise InputError("--rows needs --all; add --all or drop --rows")
    if check_all and max_fault_rate is not None:
        raise InputError("--max-fault-rate sizes a sample; drop it or drop --all")
    opened = session(ctx, "check-index")
    if check_all:
        source: Any = (
            None if chunks_path is None else FileChunks(chunks_path, id_column, text_column)
        )
        if embed_template is not None and chunks_path is not None:  # metadata: in memory
            source = open_corpus(chunks_path, id_column, text_column)
        runner = open_engine(engine, ray_address)
        ctx.call_on_close(runner.close)
    else:
        corpus = open_corpus(chunks_path, id_column, text_column)
    store = opened.open_store(store_spec, trust_pickle)
    embedder = opened.open_embedder(embedder_spec, cache_path)
    if concurrency > 1:
        inner = getattr(embedder, "inner", embedder)
        inner.concurrency = concurrency  # BaseEmbedder sends up to N batches at once
    if check_all:
        with progress_bars() as (say, tick):
            result = check_all_streamed(
                store, embedder, source, min_cosine=min_cosine, window=window,
                rows_path=rows_path, engine=runner, say=say, tick=tick, block=block_size,
                template=embed_template,
            )  # fmt: skip
    else:
        with progress() as say:
            result = check_index(
                store,
                embedder,
                corpus,
                sample=sample,
                seed=seed,
                min_cosine=min_cosine,
                window=window,
                progress=say,
                max_fault_rate=max_fault_rate,
                template=embed_template,
            )
    from ..report.check_index import write_report

    code = finish(
        ctx,
        result,
        json_path=json_path,
        report_dir=report_dir,
        render=render,
        report=write_report,
        manifest={"seed": seed, "chunks": str(chunks_path) if chunks_path else None},
    )
    ctx.exit(code)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def render(result: IntegrityResult, console: Console) -> None:
    """A compact table of what is wrong, the findings, and a one-line verdict."""
    bad = [c for c in result.chunks if c.status != "ok"]
    if bad:
        table = Table(title=f"chunks under {result.threshold:g} or without a usable vector")
        for col in ("position", "id", "cosine", "status", "holds vector of", "offset"):
            right = col in ("position", "offset")
            table.add_column(col, justify="right" if right else "left", overflow="fold")
        for c in bad[:SHOWN_ROWS]:
            table.add_row(
                str(c.position),
                esc(c.id),
                _fmt(c.cosine),
                c.status,
                esc(c.holds_vector_of or ""),
                "" if c.offset is None else f"{c.offset:+d}",
            )
        console.print(table)
        if len(bad) > SHOWN_ROWS:
            console.print(f"... and {len(bad) - SHOWN_ROWS} more (see --json)")
    for f in result.findings:
        tag = "[red]error[/red]" if f.severity == "error" else "[yellow]warning[/yellow]"
        console.print(f"{tag} {f.kind}: {esc(f.message)}")
    verdict = "[bold green]PASS[/bold green]" if result.ok else "[bold red]FAIL[/bold red]"
    ok_count = result.counts.get("ok", 0)
    m: dict[str, Any] = result.manifest.get("embedding", {})
    if result.chunks_truncated:
        console.print(
            f"chunks in the JSON: only the {len(result.chunks)} rows that are not ok "
            "(over 100,000 checked); every row is in --rows"
        )
    bound = ""
    if result.fault_rate_upper_95 is not None and result.ok:
        bound = f"; fault rate < {100 * result.fault_rate_upper_95:.1f}% (95%, random rows)"
    console.print(
        f"{verdict} {ok_count}/{result.checked} chunks ({result.mode}) at cosine >= "
        f"{result.threshold:g}; min {_fmt(result.min_cosine)}, median "
        f"{_fmt(result.median_cosine)}; {m.get('requests', 0)} embedding requests, "
        f"{m.get('tokens', 0)} tokens, {result.manifest.get('wall_seconds', 0):.1f}s{bound}"
    )
