"""``indexcheck embed``: the reference re-embedding, keyed by text hash, into a new file."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from ..core.summary_kit import summary
from ..corpus import load_chunks
from ..errors import InputError, OutputError
from ..outputs import publish, staging
from ..sections import Section, Text
from ..stores.faiss_store import write_faiss_folder
from ..stores.parquet import write_vectors_file
from .command import Command
from .finish import finish
from .options import chunks_options, embedder_option, folder_option, json_option, output_file
from .progress import progress
from .session import session


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
    if out_path is None and faiss_dir is None:
        raise InputError("embed needs somewhere to write: pass --out FILE and/or --faiss DIR")
    # a new index is never written over an old one: refuse before the first (paid) request
    if out_path is not None and out_path.exists():
        raise InputError(f"{out_path} already exists; choose another --out or remove it")
    if faiss_dir is not None and (faiss_dir / "index.faiss").exists():
        raise InputError(f"{faiss_dir}/index.faiss already exists; choose another --faiss")
    corpus = load_chunks(chunks_path, id_column, text_column)
    embedder = session(ctx, "embed").open_embedder(embedder_spec, cache_path)
    with progress() as say:
        say(f"embedding {len(corpus)} chunks with {embedder.model_id}")
        vectors = embedder.embed(corpus.texts)
    # each written in a staging folder beside it, then renamed into place: a failed write
    # (a full disk) leaves nothing half written, a symlink at the path is replaced
    try:
        if out_path is not None:
            with staging(out_path) as tmp:
                write_vectors_file(tmp / out_path.name, corpus.ids, vectors, corpus.texts)
                publish(tmp / out_path.name, out_path)
        if faiss_dir is not None:
            with staging(faiss_dir) as tmp:
                write_faiss_folder(tmp / faiss_dir.name, corpus.ids, vectors, corpus.texts)
                publish(tmp / faiss_dir.name, faiss_dir)
    except OSError as exc:  # checked before the work; the disk can still fill up
        raise OutputError(
            f"could not write the new index: {exc.strerror or exc}; nothing was half "
            "written, the embeddings are in --cache when one was given"
        ) from None
    written = [p for p in (out_path, faiss_dir) if p is not None]
    result = Embedded(len(corpus), len(set(corpus.hashes)), written)
    manifest = {"chunks": result.chunks, "distinct_texts": result.distinct_texts}
    ctx.exit(finish(ctx, result, json_path=json_path, manifest=manifest))


@dataclass
class Embedded:
    """What embed wrote; its JSON is the manifest alone."""

    chunks: int
    distinct_texts: int
    written: list[Path]
    manifest: dict[str, Any] = field(default_factory=dict)
    ok: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"manifest": self.manifest}

    def sections(self) -> list[Section]:
        """One terminal line: what was embedded, at what cost, written where."""
        s = self.manifest.get("embedding", {})
        model = self.manifest.get("embedder", {}).get("model_id")
        line = (
            f"embedded {self.chunks} chunks ({self.distinct_texts} distinct texts) with "
            f"{model} in {s.get('requests', 0)} requests, {s.get('tokens', 0)} tokens -> "
            + ", ".join(str(p) for p in self.written)
        )
        return [summary(None, Text(line, whole=True))]
