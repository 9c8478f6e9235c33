"""Test-only writer: a pgvector table (plus an HNSW/IVFFlat index) in the test server.

``build(root, ids, vectors, texts, metric)`` creates a fresh table in the process-wide
server from ``tests/pg_support.py`` (or the one named by ``dsn=``) and returns the spec
``pgvector:postgresql://postgres:<pw>@127.0.0.1:<port>/indexcheck?table=<name>``.
"""

from __future__ import annotations

import pathlib
import uuid
from typing import Any

import numpy as np

OPCLASS = {"cosine": "vector_cosine_ops", "l2": "vector_l2_ops", "ip": "vector_ip_ops"}


def vector_text(vec: np.ndarray) -> str:
    return "[" + ",".join(map(repr, np.asarray(vec, dtype=np.float32).tolist())) + "]"


def build(
    root: pathlib.Path,
    ids: list[str],
    vectors: np.ndarray,
    texts: list[str] | None,
    metric: str = "cosine",
    *,
    dsn: str | None = None,
    table: str | None = None,
    index: str | None = "hnsw",
    id_type: str = "text",
    primary_key: bool = True,
    typed_dimension: bool = True,
    text_column: str = "content",
    **kw: Any,
) -> str:
    """Write the rows into a new table and return its store spec.

    ``vectors`` float32 (n, d), stored as given; ``metric`` picks the index opclass
    (cosine/l2/ip); ``index`` is "hnsw", "ivfflat" or None (no ANN index, and then the
    spec carries ``&metric=``); ``id_type`` the SQL type of the id column. ``root`` is
    unused (the data lives in the server).
    """
    import psycopg
    from psycopg import sql

    if dsn is None:
        from tests import pg_support

        dsn = pg_support.shared_server().dsn
    if metric not in OPCLASS:
        raise ValueError(f"metric must be one of {sorted(OPCLASS)}")
    vectors = np.asarray(vectors, dtype=np.float32)
    n, d = vectors.shape
    table = table or f"t_{uuid.uuid4().hex[:10]}"
    vtype = f"vector({d})" if typed_dimension else "vector"
    pk = " PRIMARY KEY" if primary_key else ""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE TABLE {t} (id {it}{pk}, embedding {vt}, {tc} text)").format(
                t=sql.Identifier(table),
                it=sql.SQL(id_type),
                pk=sql.SQL(pk),
                vt=sql.SQL(vtype),
                tc=sql.Identifier(text_column),
            )
        )
        copy_sql = sql.SQL("COPY {t} (id, embedding, {tc}) FROM STDIN").format(
            t=sql.Identifier(table), tc=sql.Identifier(text_column)
        )
        with conn.cursor().copy(copy_sql) as cp:
            for i in range(n):
                cp.write_row((ids[i], vector_text(vectors[i]), texts[i] if texts else None))
        if index is not None:
            opts = "WITH (lists = 4)" if index == "ivfflat" else ""
            conn.execute(
                sql.SQL("CREATE INDEX {ix} ON {t} USING {am} (embedding {oc}) {opts}").format(
                    ix=sql.Identifier(f"{table}_{index}"),
                    t=sql.Identifier(table),
                    am=sql.SQL(index),
                    oc=sql.SQL(OPCLASS[metric]),
                    opts=sql.SQL(opts),
                )
            )
        conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(table)))
    base = dsn.split("?", 1)[0]
    spec = f"pgvector:{base}?table={table}"
    if index is None:
        spec += f"&metric={metric}"
    return spec
