"""``indexcheck repair``: a corrected copy of a broken index, embedding only the vectors that
exist nowhere (its run, and what it returns, in :mod:`indexcheck.commands.repair`)."""

from __future__ import annotations

from pathlib import Path

import click

from .. import api
from .command import Command
from .engine_options import engine_options
from .finish import finish
from .options import (
    chunks_option,
    embedder_option,
    min_cosine_option,
    output_options,
    seed_option,
    store_option,
)
from .progress import progress


def _verify(ctx: click.Context, param: object, value: str) -> int | str:
    if value == "all":
        return value
    if not value.isdigit():
        raise click.BadParameter(f"a count or 'all', not {value!r}")
    return int(value)


@click.command("repair", cls=Command)
@store_option
@embedder_option
@chunks_option
@click.option(
    "--out",
    "out_spec",
    metavar="DIR|KIND:DIR?...",
    help="NEW folder for the corrected copy: vectors.parquet (and the FAISS index for a "
    "FAISS source); or a new store of a kind, e.g. chroma:DIR?collection=C, "
    "lancedb:DIR?table=T, qdrant:DIR?collection=C, milvus:DIR?collection=C, faiss:DIR; "
    "or a new table in the source's database: pgvector:DSN?table=NEW; or "
    "upstash:URL?namespace=NEW or pinecone:INDEX?namespace=NEW (with --yes). "
    "Never the source or inside it.",
)
@click.option(
    "--verify",
    default="32",
    show_default=True,
    callback=_verify,
    metavar="N|all",
    help="Chunks embedded to choose the plan and check the reused vectors (seeded), or all.",
)
@seed_option
@min_cosine_option("A reused vector under this cosine with a fresh embedding is re-embedded.")
@click.option("--dry-run", is_flag=True, help="Print what would be reused, embedded, dropped.")
@click.option(
    "--yes", is_flag=True, help="Write a hosted target (an Upstash or Pinecone namespace)."
)
@click.option(
    "--no-check", "no_check", is_flag=True, help="Skip check-index --all on the copy (exit 1)."
)
@engine_options
@output_options
@click.pass_context
def repair_cmd(
    ctx: click.Context,
    store_spec: str,
    trust_pickle: bool,
    embedder_spec: str,
    cache_path: Path | None,
    chunks_path: Path | None,
    id_column: str,
    text_column: str,
    out_spec: str | None,
    verify: int | str,
    seed: int,
    min_cosine: float,
    dry_run: bool,
    yes: bool,
    no_check: bool,
    engine: str,
    ray_address: str | None,
    json_path: str | None,
    report_dir: Path | None,
) -> None:
    """Write a corrected copy of a broken index: reuse each chunk's right vector from
    wherever it is stored, embed only the ones that exist nowhere, then check the copy."""
    with progress() as say:
        result = api.repair(
            store_spec, out=out_spec, chunks=chunks_path, embedder=embedder_spec, verify=verify,
            seed=seed, min_cosine=min_cosine, dry_run=dry_run, check=not no_check,
            cache=cache_path, trust_pickle=trust_pickle, id_column=id_column,
            text_column=text_column, progress=say, yes=yes, engine=engine,
            ray_address=ray_address,
        )  # fmt: skip
    ctx.exit(finish(ctx, result))
