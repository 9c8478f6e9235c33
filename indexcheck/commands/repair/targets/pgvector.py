"""A new pgvector table in the source's database (``--out pgvector:DSN?table=NEW``): written
as a staging table (``NEW__indexcheck_<token>``), a batch a transaction, then renamed to
``NEW`` in one transaction, or dropped when anything fails; nothing else in the database is
touched. Columns: a pgvector source's id, vector and text column names (else ``id``,
``embedding``, ``content``) and ``metadata`` jsonb."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

from ....errors import InputError
from ....stores.pgvector.connect import Target
from ....stores.targets import TargetSpec
from .protocol import Batch, Source


def connect(t: Target) -> Any:
    import psycopg

    kwargs: dict[str, Any] = {**t.libpq, "password": t.password}
    return psycopg.connect(t.location, **kwargs)


def exists(conn: Any, t: Target, table: str) -> bool:
    """The relation ``table`` (in ``t.schema``, else the search path) exists."""
    from psycopg import sql

    name = sql.Identifier(*([t.schema] if t.schema else []), table).as_string(conn)
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()
    return bool(row and row[0])


class PgvectorWriter:
    """Writes table ``target.table`` through a staging table; see the module docstring."""

    def __init__(self, spec: TargetSpec, source: Source) -> None:
        self.t: Target = spec.names
        d = source.details if source.kind == "pgvector" else {}
        self.idcol = str(d.get("id_column") or "id")
        self.vcol = str(d.get("vector_column") or "embedding")
        self.textcol = str(d.get("text_column") or "content")
        self.metric = source.metric if source.metric in ("cosine", "l2", "ip") else "cosine"
        self.staging = f"{self.t.table[:40]}__indexcheck_{secrets.token_hex(4)}"
        self._conn: Any = None

    def _ident(self, table: str) -> Any:
        from psycopg import sql

        return sql.Identifier(*([self.t.schema] if self.t.schema else []), table)

    def open(self, folder: Path, dimension: int) -> None:
        from psycopg import sql

        self._conn = connect(self.t)
        cols = sql.SQL("{i} text PRIMARY KEY, {v} vector({d}), {c} text, metadata jsonb").format(
            i=sql.Identifier(self.idcol), v=sql.Identifier(self.vcol), d=sql.Literal(dimension),
            c=sql.Identifier(self.textcol),
        )  # fmt: skip
        self._conn.execute(sql.SQL("CREATE TABLE {} ({})").format(self._ident(self.staging), cols))
        self._conn.commit()

    def write(self, batch: Batch) -> None:
        from psycopg import sql

        q = sql.SQL("COPY {} ({}, {}, {}, metadata) FROM STDIN").format(
            self._ident(self.staging), sql.Identifier(self.idcol), sql.Identifier(self.vcol),
            sql.Identifier(self.textcol),
        )  # fmt: skip
        with self._conn.cursor().copy(q) as cp:
            for cid, v, t, m in batch.rows():
                vec = "[" + ",".join(map(repr, v.tolist())) + "]"
                cp.write_row((cid, vec, t, json.dumps(m, ensure_ascii=False, default=str)))
        self._conn.commit()

    def commit(self) -> None:
        from psycopg import sql

        if exists(self._conn, self.t, self.t.table):
            raise InputError(
                f"table {self.t.table} appeared in {self.t.dbname} while repair wrote it; "
                "nothing was renamed: pass another ?table="
            )
        self._conn.execute(
            sql.SQL("ALTER TABLE {} RENAME TO {}").format(
                self._ident(self.staging), sql.Identifier(self.t.table)
            )
        )
        self._conn.commit()
        self._conn.close()
        self._conn = None

    def abort(self) -> None:
        from psycopg import sql

        if self._conn is None:
            return
        try:
            self._conn.rollback()
            self._conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(self._ident(self.staging)))
            self._conn.commit()
        finally:
            self._conn.close()
            self._conn = None

    def shown(self) -> str:
        """:meth:`proof` without the password (safe to print and to write in the JSON)."""
        safe = self.t.spec.split(":", 1)[1].split("?", 1)[0]
        return self.proof(Path(".")).replace(self.t.location, safe, 1)

    def proof(self, out: Path) -> str:
        t = self.t
        extra = "".join(f"&{k}={v}" for k, v in t.libpq.items())
        schema = f"&schema={t.schema}" if t.schema else ""
        return (
            f"pgvector:{t.location}?table={t.table}{schema}&id={self.idcol}&vector={self.vcol}"
            f"&text={self.textcol}&metric={self.metric}{extra}"
        )


__all__ = ["PgvectorWriter", "connect", "exists"]
