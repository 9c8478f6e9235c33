"""embed: the reference re-embedding, each distinct chunk text once (keyed by text hash),
into a NEW vectors file and/or a NEW FAISS folder (``indexcheck embed``).

The same for :func:`indexcheck.api.embed` and so the CLI: :func:`run_embed` takes the
:class:`EmbedSettings`, reads the chunks with :func:`embed_inputs` before the embedder opens
(a new index is never written over an old one, and nothing is paid for before that is
known), then runs :func:`embed` on the opened embedder and stamps the manifest. Each file
is written in a staging folder beside it, then renamed into place: a failed write (a full
disk) leaves nothing half written, a symlink at the path is replaced.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...embedders.base import Embedder
from ...errors import InputError, OutputError
from ...inputs.corpus import Corpus, load_chunks
from ...output.files import publish, staging
from ...output.model import Section, Text
from ...output.registry import register_sections
from ...output.summary_kit import summary
from ...stores.faiss.store import write_faiss_folder
from ...stores.files.store import write_vectors_file
from .settings import EmbedSettings


@dataclass
class EmbedResult:
    """What embed wrote; its JSON is the manifest alone."""

    chunks: int
    distinct_texts: int
    written: list[Path]
    manifest: dict[str, Any] = field(default_factory=dict)
    ok: bool = True

    @property
    def manifest_facts(self) -> dict[str, Any]:
        """What the manifest adds to the run's (see :func:`indexcheck.output.manifest.stamp`)."""
        return {"chunks": self.chunks, "distinct_texts": self.distinct_texts}

    def to_dict(self) -> dict[str, Any]:
        return {"manifest": self.manifest}


def refuse_outputs(out: str | Path | None, faiss: str | Path | None) -> None:
    """Exit 2 unless there is somewhere to write (``out`` and/or ``faiss``) that holds no
    index yet: checked before the first (paid) request."""
    if out is None and faiss is None:
        raise InputError("embed needs somewhere to write: pass --out FILE and/or --faiss DIR")
    if out is not None and Path(out).exists():
        raise InputError(f"{out} already exists; choose another --out or remove it")
    if faiss is not None and (Path(faiss) / "index.faiss").exists():
        raise InputError(f"{faiss}/index.faiss already exists; choose another --faiss")


def embed_inputs(settings: EmbedSettings) -> Corpus:
    """The chunks to embed (a chunks file, read with its ``id_column``/``text_column``, or a
    corpus), once :func:`refuse_outputs` has found somewhere new to write them."""
    refuse_outputs(settings.out, settings.faiss)
    chunks = settings.chunks
    if isinstance(chunks, Corpus):
        return chunks
    return load_chunks(chunks, settings.id_column, settings.text_column)


def embed(
    settings: EmbedSettings,
    embedder: Embedder,
    corpus: Corpus,
    progress: Callable[[str], None] | None = None,
) -> EmbedResult:
    """Every chunk of ``corpus`` embedded by ``embedder`` (behind its cache: each distinct
    text once) and written to the vectors file ``settings.out`` (.parquet or .jsonl: id,
    vector, text) and/or the FAISS folder ``settings.faiss`` (index.faiss + ids.json, inner
    product)."""
    out, faiss = settings.out, settings.faiss
    refuse_outputs(out, faiss)
    if progress is not None:
        progress(f"embedding {len(corpus)} chunks with {embedder.model_id}")
    vectors = embedder.embed(corpus.texts)
    try:
        if out is not None:
            with staging(out) as tmp:
                write_vectors_file(tmp / Path(out).name, corpus.ids, vectors, corpus.texts)
                publish(tmp / Path(out).name, out)
        if faiss is not None:
            with staging(faiss) as tmp:
                write_faiss_folder(tmp / Path(faiss).name, corpus.ids, vectors, corpus.texts)
                publish(tmp / Path(faiss).name, faiss)
    except OSError as exc:  # checked before the work; the disk can still fill up
        raise OutputError(
            f"could not write the new index: {exc.strerror or exc}; nothing was half "
            "written, the embeddings are in --cache when one was given"
        ) from None
    written = [Path(p) for p in (out, faiss) if p is not None]
    return EmbedResult(len(corpus), len(set(corpus.hashes)), written)


def embed_sections(result: EmbedResult) -> list[Section]:
    """One terminal line: what was embedded, at what cost, written where."""
    s = result.manifest.get("embedding", {})
    model = result.manifest.get("embedder", {}).get("model_id")
    line = (
        f"embedded {result.chunks} chunks ({result.distinct_texts} distinct texts) with "
        f"{model} in {s.get('requests', 0)} requests, {s.get('tokens', 0)} tokens -> "
        + ", ".join(str(p) for p in result.written)
    )
    return [summary(None, Text(line, whole=True))]


register_sections(EmbedResult, embed_sections)


__all__ = ["EmbedResult", "EmbedSettings", "embed", "embed_inputs", "refuse_outputs"]
