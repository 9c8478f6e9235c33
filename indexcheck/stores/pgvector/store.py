"""PostgreSQL + pgvector store, read-only, through psycopg 3.

Spec: ``pgvector:postgresql://user[:password]@host:port/db?table=T`` with ``&schema=``, ``&id=``,
``&vector=`` (default ``embedding``, or the only vector/halfvec column), ``&text=``, ``&metric=``
(cosine | l2 | ip | l1), ``&operator=``, ``&ef_search=``/``&probes=`` and libpq options;
``&collection=``/``&order=``/``&metadata=`` are :mod:`.rows`'. The password (spec, PGPASSWORD or
~/.pgpass) never appears in ``spec``, messages or reprs.

Scores are the operator's own value, lower is nearer: ``<=>`` ``1-cos``, ``<->`` ``l2`` (not
squared), ``<#>`` ``-dot``, ``<+>`` ``l1``; the metric is a valid HNSW/IVFFlat index's opclass
or ``&metric=`` (cosine assumed otherwise). ``query`` runs ``ORDER BY col <op> $1 LIMIT k`` as
the application does; ``exact_query`` the same with index scans off. Read-only three ways (a
read-only session, ``BEGIN READ ONLY``, only SELECT/EXPLAIN/SET sent; no startup option, which
poolers reject). Vectors travel in pgvector's binary format; nothing per row is held.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import DimensionMismatchError, FilterError
from ..base import StoreInfo, StoreSpec, empty_result
from ..params import Choice, Int, Str
from .connect import CONNECT_ERRORS, LIBPQ_KEYS, PSYCOPG_ERRORS, import_psycopg, parse_target
from .rows import PgRows
from .sql import BACKEND, FETCH_BATCH, METRICS, decode_vectors, vector_literal

__all__ = ["PgvectorStore", "decode_vectors"]

if TYPE_CHECKING:
    import psycopg


class PgvectorStore(PgRows):
    """A read-only view of one table with a pgvector column; see the module docstring."""

    scheme = "pgvector"
    params = {
        "table": Str(),
        "schema": Str(),
        "id": Str(),
        "vector": Str(),
        "text": Str(),
        "metric": Choice(*METRICS),
        "operator": Choice(*(op for op, _ in METRICS.values())),
        "ef_search": Int(min=1),
        "probes": Int(min=1),
        "collection": Str(),
        "order": Str(),
        "metadata": Str(),
        **{key: Str() for key in LIBPQ_KEYS},
    }
    sweepable = ("ef_search", "probes")
    has_exact = True
    fetch_batch = FETCH_BATCH
    #: one executemany per call, however many queries
    query_batch = 1 << 30
    errors = PSYCOPG_ERRORS
    dimension_error = DimensionMismatchError
    dimension_message = (
        "query vectors have dimension {got} but pgvector column "
        "{store._qualified}.{store._vec_col} has {want}; embed with the model that built "
        "the index"
    )

    def __init__(self, parsed: StoreSpec, options: Any = None) -> None:
        self._psycopg = import_psycopg()
        self._conn: psycopg.Connection[Any] | None = None
        self._parse(parsed)
        self._qualified = self.table_name
        self._connect()
        try:
            self._resolve()
            self._resolve_rows(parsed.params)
        except BaseException:
            self.close()
            raise

    # ---- spec and connection -------------------------------------------------------

    def _parse(self, parsed: StoreSpec) -> None:
        t = parse_target(parsed)
        self.spec, self._location, self._password = t.spec, t.location, t.password
        self._user, self._dbname, self._where = t.user, t.dbname, t.where
        self.table_name, self._schema = t.table, t.schema
        self._id_col, self._id_given = t.id_col, t.id_given
        self._vec_col, self._text_col = t.vec_col, t.text_col
        self._metric_param, self._search, self._libpq = t.metric, t.search, t.libpq

    def _connect(self) -> None:
        pg = self._psycopg
        kwargs: dict[str, Any] = {"connect_timeout": 10, "application_name": "indexcheck"}
        kwargs.update(self._libpq)
        with CONNECT_ERRORS.mapping("connecting", store=self):
            conn = pg.connect(self._location, autocommit=True, prepare_threshold=None, **kwargs)
        self._conn = conn
        try:
            with self._translating("setting up the session"):
                conn.read_only = True
                conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                for guc, value in self._search.items():
                    conn.execute("SELECT set_config(%s, %s, false)", (guc, str(value)))
        except BaseException:
            self.close()
            raise

    def info(self) -> StoreInfo:
        """Count, dimension, metric and score formula (lower is better), and the plan
        (read afresh on every call: a count, an EXPLAIN and two settings)."""
        from psycopg import sql

        with self._translating("reading table statistics"):
            row = self.conn.execute(
                sql.SQL("SELECT count(*), count({v}) FROM {t} WHERE {f}").format(
                    v=sql.Identifier(self._vec_col or ""), t=self._table, f=self._rows_filter()
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
            "collection": self._collection,
            "order": self.order_source,
            "metadata_column": self._meta_col,
            # no ANN index and no &metric=/&operator=: the score is the operator the
            # application writes in its query, which indexcheck cannot see
            "score_depends_on_query": self._metric_source.startswith("default"),
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

    def _search_dimension(self) -> int:
        return int(self._dimension)

    def _run_knn(
        self, arr: np.ndarray, k: int, exact: bool = False, native: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        D, ids = empty_result(arr.shape[0], k)
        if arr.shape[0] == 0:
            return D, ids
        extra, params = native if native is not None else (None, [])
        cur = self.conn.cursor()
        cur.executemany(
            self._knn_sql(k, exact, extra),
            [(vector_literal(v), *params) for v in arr],
            returning=True,
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

    def _query_batch(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Normal search (``ORDER BY col <op> q LIMIT k``, the ANN index when the planner
        uses it): float32 (q, d) -> (D float32 (q, k) operator value, lower is better;
        I object (q, k) str ids, None where missing); under a portable ``filter``, a
        parameterized ``WHERE`` on the metadata jsonb column."""
        with self._translating("querying"):
            return self._run_knn(vectors, k)

    def _native_filter(self, node: Any) -> Any:
        """``(condition, params)`` on the json/jsonb metadata column (values as params)."""
        from ...filters import translate

        if self._meta_col is None:
            raise FilterError(
                f"pgvector table {self._qualified} has no json/jsonb metadata column to "
                "filter on; name it with &metadata=COLUMN"
            )
        if self._columns[self._meta_col][1] != "jsonb":
            raise FilterError(
                f"pgvector column {self._qualified}.{self._meta_col} is "
                f"{self._columns[self._meta_col][1]}, not jsonb: the filter's containment "
                "tests need jsonb (ALTER the column to jsonb, or filter a jsonb copy)"
            )
        return translate(node, "pgvector", metadata_column=self._meta_col)

    def _filtered_query_batch(
        self, vectors: np.ndarray, k: int, native: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        with self._translating("querying with a filter"):
            return self._run_knn(vectors, k, native=native)

    def _exact_batch(self, arr: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact search: the same statement with index scans off (sequential scan and
        sort in the server); same shapes and score as :meth:`query`."""
        with self._translating("querying exactly"), self.conn.transaction():
            for guc in ("enable_indexscan", "enable_bitmapscan", "enable_indexonlyscan"):
                self.conn.execute(f"SET LOCAL {guc} = off")
            return self._run_knn(arr, k, exact=True)

    def close(self) -> None:
        if self._conn is not None and not self._conn.closed:
            self._conn.close()

    def __repr__(self) -> str:
        return f"PgvectorStore({self.spec!r})"
