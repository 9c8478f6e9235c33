"""pgvector: the catalog lookups and SQL statements the store sends (all SELECT/EXPLAIN).

Split from ``pgvector.py`` by job: this module knows the catalog and builds statements;
the store class there connects, translates errors and batches.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import BackendUnavailableError, InputError
from ..base import BaseStore, pack_rows
from ..metric_table import scores_of

if TYPE_CHECKING:
    import psycopg
    from psycopg import sql

BACKEND = "pgvector"

#: metric -> its pgvector distance operator
OPERATORS = {"cosine": "<=>", "l2": "<->", "ip": "<#>", "l1": "<+>"}
#: metric -> (operator, score formula)
METRICS: dict[str, tuple[str, str]] = {
    metric: (OPERATORS[metric], score.formula) for metric, score in scores_of("pgvector").items()
}

#: operator class -> metric
OPCLASSES: dict[str, str] = {
    f"{typ}_{name}_ops": metric
    for typ in ("vector", "halfvec")
    for name, metric in (("cosine", "cosine"), ("l2", "l2"), ("ip", "ip"), ("l1", "l1"))
}

_SECRET_PARAMS = {"password", "sslpassword"}
_TEXT_CANDIDATES = ("content", "text", "document", "chunk", "page_content")
_VECTOR_TYPES = {"vector": ">f4", "halfvec": ">f2"}
_INT_TYPES = {"int2": 2**15, "int4": 2**31, "int8": 2**63}
_TEXT_TYPES = {"text", "varchar", "name"}
_INT_RE = re.compile(r"-?[0-9]+")
FETCH_BATCH = 500


def decode_vectors(
    blobs: Sequence[bytes | None], dimension: int, dtype: str = ">f4"
) -> tuple[np.ndarray, np.ndarray]:
    """Decode pgvector binary values into ``(vectors float32 (n, d), dims int32 (n,))``.

    Each blob is int16 dim, int16 unused, then dim big-endian floats (``>f4`` for
    ``vector``, ``>f2`` for ``halfvec``); None (SQL NULL) gives a zero row with dims 0.
    """
    n = len(blobs)
    width = np.dtype(dtype).itemsize
    full = 4 + width * dimension
    whole = [b for b in blobs if b is not None and len(b) == full]
    if n and dimension and len(whole) == n:
        raw = np.frombuffer(b"".join(whole), dtype=np.uint8).reshape(n, full)
        vecs = np.ascontiguousarray(raw[:, 4:]).view(dtype).astype(np.float32)
        return vecs, np.full(n, dimension, dtype=np.int32)
    rows: list[np.ndarray | None] = []
    for b in blobs:
        if b is None:
            rows.append(None)
            continue
        dim = int.from_bytes(b[:2], "big", signed=True)
        rows.append(np.frombuffer(b, dtype=dtype, count=dim, offset=4))
    return pack_rows(rows, dimension)


def vector_literal(vec: np.ndarray) -> str:
    """The text form ``'[x,y,...]'`` of a float32 vector, exact (repr of each float)."""
    return "[" + ",".join(map(repr, vec.astype(np.float32).tolist())) + "]"


class PgCatalog(BaseStore):
    """Catalog lookups and statement building; :class:`PgvectorStore` adds the rest."""

    _conn: psycopg.Connection[Any] | None
    table_name: str
    _psycopg: Any
    _schema: str | None
    _id_col: str
    _vec_col: str | None
    _text_col: str | None
    _metric_param: str | None
    _dbname: str
    _where: str
    _qualified: str
    _dimension: int
    _id_type: str
    _vec_type: str
    _op: str
    _relkind: str
    _table: sql.Composable

    @property
    def conn(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            raise BackendUnavailableError(
                f"the pgvector store for {self._where} is closed; open it again"
            )
        return self._conn

    def _resolve(self) -> None:
        """Find the table, its columns, id type, dimension and ANN indexes."""
        from psycopg import sql

        self._qualified = self.table_name
        with self._translating("reading the catalog"):
            if self._schema:
                ident = sql.Identifier(self._schema, self.table_name)
            elif "." in self.table_name:
                ident = sql.Identifier(*self.table_name.split(".", 1))
            else:
                ident = sql.Identifier(self.table_name)
            quoted = ident.as_string(self.conn)
            row = self.conn.execute(
                "SELECT c.oid::int8, n.nspname, c.relname, c.relkind FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass(%s)",
                (quoted,),
            ).fetchone()
            if row is None:
                raise InputError(self._missing_table_message())
            self._oid, nsp, rel, self._relkind = int(row[0]), row[1], row[2], row[3]
            self._qualified, self._nsp = f"{nsp}.{rel}", nsp
            self._table = sql.Identifier(nsp, rel)
            cols = self.conn.execute(
                "SELECT a.attname, a.attnum, t.typname, a.atttypmod, "
                "format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
                "JOIN pg_type t ON t.oid = a.atttypid "
                "WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped "
                "ORDER BY a.attnum",
                (self._oid,),
            ).fetchall()
        columns = {c[0]: (int(c[1]), str(c[2]), int(c[3]), str(c[4])) for c in cols}
        self._columns = columns
        listing = ", ".join(f"{c[0]} {c[4]}" for c in cols)
        vector_cols = [c[0] for c in cols if c[2] in _VECTOR_TYPES]

        if self._vec_col is None:
            if "embedding" in columns or len(vector_cols) != 1:
                self._vec_col = "embedding"
            else:
                self._vec_col = vector_cols[0]
        if self._vec_col not in columns:
            raise InputError(
                f"pgvector table {self._qualified} has no column '{self._vec_col}' (columns: "
                f"{listing}); pass &vector=COLUMN naming its vector column"
            )
        attnum, vtype, typmod, vformat = columns[self._vec_col]
        if vtype not in _VECTOR_TYPES:
            raise InputError(
                f"pgvector column {self._qualified}.{self._vec_col} is {vformat}, not vector "
                "or halfvec; pass &vector=COLUMN naming a vector or halfvec column"
            )
        self._vec_attnum, self._vec_type = attnum, vtype
        if not getattr(self, "_id_given", True):
            # the frameworks' own layouts: LangChain PGVectorStore keys rows by
            # langchain_id (its id column), LlamaIndex by node_id (id is a bigserial)
            for col in ("langchain_id", "node_id"):
                if col in columns:
                    self._id_col = col
                    break
        if self._id_col not in columns:
            raise InputError(
                f"pgvector table {self._qualified} has no id column '{self._id_col}' (columns: "
                f"{listing}); pass &id=COLUMN"
            )
        self._id_type, self._id_format = columns[self._id_col][1], columns[self._id_col][3]
        if self._text_col is not None and self._text_col not in columns:
            raise InputError(
                f"pgvector table {self._qualified} has no text column '{self._text_col}' "
                f"(columns: {listing}); pass &text=COLUMN or leave it out"
            )
        if self._text_col is None:
            self._text_col = next((c for c in _TEXT_CANDIDATES if c in columns), None)

        with self._translating("reading the catalog"):
            if typmod > 0:
                self._dimension = typmod
            else:
                got = self.conn.execute(
                    sql.SQL(
                        "SELECT vector_dims({v}) FROM {t} WHERE {v} IS NOT NULL LIMIT 1"
                    ).format(v=sql.Identifier(self._vec_col), t=self._table)
                ).fetchone()
                self._dimension = int(got[0]) if got else 0
            self._indexes = self.conn.execute(
                "SELECT ic.relname, am.amname, opc.opcname, i.indisvalid AND i.indisready, "
                "i.indpred IS NOT NULL FROM pg_index i "
                "JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_am am ON am.oid = ic.relam "
                "CROSS JOIN LATERAL unnest(i.indkey::int2[], i.indclass::oid[]) "
                "AS k(attnum, opclass) JOIN pg_opclass opc ON opc.oid = k.opclass "
                "WHERE i.indrelid = %s AND k.attnum = %s AND am.amname IN ('hnsw', 'ivfflat') "
                "ORDER BY am.amname = 'hnsw' DESC, ic.relname",
                (self._oid, attnum),
            ).fetchall()
            uniq = self.conn.execute(
                "SELECT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = %s AND i.indisunique "
                "AND i.indnkeyatts = 1 AND i.indkey[0] = %s AND i.indpred IS NULL)",
                (self._oid, columns[self._id_col][0]),
            ).fetchone()
            self._id_unique = bool(uniq and uniq[0])
            ext = self.conn.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()
            self._pgvector_version = str(ext[0]) if ext else None

        usable = [ix for ix in self._indexes if ix[3] and not ix[4] and ix[2] in OPCLASSES]
        if self._metric_param is not None:
            self.metric = self._metric_param
            match = [ix for ix in usable if OPCLASSES[ix[2]] == self.metric]
            self._index = match[0] if match else None
            self._metric_source = "spec (&metric= or &operator=)"
        elif usable:
            self._index = usable[0]
            self.metric = OPCLASSES[self._index[2]]
            self._metric_source = f"opclass {self._index[2]} of index {self._index[0]}"
        else:
            self._index = None
            self.metric = "cosine"
            self._metric_source = (
                "default: no HNSW/IVFFlat index on the column; pass &metric= or "
                "&operator= (<=>, <->, <#>) to match the application's query"
            )
        self._op = METRICS[self.metric][0]

    def _missing_table_message(self) -> str:
        """Say which tables with vector columns exist, to help fix ?table=."""
        try:
            rows = self.conn.execute(
                "SELECT n.nspname || '.' || c.relname || '(' || a.attname || ')' "
                "FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "JOIN pg_type t ON t.oid = a.atttypid WHERE t.typname IN ('vector', 'halfvec') "
                "AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND a.attnum > 0 "
                "AND NOT a.attisdropped AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
                "ORDER BY 1 LIMIT 11"
            ).fetchall()
        except self._psycopg.Error:
            rows = []
        where = f" in schema '{self._schema}'" if self._schema else ""
        hint = (
            "tables with vector columns: "
            + ", ".join(r[0] for r in rows[:10])
            + (", ..." if len(rows) > 10 else "")
            if rows
            else "no table in this database has a vector column"
        )
        return (
            f"pgvector table '{self.table_name}'{where} does not exist in database "
            f"'{self._dbname}' at {self._where} ({hint}); fix ?table= (and &schema=)"
        )

    # ---- SQL pieces ------------------------------------------------------------------

    def _rows_filter(self) -> sql.Composable:
        """The WHERE condition selecting the store's rows (``pgvector_rows`` narrows it)."""
        from psycopg import sql

        return sql.SQL("TRUE")

    def _cols(self) -> sql.Composable:
        from psycopg import sql

        # aliased: an output column named like the id column would capture ORDER BY id
        parts: list[sql.Composable] = [
            sql.SQL("{}::text AS ic_id").format(sql.Identifier(self._id_col)),
            sql.SQL("{} AS ic_vec").format(sql.Identifier(self._vec_col or "")),
        ]
        if self._text_col:
            parts.append(sql.SQL("{}::text AS ic_text").format(sql.Identifier(self._text_col)))
        return sql.SQL(", ").join(parts)

    def _knn_sql(
        self, k: int, exact: bool = False, extra: sql.Composable | None = None
    ) -> sql.Composed:
        """The k-NN statement; ``exact`` skips rows of another dimension (which would make
        the distance operator fail) and so can never use the ANN index; ``extra`` is a
        metadata filter's parameterized condition (its values follow the query vector)."""
        from psycopg import sql

        rows = self._rows_filter()
        if extra is not None:
            rows = sql.SQL("{} AND {}").format(rows, extra)
        where: sql.Composable = sql.SQL(" WHERE {f}").format(f=rows)
        if exact:
            where = sql.SQL(" WHERE vector_dims({v}) = {d} AND {f}").format(
                v=sql.Identifier(self._vec_col or ""),
                d=sql.Literal(self._dimension),
                f=rows,
            )
        return sql.SQL(
            "SELECT {id}::text AS ic_id, {v} {op} %s::{vt} AS ic_score FROM {t}{w} "
            "ORDER BY ic_score LIMIT {k}"
        ).format(
            id=sql.Identifier(self._id_col),
            v=sql.Identifier(self._vec_col or ""),
            op=sql.SQL(self._op),
            vt=sql.SQL(self._vec_type),
            t=self._table,
            w=where,
            k=sql.Literal(int(k)),
        )

    # ---- Protocol --------------------------------------------------------------------

    def _plan_node(self, k: int = 10, native: Any = None) -> str:
        """How the server runs query() for ``k`` results (EXPLAIN, never ANALYZE):
        'Index Scan using X' or 'Seq Scan'; ``native`` a filter's ``(condition, params)``."""
        probe = vector_literal(np.ones(self._dimension, dtype=np.float32))
        from psycopg import sql

        extra, params = native if native is not None else (None, [])
        plan = self.conn.execute(
            sql.SQL("EXPLAIN (FORMAT JSON) ") + self._knn_sql(k, extra=extra), (probe, *params)
        ).fetchone()
        nodes: list[dict[str, Any]] = [plan[0][0]["Plan"]] if plan else []
        while nodes:
            node = nodes.pop(0)
            if node.get("Node Type") in ("Index Scan", "Index Only Scan"):
                return f"{node['Node Type']} using {node.get('Index Name')}"
            if node.get("Node Type") == "Seq Scan":
                return "Seq Scan"
            nodes.extend(node.get("Plans", []))
        return "unknown"

    def plan_for(self, k: int, filter: Any = None) -> str:
        """The plan PostgreSQL picks for a query of depth ``k`` (EXPLAIN without ANALYZE,
        read-only), under a portable metadata ``filter`` when given: 'Index Scan using X'
        runs through the ANN index, anything else ('Seq Scan', a sort) is exact."""
        if not self._dimension:
            return "empty"
        native = None if filter is None else self.native_filter(filter)
        with self._translating("explaining the query plan"):
            return self._plan_node(int(k), native)

    def _id_filter(self, ids: Sequence[str]) -> tuple[sql.Composable, Any]:
        """A WHERE clause matching ``ids`` that keeps the id index usable, and its param."""
        from psycopg import sql

        col = sql.Identifier(self._id_col)
        if self._id_type in _INT_TYPES:
            bound = _INT_TYPES[self._id_type]
            ints = [int(s) for s in ids if _INT_RE.fullmatch(s) and -bound <= int(s) < bound]
            return sql.SQL("{} = ANY(%s::int8[])").format(col), ints
        if self._id_type == "uuid":
            uuids: list[uuid.UUID] = []
            for s in ids:
                try:
                    uuids.append(uuid.UUID(s))
                except ValueError:
                    continue
            return sql.SQL("{} = ANY(%s::uuid[])").format(col), uuids
        if self._id_type in _TEXT_TYPES:
            return sql.SQL("{} = ANY(%s::text[])").format(col), list(ids)
        return sql.SQL("{}::text = ANY(%s::text[])").format(col), list(ids)

    def fingerprint(self) -> str:
        """sha256 prefix of (count, non-NULL vectors, sum of id hashes, sum of xmin)."""
        from psycopg import sql

        xmin = sql.SQL(", sum(xmin::text::int8)") if self._relkind != "v" else sql.SQL("")
        with self._translating("computing the fingerprint"):
            row = self.conn.execute(
                sql.SQL(
                    "SELECT count(*), count({v}), sum(hashtextextended({id}::text, 0)){x} "
                    "FROM {t} WHERE {f}"
                ).format(
                    f=self._rows_filter(),
                    v=sql.Identifier(self._vec_col or ""),
                    id=sql.Identifier(self._id_col),
                    x=xmin,
                    t=self._table,
                )
            ).fetchone()
        text = f"{self._qualified}|{self._dimension}|{row}"
        return "pgvector:" + hashlib.sha256(text.encode()).hexdigest()[:16]
