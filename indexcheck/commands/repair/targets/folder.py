"""A file target written whole or not at all: every writer writes into one hidden staging
folder beside the target, each file is fsynced, and the folder is renamed into place in one
rename; a failed or killed repair leaves no target, only a hidden ``.NAME.tmp-*`` folder
(removed when the failure is an exception)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ....errors import OutputError
from ....output.files import disk_full, publish, staging
from ....stores.targets import SERVER, TargetSpec
from .chroma import ChromaWriter
from .faiss import FaissWriter
from .lancedb import LanceDBWriter
from .milvus import MilvusWriter
from .parquet import ParquetWriter
from .pgvector import PgvectorWriter
from .pinecone import PineconeWriter
from .protocol import Batch, Source, Writer
from .qdrant import QdrantWriter
from .upstash import UpstashWriter


@dataclass(frozen=True)
class Written:
    """The copy as published: its files (none for a table), the spec check-index reads it
    with (``proof``, which may hold a password) and the same safe to print (``shown``)."""

    files: list[Path]
    proof: str
    kind: str
    shown: str = ""


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(root: Path) -> None:
    for p in sorted(root.rglob("*")):
        _fsync(p)
    _fsync(root)


def writers_for(spec: TargetSpec, source: Source) -> tuple[list[Writer], str]:
    """The writers a target needs (``vectors.parquet`` always, then the store kind's) and
    the kind check-index proves (the store's, else parquet)."""
    d = source.details
    kind = spec.kind
    if kind == "folder":  # a plain folder: Parquet, and FAISS beside it for a FAISS source
        kind = "faiss" if source.kind == "faiss" else "parquet"
    extra: Writer | None = None
    if kind == "faiss":
        layout = spec.param("layout", str(d.get("faiss_layout") or "indexcheck"))
        extra = FaissWriter(layout, source.metric)
    elif kind == "chroma":
        own = d.get("collection") if source.kind == "chroma" else None
        extra = ChromaWriter(spec.param("collection", str(own or "repaired")), source)
    elif kind == "lancedb":
        table = str(d.get("table") or "vectors") if source.kind == "lancedb" else "vectors"
        extra = LanceDBWriter(spec.param("table", table), source)
    elif kind == "milvus":
        own = d.get("collection") if source.kind == "milvus" else None
        extra = MilvusWriter(spec.param("collection", str(own or "repaired")), source)
    elif kind == "qdrant":
        own = d.get("collection") if source.kind == "qdrant" else None
        extra = QdrantWriter(spec.param("collection", str(own or "repaired")), source)
    return [ParquetWriter(), *([extra] if extra is not None else [])], kind


def write_copy(
    spec: TargetSpec, source: Source, dimension: int, batches: Iterable[Batch]
) -> Written:
    """Every batch written through each writer into a staging folder, fsynced, renamed to
    ``spec.folder`` (which must not exist). OutputError (exit 3) when the disk fills or a
    file cannot be written; nothing is left at the target then."""
    if spec.kind in SERVER:
        return write_table(spec, source, dimension, batches)
    out = spec.folder
    writers, kind = writers_for(spec, source)
    try:
        with staging(out) as tmp:
            work = tmp / out.name
            work.mkdir()
            opened: list[Writer] = []
            try:
                for w in writers:
                    w.open(work, dimension)
                    opened.append(w)
                for batch in batches:
                    for w in writers:
                        w.write(batch)
                for w in writers:
                    w.commit()
            except BaseException:
                for w in opened:
                    w.abort()
                raise
            names = sorted(p.name for p in work.iterdir())
            _fsync_tree(work)
            publish(work, out)
            _fsync(out.parent if str(out.parent) else Path("."))
    except OSError as exc:
        if disk_full(exc):
            raise OutputError(
                f"the disk filled while writing {out}; nothing was left there, free space "
                "and run again (with --cache the embeddings are not paid twice)"
            ) from None
        raise OutputError(f"could not write {out}: {exc.strerror or exc}") from None
    proof = writers[-1].proof(out)
    return Written([out / n for n in names], proof, kind, proof)


def write_table(
    spec: TargetSpec, source: Source, dimension: int, batches: Iterable[Batch]
) -> Written:
    """A new table on a server: a staging table, a batch a transaction, renamed into place
    at the end or dropped when anything fails. OutputError (exit 3) when the server
    refuses a write."""
    w: PgvectorWriter | UpstashWriter | PineconeWriter
    errors: tuple[type[BaseException], ...] = (OSError,)
    if spec.kind == "upstash":
        from upstash_vector.errors import UpstashError

        w = UpstashWriter(spec, source)
        errors = (UpstashError, OSError)
        what = f"namespace '{w.target.namespace}'"
    elif spec.kind == "pinecone":
        from pinecone.exceptions import PineconeException

        w = PineconeWriter(spec, source)
        errors = (PineconeException, OSError)
        what = f"namespace '{w.target.namespace}' of {w.target.index}"
    else:
        import psycopg

        w = PgvectorWriter(spec, source)
        errors = (psycopg.Error,)
        what = f"table {w.t.table} in {w.t.dbname} at {w.t.where}"
    try:
        w.open(Path(), dimension)
        for batch in batches:
            w.write(batch)
        w.commit()
    except errors as exc:
        w.abort()
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise OutputError(
            f"could not write {what}: {type(exc).__name__}: {first}; nothing was left there"
        ) from None
    except BaseException:
        w.abort()
        raise
    shown = w.shown() if isinstance(w, PgvectorWriter) else w.proof(Path())
    return Written([], w.proof(Path()), spec.kind, shown)


__all__ = ["Written", "write_copy", "write_table", "writers_for"]
