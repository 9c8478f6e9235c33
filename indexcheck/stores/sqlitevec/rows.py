"""sqlite-vec, rows: the SQL that pages, fetches and searches each layout, and the blob
decoding (sqlite-vec and llm both store float32 little-endian blobs).

Every statement is built from identifiers read out of the file's own schema, quoted;
values (page bounds, ids, query vectors, filter values) are parameters.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...filters.sqlitevec import SqliteFilter
from ...filters.sqlitevec import quote_ident as q
from ..base import pack_rows
from .layout import Layout

#: the most neighbours one vec0 KNN query returns (sqlite-vec 0.1.x)
MAX_K = 4096


def decode(blobs: list[Any], dimension: int) -> tuple[np.ndarray, np.ndarray]:
    """float32 little-endian blobs -> (float32 (n, d), dims int32 (n,)); None -> dims 0."""
    n = len(blobs)
    size = 4 * dimension
    if n and dimension and all(isinstance(b, bytes) and len(b) == size for b in blobs):
        flat = np.frombuffer(b"".join(blobs), dtype="<f4").astype(np.float32)
        return flat.reshape(n, dimension), np.full(n, dimension, dtype=np.int32)
    rows = [
        None if not isinstance(b, bytes) else np.frombuffer(b[: len(b) // 4 * 4], dtype="<f4")
        for b in blobs
    ]
    return pack_rows(rows, dimension)


def _opt(alias: str, col: str | None) -> str:
    return f"{alias}.{q(col)}" if col else "NULL"


def extra_columns(lay: Layout) -> list[str]:
    """vec0 metadata, partition and auxiliary columns read into each row's metadata."""
    skip = {lay.id, lay.text, lay.metadata, lay.key}
    return [c for c in (*lay.columns, *lay.aux) if c not in skip]


def page_sql(lay: Layout, where: str | None = None) -> str:
    """``(page key, id, vector, text, metadata, *extra)`` rows after ``?`` (the last page
    key), at most ``?`` of them; llm pages take the collection id first."""
    cond = f" AND ({where})" if where else ""
    if lay.kind == "langchain":
        assert lay.vec is not None
        return (
            f"SELECT e.rowid, e.rowid, v.{q(lay.vector)}, {_opt('e', lay.text)}, "
            f"{_opt('e', lay.metadata)} FROM {q(lay.rows)} e LEFT JOIN {q(lay.vec)} v "
            f"ON v.rowid = e.rowid WHERE e.rowid > ?{cond} ORDER BY e.rowid LIMIT ?"
        )
    if lay.kind == "llm":
        return (
            f"SELECT rowid, id, embedding, {_opt('e', lay.text)}, {_opt('e', lay.metadata)} "
            f"FROM embeddings e WHERE collection_id = ? AND rowid > ?{cond} "
            "ORDER BY rowid LIMIT ?"
        )
    assert lay.vec is not None
    extra = "".join(f", v.{q(c)}" for c in extra_columns(lay))
    join = "r.rowid" if lay.key_is_int else "r.id"
    return (
        f"SELECT r.rowid, v.{q(lay.id)}, v.{q(lay.vector)}, {_opt('v', lay.text)}, "
        f"{_opt('v', lay.metadata)}{extra} FROM {q(lay.vec + '_rowids')} r "
        f"JOIN {q(lay.vec)} v ON v.{q(lay.key)} = {join} WHERE r.rowid > ?{cond} "
        "ORDER BY r.rowid LIMIT ?"
    )


def orphan_sql(lay: Layout) -> str:
    """LangChain layout: vec0 rows whose side-table row is gone, in the page shape."""
    assert lay.vec is not None
    return (
        f"SELECT r.rowid, r.rowid, v.{q(lay.vector)}, NULL, NULL FROM "
        f"{q(lay.vec + '_rowids')} r JOIN {q(lay.vec)} v ON v.rowid = r.rowid "
        f"WHERE r.rowid > ? AND NOT EXISTS (SELECT 1 FROM {q(lay.rows)} e "
        "WHERE e.rowid = r.rowid) ORDER BY r.rowid LIMIT ?"
    )


def count_sql(lay: Layout) -> str:
    """The number of rows a scan yields (one value)."""
    if lay.kind == "llm":
        return "SELECT count(*) FROM embeddings WHERE collection_id = ?"
    assert lay.vec is not None
    rowids = q(lay.vec + "_rowids")
    if lay.kind == "vec0":
        return f"SELECT count(*) FROM {rowids}"
    return (
        f"SELECT (SELECT count(*) FROM {q(lay.rows)}) + (SELECT count(*) FROM {rowids} r "
        f"WHERE NOT EXISTS (SELECT 1 FROM {q(lay.rows)} e WHERE e.rowid = r.rowid))"
    )


def fetch_sql(lay: Layout, n: int) -> str:
    """``(id, vector, text)`` of the rows whose id is one of ``n`` parameters (after the
    collection id for llm)."""
    marks = ", ".join("?" * n)
    if lay.kind == "langchain":
        assert lay.vec is not None
        return (
            f"SELECT v.rowid, v.{q(lay.vector)}, {_opt('e', lay.text)} FROM {q(lay.vec)} v "
            f"LEFT JOIN {q(lay.rows)} e ON e.rowid = v.rowid WHERE v.rowid IN ({marks})"
        )
    if lay.kind == "llm":
        return (
            f"SELECT id, embedding, {_opt('e', lay.text)} FROM embeddings e "
            f"WHERE collection_id = ? AND id IN ({marks})"
        )
    assert lay.vec is not None
    return (
        f"SELECT v.{q(lay.id)}, v.{q(lay.vector)}, {_opt('v', lay.text)} FROM {q(lay.vec)} v "
        f"WHERE v.{q(lay.id)} IN ({marks})"
    )


def id_params(lay: Layout, ids: list[str]) -> list[Any]:
    """The id values as stored: integers for rowid/integer keys (others cannot match)."""
    if not (lay.kind == "langchain" or (lay.key_is_int and lay.id == lay.key)):
        return list(ids)
    out: list[Any] = []
    for i in ids:
        try:
            out.append(int(i))
        except ValueError:
            continue
    return out


def knn_sql(lay: Layout, native: SqliteFilter | None) -> tuple[str, list[Any]]:
    """sqlite-vec's own KNN: ``(id, distance)`` nearest first for params ``(vector, k,
    *filter params)``, with the filter's vec0 constraints and JSON pre-filter."""
    assert lay.vec is not None
    idcol = "v.rowid" if lay.kind == "langchain" else f"v.{q(lay.id)}"
    sql = (
        f"SELECT {idcol}, v.distance FROM {q(lay.vec)} v WHERE v.{q(lay.vector)} MATCH ? AND k = ?"
    )
    params: list[Any] = []
    if native is not None:
        for part in native.columns:
            sql += f" AND v.{part}"
        params.extend(native.column_params)
        if native.json is not None:
            key = "rowid" if lay.kind == "langchain" else q(lay.key)
            sql += f" AND v.{key} IN (SELECT {key} FROM {q(lay.rows)} WHERE {native.json})"
            params.extend(native.json_params)
    return sql + " ORDER BY v.distance", params
