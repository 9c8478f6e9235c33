"""``indexcheck embed``: the reference re-embedding, keyed by text hash, into a new file."""

from __future__ import annotations

from pathlib import Path

import click

from ..corpus import load_chunks
from ..errors import InputError
from ..manifest import Run
from ..stores.faiss_store import write_faiss_folder
from ..stores.parquet import write_vectors_file
from .options import embedder_option, progress, write_json
from .session import open_embedder_cached


@click.command("embed")
@click.option(
    "--chunks",
    "chunks_path",
    type=click.Path(path_type=Path),
    required=True,
    help="Chunks file (JSONL, CSV or Parquet) with an id and a text column.",
)
@click.option("--id-column", default="id", show_default=True)
@click.option("--text-column", default="text", show_default=True)
@embedder_option
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="New vectors file (.parquet or .jsonl) with id, vector, text.",
)
@click.option(
    "--faiss",
    "faiss_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="New FAISS folder (index.faiss + ids.json), inner product.",
)
@click.option(
    "--json",
    "json_path",
    default=None,
    metavar="PATH",
    help="Write the manifest (cost, model, counts) as JSON.",
)
def embed_cmd(
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
    if out_path is None and faiss_dir is None:
        raise InputError("embed needs somewhere to write: pass --out FILE and/or --faiss DIR")
    run = Run("embed")
    corpus = load_chunks(chunks_path, id_column, text_column)
    embedder = open_embedder_cached(embedder_spec, cache_path)
    with progress() as say:
        say(f"embedding {len(corpus)} chunks with {embedder.model_id}")
        vectors = embedder.embed(corpus.texts)
    if out_path is not None:
        write_vectors_file(out_path, corpus.ids, vectors, corpus.texts)
    if faiss_dir is not None:
        write_faiss_folder(faiss_dir, corpus.ids, vectors, corpus.texts)
    manifest = run.manifest(
        embedder=embedder, chunks=len(corpus), distinct_texts=len(set(corpus.hashes))
    )
    write_json(json_path, {"manifest": manifest})
    s = embedder.stats
    click.echo(
        f"embedded {len(corpus)} chunks ({len(set(corpus.hashes))} distinct texts) with "
        f"{embedder.model_id} in {s.requests} requests, {s.tokens} tokens -> "
        + ", ".join(str(p) for p in (out_path, faiss_dir) if p is not None)
    )
