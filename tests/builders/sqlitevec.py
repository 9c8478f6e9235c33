"""Test-only writers of sqlite-vec files, as users make them.

- :func:`langchain` runs LangChain's own ``SQLiteVec.add_texts`` (its defaults: table
  ``langchain``, L2 vec0 table ``langchain_vec`` filled by its trigger). This Python's
  ``sqlite3`` cannot load extensions, so the connection handed to LangChain is apsw's,
  behind the three sqlite3 habits LangChain relies on (``commit``, dict-like rows).
- :func:`llm_collection` writes simonw/llm's ``collections``/``embeddings`` schema with
  plain ``sqlite3`` (float32 little-endian blobs, as ``llm embed-multi --store`` does).
- :func:`build` writes a plain vec0 table of one's own (the shape the shared backend
  tests call: ``build(root, ids, vectors, texts, metric)``).
"""

from __future__ import annotations

import json
import sqlite3
import struct
from pathlib import Path
from typing import Any

import numpy as np

#: vec0 distance_metric per the metric names the shared tests use
METRICS = {"l2": "l2", "cosine": "cosine", "l1": "l1"}


def apsw_connection(path: Path) -> Any:
    """An apsw connection with sqlite-vec loaded that LangChain's SQLiteVec accepts."""
    import apsw
    import sqlite_vec

    class Row(dict[str, Any]):
        pass

    class Connection(apsw.Connection):  # type: ignore[misc]
        def commit(self) -> None:  # apsw runs in autocommit mode
            return None

    conn = Connection(str(path))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.enable_load_extension(False)

    def row(cursor: Any, values: tuple[Any, ...]) -> Row:
        return Row(zip([d[0] for d in cursor.get_description()], values, strict=True))

    conn.row_trace = row
    return conn


def langchain(
    path: Path,
    texts: list[str],
    metadatas: list[dict[str, Any]] | None,
    embedding: Any,
    table: str = "langchain",
) -> str:
    """Write ``path`` with LangChain's SQLiteVec over ``embedding``; return the spec."""
    from langchain_community.vectorstores import SQLiteVec

    conn = apsw_connection(path)
    try:
        store = SQLiteVec(table=table, connection=conn, embedding=embedding, db_file=str(path))
        store.add_texts(texts, metadatas=metadatas)
    finally:
        conn.close()
    return f"sqlitevec:{path}?table={table}"


def llm_collection(
    path: Path,
    name: str,
    ids: list[str],
    vectors: np.ndarray,
    texts: list[str] | None,
    metadatas: list[dict[str, Any]] | None = None,
    model: str = "hash-32",
) -> str:
    """Write an llm collection (llm's migrations' schema); return its spec."""
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE IF NOT EXISTS collections (id INTEGER PRIMARY KEY, name TEXT, model TEXT);
        CREATE UNIQUE INDEX IF NOT EXISTS idx_collections_name ON collections (name);
        CREATE TABLE IF NOT EXISTS embeddings (
            collection_id INTEGER REFERENCES collections(id), id TEXT, embedding BLOB,
            content TEXT, content_blob BLOB, content_hash BLOB, metadata TEXT, updated INTEGER,
            PRIMARY KEY (collection_id, id));
        """
    )
    cid = db.execute("INSERT INTO collections (name, model) VALUES (?, ?)", (name, model)).lastrowid
    rows = []
    for i, vid in enumerate(ids):
        vec = [float(x) for x in vectors[i]]
        blob = struct.pack("<" + "f" * len(vec), *vec)
        meta = json.dumps(metadatas[i]) if metadatas is not None else None
        rows.append((cid, vid, blob, texts[i] if texts else None, meta, 1700000000 + i))
    db.executemany(
        "INSERT INTO embeddings (collection_id, id, embedding, content, metadata, updated) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        rows,
    )
    db.commit()
    db.close()
    return f"sqlitevec:{path}?collection={name}"


def build(
    root: Path,
    ids: list[str],
    vectors: np.ndarray,
    texts: list[str] | None,
    metric: str = "l2",
    *,
    table: str = "chunks",
    metadatas: list[dict[str, Any]] | None = None,
    columns: dict[str, str] | None = None,
) -> str:
    """Write ``root/vec.db`` with a vec0 table ``table(id text primary key, embedding,
    *columns, +text)``; ``columns`` are vec0 metadata columns filled from ``metadatas``."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / "vec.db"
    conn = apsw_connection(path)
    d = int(vectors.shape[1])
    cols = columns or {}
    defs = "".join(f", {c} {t}" for c, t in cols.items())
    conn.execute(
        f"CREATE VIRTUAL TABLE {table} USING vec0(id text primary key, "
        f"embedding float[{d}] distance_metric={METRICS[metric]}{defs}, +text text)"
    )
    names = ", ".join(["id", "embedding", *cols, "text"])
    marks = ", ".join("?" * (3 + len(cols)))
    with conn:
        for i, vid in enumerate(ids):
            meta = metadatas[i] if metadatas else {}
            extra = [meta[c] for c in cols]
            vec = np.ascontiguousarray(vectors[i], dtype="<f4").tobytes()
            conn.execute(
                f"INSERT INTO {table} ({names}) VALUES ({marks})",
                (vid, vec, *extra, texts[i] if texts else None),
            )
    conn.close()
    return f"sqlitevec:{path}?table={table}"
