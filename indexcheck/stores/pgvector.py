"""PostgreSQL + pgvector store, read-only, through psycopg 3.

Spec::

    pgvector:postgresql://user[:password]@host:port/db?table=T
        [&schema=public&id=id&vector=embedding&text=content&metric=cosine|l2|ip|l1]
        [&ef_search=N&probes=N] [&sslmode=...&<other libpq options>]

The password may also come from ``PGPASSWORD`` or ``~/.pgpass`` (libpq reads them); it
never appears in ``spec``, messages or reprs. ``vector`` defaults to ``embedding``, or to
the table's only ``vector``/``halfvec`` column; ``text`` defaults to the first of
content/text/document/chunk/page_content that exists (none: no texts).

Metric and score: taken from the operator class of a valid, non-partial HNSW or IVFFlat
index on the vector column, or from ``&metric=`` (which wins); with neither, cosine is
assumed and ``info().details['metric_source']`` says so. Scores are the operator's own
value, lower is better for all of them:

================  ========  =======  ===========================
opclass           metric    op       score
================  ========  =======  ===========================
vector_cosine_ops cosine    ``<=>``  ``1-cos`` (cosine distance)
vector_l2_ops     l2        ``<->``  ``l2`` (not squared)
vector_ip_ops     ip        ``<#>``  ``-dot`` (negative inner product)
vector_l1_ops     l1        ``<+>``  ``l1`` (pgvector >= 0.7)
================  ========  =======  ===========================

``halfvec`` columns (pgvector >= 0.7) use the ``halfvec_*_ops`` classes and are read in
their binary form (float16, widened to float32); the tests run pgvector 0.6.2, which has
no halfvec, so only the decoder is tested. ``sparsevec`` and ``bit`` are not supported.

Read-only, three ways: the session is ``SET SESSION CHARACTERISTICS AS TRANSACTION READ
ONLY``, every transaction this module opens is ``BEGIN READ ONLY`` (psycopg's
``read_only``), and it only ever sends SELECT, EXPLAIN and SET of search settings. (The
``options=-c default_transaction_read_only=on`` startup parameter is not used because
pgbouncer-style poolers reject it.)

``query`` runs ``ORDER BY col <op> $1 LIMIT k`` as the application would, so an ANN index
is used when the planner picks it (``info().approximate`` is what EXPLAIN shows for k=10;
an HNSW scan returns at most ``hnsw.ef_search`` rows, 40 by default). ``exact_query``
runs the same statement with index scans switched off (``SET LOCAL``) and rows of another
dimension skipped, i.e. a sequential scan and an exact top-k sort in the server. (A
table holding vectors of mixed dimensions makes ``query`` fail in pgvector itself, as
it would for the application: that raises DimensionMismatchError.)

Vectors travel in pgvector's binary format (int16 dim, int16 unused, big-endian float4 or
float2 values): about 15x faster than parsing the ``'[1,2,3]'`` text form with numpy
(20k x 384: 0.11 s against 1.7 s, measured on the test server).

``fingerprint()`` covers the row count, the non-NULL vector count, an order-independent
sum of 64-bit hashes of the ids and the sum of the rows' ``xmin`` (the transaction that
wrote each row version), so any INSERT, UPDATE or DELETE changes it; it reads no vectors
(one scan of the table's row headers). Views have no ``xmin``: there it covers ids only.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit, urlunsplit

import numpy as np

from ..errors import (
    AuthError,
    BackendUnavailableError,
    DimensionMismatchError,
    IndexcheckError,
    InputError,
    MissingDependencyError,
    SpecError,
)
from .base import Fetched, StoreInfo, StoreSpec, VectorBatch, empty_result, pack_rows

if TYPE_CHECKING:
    import psycopg
    from psycopg import sql

    from . import StoreOptions

BACKEND = "pgvector"

#: metric -> (operator, score formula)
METRICS: dict[str, tuple[str, str]] = {
    "cosine": ("<=>", "1-cos"),
    "l2": ("<->", "l2"),
    "ip": ("<#>", "-dot"),
    "l1": ("<+>", "l1"),
}

#: operator class -> metric
OPCLASSES: dict[str, str] = {
    f"{typ}_{name}_ops": metric
    for typ in ("vector", "halfvec")
    for name, metric in (("cosine", "cosine"), ("l2", "l2"), ("ip", "ip"), ("l1", "l1"))
}

_OWN_PARAMS = {"table", "schema", "id", "vector", "text", "metric", "ef_search", "probes"}
_SECRET_PARAMS = {"password", "sslpassword"}
_TEXT_CANDIDATES = ("content", "text", "document", "chunk", "page_content")
_VECTOR_TYPES = {"vector": ">f4", "halfvec": ">f2"}
_INT_TYPES = {"int2": 2**15, "int4": 2**31, "int8": 2**63}
_TEXT_TYPES = {"text", "varchar", "name"}
_INT_RE = re.compile(r"-?[0-9]+")
FETCH_BATCH = 500


def _import_psycopg() -> Any:
    try:
        import psycopg
    except ImportError as err:
        raise MissingDependencyError("the pgvector store", "pgvector", "psycopg[binary]") from err
    return psycopg


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


def _scrub(text: str, secret: str | None) -> str:
    if secret:
        text = text.replace(secret, "***")
    return text


class PgvectorStore:
    """A read-only view of one table with a pgvector column; see the module docstring."""

    has_exact = True

    def __init__(self, parsed: StoreSpec) -> None:
        self._psycopg = _import_psycopg()
        self._conn: psycopg.Connection[Any] | None = None
        self._parse(parsed)
        self._qualified = self.table_name
        self._connect()
        try:
            self._resolve()
        except BaseException:
            self.close()
            raise

    # ---- spec and connection -------------------------------------------------------

    def _parse(self, parsed: StoreSpec) -> None:
        url = parsed.location
        if not url.startswith(("postgresql://", "postgres://")):
            raise SpecError(
                "pgvector spec must look like pgvector:postgresql://user@host:5432/db?table=T; "
                "the location does not start with postgresql://"
            )
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            raise SpecError(
                "pgvector spec has a malformed postgresql:// URL; write it as "
                "postgresql://user@host:5432/db?table=T"
            ) from None  # the ValueError may quote part of the password
        self._password = unquote(parts.password) if parts.password else None
        self._user = unquote(parts.username) if parts.username else "(default user)"
        self._dbname = unquote(parts.path.lstrip("/")) or "(default database)"
        params = dict(parsed.params)
        host = parts.hostname or params.get("host") or "localhost"
        self._where = f"{host}:{port or params.get('port') or 5432}"
        self.table_name = parsed.require("table", "name the table that holds the vectors")
        self._schema = params.get("schema")
        self._id_col = params.get("id", "id")
        self._vec_col = params.get("vector")
        self._text_col = params.get("text")
        metric = params.get("metric")
        if metric is not None and metric.lower() not in METRICS:
            raise SpecError(
                f"pgvector metric '{metric}' is unknown; use one of {', '.join(METRICS)}"
            )
        self._metric_param = metric.lower() if metric else None
        self._search: dict[str, int] = {}
        for key, guc in (("ef_search", "hnsw.ef_search"), ("probes", "ivfflat.probes")):
            if key in params:
                if not params[key].isdigit() or int(params[key]) < 1:
                    raise SpecError(
                        f"pgvector {key} must be a positive integer, not '{params[key]}'"
                    )
                self._search[guc] = int(params[key])
        self._libpq = {k: v for k, v in params.items() if k not in _OWN_PARAMS}
        if "password" in self._libpq:
            self._password = self._libpq.pop("password")
        # the printable spec: no password in the URL, no secret params
        netloc = parts.netloc.rsplit("@", 1)
        hostport = netloc[-1]
        userinfo = netloc[0].split(":", 1)[0] if len(netloc) == 2 else ""
        safe_netloc = f"{userinfo}@{hostport}" if userinfo else hostport
        location = urlunsplit((parts.scheme, safe_netloc, parts.path, "", ""))
        shown = "&".join(f"{k}={v}" for k, v in params.items() if k not in _SECRET_PARAMS)
        self.spec = f"pgvector:{location}" + (f"?{shown}" if shown else "")
        self._location = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))

    def _connect(self) -> None:
        pg = self._psycopg
        kwargs: dict[str, Any] = {"connect_timeout": 10, "application_name": "indexcheck"}
        kwargs.update(self._libpq)
        try:
            conn = pg.connect(self._location, autocommit=True, prepare_threshold=None, **kwargs)
        except pg.OperationalError as err:
            raise self._connect_error(err) from None
        except pg.ProgrammingError as err:
            reason = _scrub(str(err).strip().splitlines()[0], self._password)
            raise SpecError(
                f"pgvector connection options are invalid ({reason}); fix the spec"
            ) from None
        self._conn = conn
        try:
            with self._errors("setting up the session"):
                conn.read_only = True
                conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                for guc, value in self._search.items():
                    conn.execute("SELECT set_config(%s, %s, false)", (guc, str(value)))
        except BaseException:
            self.close()
            raise

    def _connect_error(self, err: Exception) -> IndexcheckError:
        text = _scrub(str(err), self._password)
        low = text.lower()
        user = self._user
        if (
            "password authentication failed" in low
            or "no password supplied" in low
            or "authentication failed" in low
            or "pg_hba.conf" in low
            or ("role" in low and "does not exist" in low)
        ):
            return AuthError(
                f"pgvector at {self._where} refused the credentials of user '{user}'; check "
                "the user and the password (in the spec URL or PGPASSWORD)"
            )
        if "database" in low and "does not exist" in low:
            return InputError(
                f"pgvector at {self._where} has no database '{self._dbname}'; fix the "
                "database name in the spec URL"
            )
        reason = text.strip().splitlines()[0] if text.strip() else type(err).__name__
        reason = reason.split(" failed: ", 1)[-1]
        return BackendUnavailableError(
            f"cannot connect to pgvector at {self._where} ({reason}); check that PostgreSQL "
            "is running there and the host and port in the spec"
        )

    @property
    def conn(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            raise BackendUnavailableError(
                f"the pgvector store for {self._where} is closed; open it again"
            )
        return self._conn

    @contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """Map psycopg errors raised while ``doing`` something to IndexcheckErrors."""
        pg = self._psycopg
        try:
            yield
        except IndexcheckError:
            raise
        except pg.errors.InsufficientPrivilege as err:
            raise AuthError(
                f"pgvector user '{self._user}' may not read {self._qualified} while {doing} "
                f"({_scrub(str(err).splitlines()[0], self._password)}); GRANT SELECT on it"
            ) from None
        except (pg.errors.UndefinedTable, pg.errors.UndefinedColumn) as err:
            raise InputError(
                f"pgvector table {self._qualified} changed while {doing} "
                f"({_scrub(str(err).splitlines()[0], self._password)}); check ?table= and columns"
            ) from None
        except pg.errors.DataException as err:
            if "different vector dimensions" not in str(err):
                raise BackendUnavailableError(
                    f"pgvector at {self._where} returned an error while {doing} "
                    f"({_scrub(str(err).strip().splitlines()[0], self._password)})"
                ) from None
            raise DimensionMismatchError(
                f"pgvector column {self._qualified}.{self._vec_col} holds vectors whose "
                f"dimension is not {self._dimension}, so the server cannot rank them "
                f"({str(err).splitlines()[0]}); fix or delete those rows (exact_query skips them)"
            ) from None
        except pg.OperationalError as err:
            raise BackendUnavailableError(
                f"pgvector at {self._where} failed while {doing} "
                f"({_scrub(str(err).strip().splitlines()[0], self._password)}); retry"
            ) from None
        except pg.Error as err:
            raise BackendUnavailableError(
                f"pgvector at {self._where} returned an error while {doing} "
                f"({_scrub(str(err).strip().splitlines()[0], self._password)})"
            ) from None

    # ---- catalog ---------------------------------------------------------------------

    def _resolve(self) -> None:
        """Find the table, its columns, id type, dimension and ANN indexes."""
        from psycopg import sql

        self._qualified = self.table_name
        with self._errors("reading the catalog"):
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
            self._qualified = f"{nsp}.{rel}"
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

        with self._errors("reading the catalog"):
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
            self._metric_source = "spec (&metric=)"
        elif usable:
            self._index = usable[0]
            self.metric = OPCLASSES[self._index[2]]
            self._metric_source = f"opclass {self._index[2]} of index {self._index[0]}"
        else:
            self._index = None
            self.metric = "cosine"
            self._metric_source = (
                "default: no HNSW/IVFFlat index on the column; pass &metric= to choose"
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

    def _knn_sql(self, k: int, exact: bool = False) -> sql.Composed:
        """The k-NN statement; ``exact`` skips rows of another dimension (which would make
        the distance operator fail) and so can never use the ANN index."""
        from psycopg import sql

        where: sql.Composable = sql.SQL("")
        if exact:
            where = sql.SQL(" WHERE vector_dims({v}) = {d}").format(
                v=sql.Identifier(self._vec_col or ""), d=sql.Literal(self._dimension)
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

    def info(self) -> StoreInfo:
        """Count, dimension, metric and score formula (lower is better), and the plan
        (read afresh on every call: a count, an EXPLAIN and two settings)."""
        from psycopg import sql

        with self._errors("reading table statistics"):
            row = self.conn.execute(
                sql.SQL("SELECT count(*), count({v}) FROM {t}").format(
                    v=sql.Identifier(self._vec_col or ""), t=self._table
                )
            ).fetchone()
            count, non_null = (int(row[0]), int(row[1])) if row else (0, 0)
            plan = self._plan_node() if self._dimension else "empty"
            gucs = self.conn.execute(
                "SELECT current_setting('hnsw.ef_search', true), "
                "current_setting('ivfflat.probes', true), current_setting('server_version')"
            ).fetchone()
        approximate = plan.startswith("Index")
        details: dict[str, Any] = {
            "table": self._qualified,
            "id_column": self._id_col,
            "vector_column": self._vec_col,
            "vector_type": self._vec_type,
            "text_column": self._text_col,
            "operator": self._op,
            "metric_source": self._metric_source,
            "index": self._index[0] if self._index else None,
            "index_type": self._index[1] if self._index else None,
            "opclass": self._index[2] if self._index else None,
            "ann_indexes": [f"{ix[0]} {ix[1]} {ix[2]}" for ix in self._indexes],
            "plan": plan,
            "null_vectors": count - non_null,
            "pgvector_version": self._pgvector_version,
            "server_version": gucs[2] if gucs else None,
            "read_only": True,
        }
        if gucs and self._index is not None:
            if self._index[1] == "hnsw":
                details["hnsw.ef_search"] = gucs[0]
            else:
                details["ivfflat.probes"] = gucs[1]
        return StoreInfo(
            backend=BACKEND,
            count=count,
            dimension=self._dimension,
            metric=self.metric,
            score=METRICS[self.metric][1],
            higher_is_better=False,
            approximate=approximate,
            details=details,
        )

    def _plan_node(self) -> str:
        """How the server runs query() for k=10: 'Index Scan using X' or 'Seq Scan'."""
        probe = vector_literal(np.ones(self._dimension, dtype=np.float32))
        from psycopg import sql

        plan = self.conn.execute(
            sql.SQL("EXPLAIN (FORMAT JSON) ") + self._knn_sql(10), (probe,)
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

    def fingerprint(self) -> str:
        """sha256 prefix of (count, non-NULL vectors, sum of id hashes, sum of xmin)."""
        from psycopg import sql

        xmin = sql.SQL(", sum(xmin::text::int8)") if self._relkind != "v" else sql.SQL("")
        with self._errors("computing the fingerprint"):
            row = self.conn.execute(
                sql.SQL(
                    "SELECT count(*), count({v}), sum(hashtextextended({id}::text, 0)){x} FROM {t}"
                ).format(
                    v=sql.Identifier(self._vec_col or ""),
                    id=sql.Identifier(self._id_col),
                    x=xmin,
                    t=self._table,
                )
            ).fetchone()
        text = f"{self._qualified}|{self._dimension}|{row}"
        return "pgvector:" + hashlib.sha256(text.encode()).hexdigest()[:16]

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

    def fetch(self, ids: Sequence[str]) -> Fetched:
        """Vectors for ``ids`` in the order asked: float32 (n, d), found mask, dims, texts."""
        from psycopg import sql

        ids = [str(i) for i in ids]
        got: dict[str, tuple[bytes | None, str | None]] = {}
        with self._errors("fetching vectors"):
            cur = self.conn.cursor(binary=True)
            for start in range(0, len(ids), FETCH_BATCH):
                chunk = ids[start : start + FETCH_BATCH]
                where, param = self._id_filter(chunk)
                if not param:
                    continue
                cur.execute(
                    sql.SQL("SELECT {cols} FROM {t} WHERE {w}").format(
                        cols=self._cols(), t=self._table, w=where
                    ),
                    (param,),
                )
                for r in cur.fetchall():
                    got[r[0]] = (r[1], r[2] if self._text_col else None)
        blobs = [got[i][0] if i in got else None for i in ids]
        vectors, dims = decode_vectors(blobs, self._dimension, _VECTOR_TYPES[self._vec_type])
        found = np.array([i in got for i in ids], dtype=bool)
        texts = [got[i][1] if i in got else None for i in ids] if self._text_col else None
        return Fetched(ids=ids, vectors=vectors, found=found, dims=dims, texts=texts)

    def iter_vectors(self, batch: int = 1000) -> Iterator[VectorBatch]:
        """All rows ordered by id, in blocks of ``batch``: keyset pages when the id is
        unique, else one server-side cursor in a READ ONLY transaction."""
        batch = max(1, int(batch))
        if self._id_unique:
            yield from self._iter_keyset(batch)
        else:
            yield from self._iter_cursor(batch)

    def _to_batch(self, rows: Sequence[Any]) -> VectorBatch:
        vectors, dims = decode_vectors(
            [r[1] for r in rows], self._dimension, _VECTOR_TYPES[self._vec_type]
        )
        return VectorBatch(
            ids=[r[0] for r in rows],
            vectors=vectors,
            dims=dims,
            texts=[r[2] for r in rows] if self._text_col else None,
        )

    def _iter_keyset(self, batch: int) -> Iterator[VectorBatch]:
        from psycopg import sql

        col = sql.Identifier(self._id_col)
        first = sql.SQL("SELECT {c} FROM {t} ORDER BY {id} LIMIT {n}").format(
            c=self._cols(), t=self._table, id=col, n=sql.Literal(batch)
        )
        after = sql.SQL(
            "SELECT {c} FROM {t} WHERE {id} > CAST(%s::text AS {typ}) ORDER BY {id} LIMIT {n}"
        ).format(
            c=self._cols(),
            t=self._table,
            id=col,
            typ=sql.SQL(self._id_format),
            n=sql.Literal(batch),
        )
        last: str | None = None
        while True:
            with self._errors("reading vectors"):
                cur = self.conn.cursor(binary=True)
                rows = cur.execute(
                    first if last is None else after, None if last is None else (last,)
                ).fetchall()
            if not rows:
                return
            yield self._to_batch(rows)
            if len(rows) < batch:
                return
            last = rows[-1][0]

    def _iter_cursor(self, batch: int) -> Iterator[VectorBatch]:
        from psycopg import sql

        query = sql.SQL("SELECT {c} FROM {t} ORDER BY {id}").format(
            c=self._cols(), t=self._table, id=sql.Identifier(self._id_col)
        )
        with self._errors("reading vectors"), self.conn.transaction():
            cur = self.conn.cursor(name="indexcheck_iter", binary=True)
            try:
                cur.execute(query)
                while rows := cur.fetchmany(batch):
                    yield self._to_batch(rows)
            finally:
                cur.close()

    def _check_queries(self, vectors: np.ndarray) -> np.ndarray:
        arr = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
        if arr.ndim == 1:
            arr = arr.reshape(1, -1)
        if arr.shape[1] != self._dimension:
            raise DimensionMismatchError(
                f"query vectors have dimension {arr.shape[1]} but pgvector column "
                f"{self._qualified}.{self._vec_col} has {self._dimension}; embed with the "
                "model that built the index"
            )
        return arr

    def _run_knn(
        self, arr: np.ndarray, k: int, exact: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        D, ids = empty_result(arr.shape[0], k)
        if arr.shape[0] == 0 or k <= 0:
            return D, ids
        cur = self.conn.cursor()
        cur.executemany(
            self._knn_sql(k, exact), [(vector_literal(v),) for v in arr], returning=True
        )
        qi = 0
        while True:
            rows = [r for r in cur.fetchall() if r[1] is not None]
            for j, (vid, score) in enumerate(rows[:k]):
                D[qi, j] = score
                ids[qi, j] = vid
            qi += 1
            if not cur.nextset():
                break
        return D, ids

    def query(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Normal search (``ORDER BY col <op> q LIMIT k``, the ANN index when the planner
        uses it): ``vectors`` float32 (q, d) -> (D float32 (q, k) operator value, lower
        is better; I object (q, k) str ids, None where missing)."""
        arr = self._check_queries(vectors)
        with self._errors("querying"):
            return self._run_knn(arr, k)

    def exact_query(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact search: the same statement with index scans off (sequential scan and
        sort in the server); same shapes and score as :meth:`query`."""
        arr = self._check_queries(vectors)
        with self._errors("querying exactly"), self.conn.transaction():
            for guc in ("enable_indexscan", "enable_bitmapscan", "enable_indexonlyscan"):
                self.conn.execute(f"SET LOCAL {guc} = off")
            return self._run_knn(arr, k, exact=True)

    def close(self) -> None:
        if self._conn is not None and not self._conn.closed:
            self._conn.close()

    def __repr__(self) -> str:
        return f"PgvectorStore({self.spec!r})"


def open_store(spec: StoreSpec, options: StoreOptions | None = None) -> PgvectorStore:
    """Open ``pgvector:postgresql://...?table=T`` read-only (see the module docstring)."""
    return PgvectorStore(spec)
