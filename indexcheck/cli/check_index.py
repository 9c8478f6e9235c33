"""``indexcheck check-index``: re-embed chunks and prove each stored vector is its own.

A click wrapper over :func:`indexcheck.api.check_index`, which reads the chunks and the
template. Its terminal summary and ``check-index.md`` are the result's own sections, rendered
by ``finish`` through :mod:`indexcheck.output.render`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from .. import api
from ..errors import InputError
from .command import Command
from .engine_options import engine_options
from .finish import finish
from .options import (
    IndexInputs,
    index_inputs,
    min_cosine_option,
    number_option,
    output_file,
    output_options,
    seed_option,
)
from .progress import progress, progress_bars
from .session import warn_spec


@click.command("check-index", cls=Command)
@index_inputs
@number_option("--sample", click.IntRange(1), 100, "Chunks to check.")
@click.option("--all", "check_all", is_flag=True, help="Check every chunk (and list orphans).")
@seed_option
@min_cosine_option("A stored vector under this cosine with its text's fresh embedding is flagged.")
@number_option(
    "--window", click.IntRange(0), 16, "Neighbours searched first when diagnosing a shifted chunk."
)
@number_option(
    "--max-fault-rate",
    click.FloatRange(1e-9, 1.0, max_open=True),
    None,
    "Size the random sample to prove the fault rate is under this (about 3/P chunks).",
)
@output_file(
    "--rows",
    "rows_path",
    "With --all: write every checked row to this file, block by block, in the format "
    "its name ends in: .parquet, .csv or .jsonl.",
    formats=True,
)
@number_option(
    "--block-size",
    click.IntRange(1),
    4096,
    "With --all: chunks embedded, compared and cached per block (a killed run loses at most one).",
)
@number_option(
    "--concurrency",
    click.IntRange(1, 64),
    1,
    "Hosted embedders: requests in flight at once (429 and Retry-After still honoured).",
)
@click.option(
    "--embed-template",
    "embed_template",
    default=None,
    help='The text the indexer embedded, e.g. "{metadata}\\n\\n{text}" (LlamaIndex\'s '
    "default); fields {text}, {id}, {metadata}, {meta[KEY]}.",
)
@engine_options
@output_options
@click.pass_context
def check_index_cmd(
    ctx: click.Context,
    inputs: IndexInputs,
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
    embed_template: str | None,
    json_path: str | None,
    report_dir: Path | None,
) -> None:
    """Re-embed chunks and compare them with their stored vectors; diagnose what differs."""
    if rows_path is not None and not check_all:
        raise InputError("--rows needs --all; add --all or drop --rows")
    if check_all and max_fault_rate is not None:
        raise InputError("--max-fault-rate sizes a sample; drop it or drop --all")
    warn_spec(inputs.store)
    with progress_bars() if check_all else _said() as (say, tick):
        result = api.check_index(
            inputs.store, inputs.chunks, inputs.embedder, sample=sample, seed=seed,
            min_cosine=min_cosine, window=window, max_fault_rate=max_fault_rate,
            template=embed_template, stream=check_all, rows=rows_path, block=block_size,
            engine=engine, ray_address=ray_address, concurrency=concurrency, progress=say,
            tick=tick, **inputs.reading(),
        )  # fmt: skip
    ctx.exit(finish(ctx, result))


@contextmanager
def _said() -> Iterator[tuple[Any, None]]:
    """The sampled check's progress: messages only, no bars."""
    with progress() as say:
        yield say, None
