"""``indexcheck diff-index``: is the new index the old one plus the changes?"""

from __future__ import annotations

from pathlib import Path

import click

from .. import api
from ..errors import InputError
from .command import Command
from .engine_options import engine_options
from .finish import finish
from .options import (
    EMBEDDINGS,
    TRUST_PICKLE_SHORT_HELP,
    cache_option,
    chunk_column_options,
    folder_option,
    input_file,
    min_cosine_option,
    number_option,
    output_options,
    seed_option,
    spec_option,
    trust_pickle_option,
)
from .progress import progress
from .session import warn_spec


@click.command("diff-index", cls=Command)
@spec_option("--old", "old_spec", "The index in production.", required=True)
@spec_option("--new", "new_spec", "The rebuilt index.", required=True)
@trust_pickle_option(TRUST_PICKLE_SHORT_HELP)
@input_file("--chunks-old", "chunks_old", "Chunks of the old index.")
@input_file("--chunks-new", "chunks_new", "Chunks of the new index.")
@chunk_column_options
@spec_option(
    "--embedder",
    "embedder_spec",
    "Re-embed a sample of added and changed texts with it (as check-index does).",
)
@cache_option(EMBEDDINGS, env=False)
@number_option("--sample-new", click.IntRange(0), None, "New texts to check [100].")
@click.option("--all-new", is_flag=True, help="Check every added and changed text.")
@seed_option
@min_cosine_option("An unchanged text whose vector moved under this cosine is an error.")
@folder_option(
    "--workdir",
    "workdir",
    "Folder for the spill files (default: a temporary folder, removed after).",
)
@click.option(
    "--memory-limit",
    default="256MB",
    show_default=True,
    help="DuckDB's memory limit for the join; it spills to disk past it.",
)
@engine_options
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
    engine: str,
    ray_address: str | None,
    json_path: str | None,
    report_dir: Path | None,
) -> None:
    """Pair old and new by text hash, compare every unchanged text's vectors, list the rest.

    With --embedder, a sample of the added and changed texts is re-embedded (--engine ray:
    as Ray tasks) and checked as check-index does.
    """
    if embedder_spec is None and (sample_new is not None or all_new):
        raise InputError("--sample-new and --all-new re-embed new texts; add --embedder SPEC")
    if sample_new is not None and all_new:
        raise InputError("pass --sample-new N or --all-new, not both")
    if embedder_spec is None and engine != "local":
        raise InputError("--engine ray runs the re-embedding of new texts; add --embedder SPEC")
    warn_spec(new_spec)
    warn_spec(old_spec)
    with progress() as say:  # only the new-text checks run on the engine
        result = api.diff_index(
            old_spec, new_spec, chunks_old, chunks_new, embedder_spec,
            sample_new=None if all_new else (100 if sample_new is None else sample_new),
            seed=seed, min_cosine=min_cosine, workdir=workdir, memory_limit=memory_limit,
            engine=engine if embedder_spec is not None else None, ray_address=ray_address,
            cache=cache_path, progress=say, trust_pickle=trust_pickle, id_column=id_column,
            text_column=text_column,
        )  # fmt: skip
    ctx.exit(finish(ctx, result))
