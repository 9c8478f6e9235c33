"""What repair refuses before any work (exit 2, one sentence saying what is wrong and how to
fix it): no target, a target that exists, a target that is or lies inside the source."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...errors import BackendUnavailableError, InputError
from ...stores.targets import HOSTED, SERVER, TargetSpec
from .settings import RepairSettings
from .targets.pgvector import connect, exists
from .targets.pinecone import index_client as pinecone_index
from .targets.pinecone import namespaces as pinecone_namespaces
from .targets.upstash import client

#: the schemes whose spec names a local file or folder (the source repair never writes)
LOCAL = ("faiss", "parquet", "jsonl", "chroma", "lancedb", "llamaindex", "sqlitevec", "milvus",
         "qdrant")  # fmt: skip


def source_path(store: Any) -> Path | None:
    """The local file or folder a store spec (or an opened store) reads; None: a server."""
    spec = store if isinstance(store, str) else getattr(store, "spec", None)
    where = getattr(store, "folder", None) or getattr(store, "path", None)
    if where is not None:
        return Path(where)
    if not isinstance(spec, str) or ":" not in spec:
        return None
    scheme, rest = spec.split(":", 1)
    if scheme not in LOCAL or rest.startswith("//") or "://" in rest.split("?", 1)[0]:
        return None
    return Path(rest.split("?", 1)[0])


def refuse_table(target: TargetSpec) -> None:
    """InputError (exit 2) when the target table is the source's or exists already."""
    t, src = target.names, target.source
    if src is not None:
        same = (src.where, src.dbname, src.schema or "public", src.table)
        if same == (t.where, t.dbname, t.schema or "public", t.table):
            raise InputError(
                f"--out names the source table {t.table}; repair never writes the table it "
                "reads: pass ?table= a NEW table name"
            )
    import psycopg

    try:
        with connect(t) as conn:
            found = exists(conn, t, t.table)
    except psycopg.OperationalError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BackendUnavailableError(
            f"--out: could not reach {t.dbname} at {t.where} ({first}); check the server runs "
            "and the DSN"
        ) from None
    if found:
        raise InputError(
            f"--out: table {t.table} already exists in {t.dbname}; pass ?table= a new "
            "table name, or drop it"
        )


def _refuse_namespace(namespace: str, is_source: bool, used: Any, where: str) -> None:
    """InputError (exit 2) when ``namespace`` is the source's or one of ``used``
    (a callable giving the names in use, asked only when it is not the source's)."""
    if is_source:
        raise InputError(
            f"--out names the source namespace '{namespace}'; repair never writes what it "
            "reads: pass ?namespace= a NEW namespace"
        )
    if namespace in used():
        raise InputError(
            f"--out: namespace '{namespace}' already exists in {where}; pass ?namespace= a new name"
        )


def refuse_namespace(target: TargetSpec) -> None:
    """InputError (exit 2) when the Upstash namespace is the source's or exists already."""
    t = target.names
    same = target.source == t
    _refuse_namespace(t.namespace, same, lambda: client(t.url).list_namespaces(), t.url)


def refuse_pinecone(target: TargetSpec) -> None:
    """InputError (exit 2) when the Pinecone namespace is the source's or holds vectors."""
    t, src = target.names, target.source
    same = src is not None and (src.index, src.namespace) == (t.index, t.namespace)
    used = lambda: pinecone_namespaces(pinecone_index(t))  # noqa: E731
    _refuse_namespace(t.namespace, same, used, f"index {t.index}")


def refuse(settings: RepairSettings) -> TargetSpec:
    """The target ``settings.out`` names; InputError or SpecError (exit 2) unless it is a
    known kind and a new folder outside the source."""
    if settings.store is None:
        raise InputError("repair needs the index to read: pass --store SPEC")
    if settings.out is None:
        raise InputError(
            "repair writes a corrected copy and never the store it reads: pass --out DIR, "
            "a new folder"
        )
    target = settings.out
    if target.kind in HOSTED and not settings.yes and not settings.dry_run:
        raise InputError(
            f"--out {target.kind}:... writes a new namespace in a hosted index (a paid "
            "service, and a namespace others may read); add --yes to write it"
        )
    if target.kind == "upstash":
        refuse_namespace(target)
        return target
    if target.kind == "pinecone":
        refuse_pinecone(target)
        return target
    if target.kind in SERVER:
        refuse_table(target)
        return target
    out = target.folder.resolve()
    src = source_path(settings.store)
    if src is not None:
        real = src.resolve()
        if out == real or out.is_relative_to(real):
            raise InputError(
                f"--out {target.text} is inside the source {src}; repair never writes the "
                "index it reads: pass --out a new folder outside it"
            )
        if real.is_relative_to(out):
            raise InputError(
                f"--out {target.text} holds the source {src}; pass --out a new folder that "
                "does not contain it"
            )
    if out.exists() and not settings.dry_run:
        raise InputError(
            f"--out {target.text}: {target.folder} already exists; pass a new folder or remove it"
        )
    return target


__all__ = ["refuse", "source_path"]
