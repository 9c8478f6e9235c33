"""pgvector: which rows the store reads, in which order, and with which text.

- ``&collection=NAME``: LangChain's ``langchain_pg_embedding`` holds every collection; the
  name is looked up once in ``langchain_pg_collection`` and every statement filters on its
  uuid (a bound literal, never spliced text).
- ``&order=COLUMN``: a real insertion column, so positions are build order. Without it rows
  are read sorted by id (``ordered`` is False: check-index reports shifts as chains).
- ``&metadata=COLUMN``: the json/jsonb metadata column (default: the first json/jsonb of
  ``metadata_``, ``cmetadata``, ``langchain_metadata``, ``metadata``). Rows LlamaIndex wrote
  keep their node under ``_node_content``; their text is then what LlamaIndex embedded
  (:func:`embedded_text_from_row`), not the bare column.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import InputError
from ..base import Fetched, VectorBatch
from .sql import _VECTOR_TYPES, PgCatalog, decode_vectors

if TYPE_CHECKING:
    from psycopg import sql

COLLECTION_TABLE = "langchain_pg_collection"
_META_CANDIDATES = ("metadata_", "cmetadata", "langchain_metadata", "metadata")
_JSON_TYPES = {"json", "jsonb"}


class PgRows(PgCatalog):
    """Row selection, order and texts; :class:`PgvectorStore` adds connection and errors."""

    _collection: str | None = None
    _collection_uuid: str | None = None
    _order_col: str | None = None
    _meta_col: str | None = None
    _meta_param: str | None = None
    _id_unique: bool
    _columns: dict[str, tuple[int, str, int, str]]
    _nsp: str

    @property
    def ordered(self) -> bool:  # type: ignore[override]
        """True only with ``&order=``: sorted ids are not a build order."""
        return self._order_col is not None

    @property
    def order_source(self) -> str:  # type: ignore[override]
        return f"&order={self._order_col}" if self._order_col else "sorted by id (no build order)"

    def _resolve_rows(self, params: Mapping[str, str]) -> None:
        """Check ``&collection=``, ``&order=`` and ``&metadata=`` against the catalog."""
        self._collection = params.get("collection") or None
        self._order_col = params.get("order") or None
        self._meta_param = params.get("metadata") or None
        listing = ", ".join(self._columns)
        if self._order_col is not None and self._order_col not in self._columns:
            raise InputError(
                f"pgvector table {self._qualified} has no column '{self._order_col}' for "
                f"&order= (columns: {listing}); name a real insertion column"
            )
        if self._meta_param is not None:
            if self._meta_param not in self._columns:
                raise InputError(
                    f"pgvector table {self._qualified} has no column '{self._meta_param}' "
                    f"for &metadata= (columns: {listing})"
                )
            self._meta_col = self._meta_param
        else:
            self._meta_col = next(
                (
                    c
                    for c in _META_CANDIDATES
                    if c in self._columns and self._columns[c][1] in _JSON_TYPES
                ),
                None,
            )
        if self._collection is not None:
            self._resolve_collection()
        elif "collection_id" in self._columns:
            self._refuse_mixed_collections()

    def _resolve_collection(self) -> None:
        from psycopg import sql

        if "collection_id" not in self._columns:
            raise InputError(
                f"pgvector table {self._qualified} has no collection_id column, so "
                "&collection= does not apply; it selects a collection of LangChain's "
                "langchain_pg_embedding table"
            )
        coll = sql.Identifier(self._nsp, COLLECTION_TABLE)
        with self._translating("reading the collections"):
            exists = self.conn.execute(
                "SELECT to_regclass(%s) IS NOT NULL", (coll.as_string(self.conn),)
            ).fetchone()
            if not exists or not exists[0]:
                raise InputError(
                    f"&collection= needs table {self._nsp}.{COLLECTION_TABLE} (LangChain's "
                    "collection table) next to the embeddings; it does not exist"
                )
            rows = self.conn.execute(
                sql.SQL("SELECT uuid::text, name FROM {c} ORDER BY name").format(c=coll)
            ).fetchall()
        match = [r[0] for r in rows if r[1] == self._collection]
        if not match:
            names = ", ".join(str(r[1]) for r in rows[:20]) or "none"
            raise InputError(
                f"pgvector: no collection named '{self._collection}' in "
                f"{self._nsp}.{COLLECTION_TABLE} (collections: {names}); fix &collection="
            )
        self._collection_uuid = match[0]

    def _refuse_mixed_collections(self) -> None:
        """Without ``&collection=``, a LangChain table holding rows of two or more
        collections is refused: one check over them all mixes unrelated indexes (each
        collection's chunks become the other's orphans and shifts). One collection, or
        none named, reads the whole table as before."""
        from psycopg import sql

        coll = sql.Identifier(self._nsp, COLLECTION_TABLE)
        with self._translating("reading the collections"):
            exists = self.conn.execute(
                "SELECT to_regclass(%s) IS NOT NULL", (coll.as_string(self.conn),)
            ).fetchone()
            name = sql.SQL("c.name") if exists and exists[0] else sql.SQL("NULL::text")
            join = (
                sql.SQL("LEFT JOIN {c} c ON c.uuid = e.collection_id").format(c=coll)
                if exists and exists[0]
                else sql.SQL("")
            )
            rows = self.conn.execute(
                sql.SQL(
                    "SELECT e.collection_id::text, {n}, count(*) FROM {t} e {j} "
                    "GROUP BY 1, 2 ORDER BY 2, 1"
                ).format(n=name, t=self._table, j=join)
            ).fetchall()
        if len(rows) < 2:
            return
        shown = ", ".join(
            f"{r[1] if r[1] is not None else (r[0] or 'no collection')} ({int(r[2]):,} rows)"
            for r in rows[:10]
        )
        more = f" and {len(rows) - 10} more" if len(rows) > 10 else ""
        first = next((r[1] for r in rows if r[1] is not None), "NAME")
        raise InputError(
            f"pgvector table {self._qualified} holds {len(rows)} LangChain collections "
            f"({shown}{more}); a check over the whole table mixes them: pick one with "
            f"&collection=NAME (e.g. &collection={first})"
        )

    # ---- SQL pieces ------------------------------------------------------------------

    def _rows_filter(self) -> sql.Composable:
        """The WHERE condition that selects this store's rows (TRUE for the whole table)."""
        from psycopg import sql

        if self._collection_uuid is None:
            return sql.SQL("TRUE")
        return sql.SQL("{c} = CAST({u} AS uuid)").format(
            c=sql.Identifier("collection_id"), u=sql.Literal(self._collection_uuid)
        )

    def _cols(self) -> sql.Composable:
        from psycopg import sql

        base = super()._cols()
        if self._meta_col is None:
            return base
        return sql.SQL("{}, {}::jsonb AS ic_meta").format(base, sql.Identifier(self._meta_col))

    def _split(self, row: Sequence[Any]) -> tuple[str, Any, str | None, dict[str, Any] | None]:
        """(id, vector blob, text, metadata) of one selected row; the text is what
        LlamaIndex embedded when the row holds a LlamaIndex node."""
        from ...inputs.formats.llamaindex import embedded_text_from_row

        k = 2
        text = None
        if self._text_col:
            text, k = row[2], 3
        meta = row[k] if self._meta_col is not None else None
        if not isinstance(meta, dict):
            meta = None
        if text is not None and meta is not None and "_node_content" in meta:
            text = embedded_text_from_row(text, meta, f"{self._qualified} row '{row[0]}'")
        return row[0], row[1], text, meta

    # ---- reading ---------------------------------------------------------------------

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        """Vectors for ``ids`` in the order asked: float32 (n, d), found mask, dims, texts."""
        from psycopg import sql

        got: dict[str, tuple[bytes | None, str | None]] = {}
        where, param = self._id_filter(ids)
        with self._translating("fetching vectors"):
            cur = self.conn.cursor(binary=True)
            if param:
                cur.execute(
                    sql.SQL("SELECT {cols} FROM {t} WHERE {w} AND {f}").format(
                        cols=self._cols(), t=self._table, w=where, f=self._rows_filter()
                    ),
                    (param,),
                )
                for r in cur.fetchall():
                    cid, blob, text, _ = self._split(r)
                    got[cid] = (blob, text)
        blobs = [got[i][0] if i in got else None for i in ids]
        vectors, dims = decode_vectors(blobs, self._dimension, _VECTOR_TYPES[self._vec_type])
        found = np.array([i in got for i in ids], dtype=bool)
        texts = [got[i][1] if i in got else None for i in ids] if self._text_col else None
        return Fetched(ids=ids, vectors=vectors, found=found, dims=dims, texts=texts)

    def _scan(self, batch: int) -> Iterator[VectorBatch]:
        """All rows, in blocks of ``batch``: by ``&order=`` through one server-side cursor,
        else by id (keyset pages when the id is unique, else a cursor)."""
        if self._id_unique and self._order_col is None:
            yield from self._iter_keyset(batch)
        else:
            yield from self._iter_cursor(batch)

    def _to_batch(self, rows: Sequence[Any]) -> VectorBatch:
        parts = [self._split(r) for r in rows]
        vectors, dims = decode_vectors(
            [p[1] for p in parts], self._dimension, _VECTOR_TYPES[self._vec_type]
        )
        return VectorBatch(
            ids=[p[0] for p in parts],
            vectors=vectors,
            dims=dims,
            texts=[p[2] for p in parts] if self._text_col else None,
            metadata=[p[3] or {} for p in parts] if self._meta_col is not None else None,
        )

    def _iter_keyset(self, batch: int) -> Iterator[VectorBatch]:
        from psycopg import sql

        col = sql.Identifier(self._id_col)
        first = sql.SQL("SELECT {c} FROM {t} WHERE {f} ORDER BY {id} LIMIT {n}").format(
            c=self._cols(), t=self._table, f=self._rows_filter(), id=col, n=sql.Literal(batch)
        )
        after = sql.SQL(
            "SELECT {c} FROM {t} WHERE {id} > CAST(%s::text AS {typ}) AND {f} "
            "ORDER BY {id} LIMIT {n}"
        ).format(
            c=self._cols(),
            t=self._table,
            id=col,
            typ=sql.SQL(self._id_format),
            f=self._rows_filter(),
            n=sql.Literal(batch),
        )
        last: str | None = None
        while True:
            with self._translating("reading vectors"):
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

        keys = [sql.Identifier(self._id_col)]
        if self._order_col is not None:
            keys.insert(0, sql.Identifier(self._order_col))
        query = sql.SQL("SELECT {c} FROM {t} WHERE {f} ORDER BY {k}").format(
            c=self._cols(), t=self._table, f=self._rows_filter(), k=sql.SQL(", ").join(keys)
        )
        with self._translating("reading vectors"), self.conn.transaction():
            cur = self.conn.cursor(name="indexcheck_iter", binary=True)
            try:
                cur.execute(query)
                while rows := cur.fetchmany(batch):
                    yield self._to_batch(rows)
            finally:
                cur.close()
