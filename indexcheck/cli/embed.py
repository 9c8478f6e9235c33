"""``indexcheck embed``: the reference re-embedding, keyed by text hash, into a new file
(its run, and what it returns, in :mod:`indexcheck.commands.embed`)."""

from __future__ import annotations

from pathlib import Path

import click

from .. import api
from .command import Command
from .finish import finish
from .options import chunks_options, embedder_option, folder_option, json_option, output_file
from .progress import progress


@click.command("embed", cls=Command)
@chunks_options(required=True)
@embedder_option
@output_file(
    "--out",
    "out_path",
    "New vectors file (.parquet or .jsonl) with id, vector, text.",
)
@folder_option("--faiss", "faiss_dir", "New FAISS folder (index.faiss + ids.json), inner product.")
@json_option
@click.pass_context
def embed_cmd(
    ctx: click.Context,
    chunks_path: Path,
    id_column: str,
    text_column: str,
    embedder_spec: str,
    cache_path: Path | None,
    out_path: Path | None,
    faiss_dir: Path | None,
    json_path: str | None,
) -> None:
    """Embed every chunk by content hash (each distinct text once) into a NEW index file."""
    # a new index is never written over an old one: refused before the first (paid) request
    with progress() as say:
        result = api.embed(
            chunks_path, embedder_spec, out=out_path, faiss=faiss_dir, id_column=id_column,
            text_column=text_column, cache=cache_path, progress=say,
        )  # fmt: skip
    ctx.exit(finish(ctx, result, json_path=json_path))
