"""sqlite-vec and SQLite collections: ``sqlitevec:FILE?table=T`` or ``?collection=NAME``.

Options: ``table`` (a vec0 table, or LangChain's ``SQLiteVec`` table), ``collection`` (an llm
collection), ``id``, ``text``, ``vector``, ``metadata`` (a JSON column) and ``metric`` (checked
against the file). The layout is sniffed (:mod:`.layout`): one index needs no option.

Scores: sqlite-vec's ``distance``, lower is nearer: ``l2`` (default) plain Euclidean,
``distance_metric=cosine`` ``1-cos``, ``L1`` Manhattan. llm collections have no vector index:
their search is an exact ``cos`` (higher is nearer) computed here, as ``llm similar`` does.
sqlite-vec 0.1.x searches by brute force (``approximate`` False), still held to indexcheck's
exact search by compare-ann. The file is opened ``mode=ro`` (:mod:`.opening`); scans page by
rowid, fetches ask 500 ids at a time, exact search streams the same pages.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import InputError, SpecError
from ..base import BaseStore, Fetched, StoreInfo, StoreSpec, VectorBatch
from ..hits import gather
from ..metric_table import scores_of
from ..node_rows import json_object
from ..params import Choice, Str
from . import rows as sql
from .exact import exact_blocks
from .layout import Layout, sniff
from .opening import SQLITEVEC_ERRORS, connect

FETCH_BATCH = 500
QUERY_BATCH = 64
PAGE_ROWS = 4096


class SqliteVecStore(BaseStore):
    """A read-only view of one sqlite-vec index or llm collection in an SQLite file.

    Scores: sqlite-vec's distance (``l2``, ``1-cos`` or ``l1``; lower is nearer), or
    ``cos`` for llm collections; ids are strings (rowids for LangChain's table).
    """

    scheme = "sqlitevec"
    label = "sqlite-vec"
    ordered = True  # rowid order: the order rows were inserted
    order_source = "rowid order (insertion order)"
    errors = SQLITEVEC_ERRORS
    params = {
        "table": Str(),
        "collection": Str(),
        "id": Str(),
        "text": Str(),
        "vector": Str(),
        "metadata": Str(),
        "metric": Choice(*scores_of("sqlitevec")),
    }
    fetch_batch = FETCH_BATCH
    query_batch = QUERY_BATCH
    has_exact = True

    def __init__(self, spec: StoreSpec, conn: Any, path: Path, layout: Layout) -> None:
        super().__init__(spec)
        self._conn, self._path, self._lay = conn, path, layout
        picked = {k: v for k, v in spec.params.items() if v}
        self.spec = f"sqlitevec:{spec.location}" + (
            "?" + "&".join(f"{k}={v}" for k, v in picked.items()) if picked else ""
        )

    @classmethod
    def from_spec(cls, spec: StoreSpec, options: Any = None) -> SqliteVecStore:
        conn, path = connect(spec.location)
        try:
            with SQLITEVEC_ERRORS.mapping("read the schema", path=str(path)):
                layout = sniff(conn, dict(spec.params), str(path))
            if layout.kind == "langchain" and spec.params.get("id") not in (None, "rowid"):
                raise SpecError("sqlitevec: LangChain's SQLiteVec ids are its rowids; drop ?id=")
        except BaseException:
            conn.close()
            raise
        return cls(spec, conn, path, layout)

    # -- helpers -----------------------------------------------------------------------

    def _error_fields(self, doing: str) -> dict[str, Any]:
        return {"path": str(getattr(self, "_path", "?"))}

    def _rows(self, doing: str, statement: str, params: list[Any]) -> list[tuple[Any, ...]]:
        return self._call(doing, lambda: self._conn.execute(statement, params).fetchall())

    def _pages(
        self, batch: int, where: str | None = None, params: tuple[Any, ...] = ()
    ) -> Iterator[list[tuple[Any, ...]]]:
        """Rows in the page shape of :func:`.rows.page_sql`, ``batch`` at a time."""
        lay = self._lay
        head = [lay.collection_id] if lay.kind == "llm" else []
        phases = [(sql.page_sql(lay, where), list(params))]
        if lay.kind == "langchain" and where is None:
            phases.append((sql.orphan_sql(lay), []))
        for statement, extra in phases:
            last = -(2**63)
            while True:
                page = self._rows("scan", statement, [*head, last, *extra, batch])
                if not page:
                    break
                yield page
                last = page[-1][0]

    def _batch(self, page: list[tuple[Any, ...]]) -> VectorBatch:
        lay = self._lay
        vectors, dims = sql.decode([r[2] for r in page], lay.dimension)
        extra = sql.extra_columns(lay)
        metas = []
        for r in page:
            meta = json_object(r[4]) if lay.metadata else {}
            meta.update(zip(extra, r[5:], strict=False))
            metas.append(meta)
        return VectorBatch(
            ids=[str(r[1]) for r in page],
            vectors=vectors,
            dims=dims,
            texts=[r[3] if isinstance(r[3], str) else None for r in page] if lay.text else None,
            metadata=metas,
        )

    def _blocks(
        self, where: str | None = None, params: tuple[Any, ...] = ()
    ) -> Iterator[tuple[list[str], np.ndarray]]:
        for page in self._pages(PAGE_ROWS, where, params):
            b = self._batch(page)
            ok = np.flatnonzero(b.dims == self._lay.dimension)
            yield [b.ids[i] for i in ok], b.vectors[ok]

    # -- Protocol ----------------------------------------------------------------------

    def info(self) -> StoreInfo:
        """Count, dimension, metric and its score; details say the layout and the search."""
        lay = self._lay
        head = [lay.collection_id] if lay.kind == "llm" else []
        count = int(self._rows("count", sql.count_sql(lay), head)[0][0])
        version = self._rows("version", "SELECT vec_version()", [])[0][0]
        details: dict[str, Any] = {
            "layout": lay.kind,
            "table": lay.rows,
            "vec_table": lay.vec,
            "vector_column": lay.vector,
            "id_column": lay.id,
            "text_column": lay.text,
            "metadata_column": lay.metadata,
            "filter_columns": dict(lay.columns),
            "sqlite_vec": version,
            "read_only_by": "mode=ro",
        }
        if lay.kind == "llm":
            details.update(collection=lay.collection, model=lay.model)
            details["search"] = (
                "exact cosine similarity computed by indexcheck (llm collections have no "
                "vector index)"
            )
        else:
            details["search"] = "sqlite-vec vec0 KNN (a brute-force scan in sqlite-vec 0.1.x)"
        return self.described(count, lay.dimension, lay.metric, False, details)

    def fingerprint(self) -> str:
        """sha256 prefix over the layout, row count, last rowid, SQLite's file change
        counter (header bytes 24-27), the file and WAL sizes, dimension and metric."""
        lay = self._lay
        head = [lay.collection_id] if lay.kind == "llm" else []
        count = self._rows("count", sql.count_sql(lay), head)[0][0]
        with open(self._path, "rb") as fh:
            header = fh.read(100)
        wal = Path(str(self._path) + "-wal")
        raw = (
            f"{lay.kind}|{lay.rows}|{lay.vec}|{lay.collection}|{count}|{header[24:28].hex()}|"
            f"{self._path.stat().st_size}|{wal.stat().st_size if wal.exists() else 0}|"
            f"{lay.dimension}|{lay.metric}"
        )
        return hashlib.sha256(raw.encode()).hexdigest()[:16]

    def _scan(self, batch: int) -> Iterator[VectorBatch]:
        """Every row once in rowid order, with texts and metadata: float32 (n, d) blocks."""
        for page in self._pages(batch):
            yield self._batch(page)

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        """Stored vectors for ``ids`` in the order asked: float32 (n, d), found (n,) (a
        vector is stored under the id), dims (n,), texts where the layout has them."""
        lay = self._lay
        values = sql.id_params(lay, list(dict.fromkeys(ids)))
        got: dict[str, tuple[Any, Any]] = {}
        if values:
            head = [lay.collection_id] if lay.kind == "llm" else []
            for vid, blob, text in self._rows(
                "fetch", sql.fetch_sql(lay, len(values)), [*head, *values]
            ):
                got.setdefault(str(vid), (blob, text))
        found = np.array([i in got and got[i][0] is not None for i in ids], dtype=bool)
        vectors, dims = sql.decode([got[i][0] if i in got else None for i in ids], lay.dimension)
        texts = [got[i][1] if i in got and isinstance(got[i][1], str) else None for i in ids]
        return Fetched(
            ids=list(ids), vectors=vectors, found=found, dims=dims,
            texts=texts if lay.text else None,
        )  # fmt: skip

    def _search_dimension(self) -> int | None:
        return self._lay.dimension or None

    def _knn(self, vectors: np.ndarray, k: int, native: Any) -> tuple[np.ndarray, np.ndarray]:
        if k > sql.MAX_K:
            raise InputError(
                f"sqlite-vec returns at most {sql.MAX_K} neighbours per query, asked for "
                f"k={k}; ask for k <= {sql.MAX_K}"
            )
        statement, params = sql.knn_sql(self._lay, native)

        def search(part: np.ndarray) -> list[list[tuple[float, str]]]:
            out = []
            for v in part:
                blob = np.ascontiguousarray(v, dtype="<f4").tobytes()
                rows = self._rows("search", statement, [blob, k, *params])
                out.append([(float(d), str(i)) for i, d in rows])
            return out

        return gather(vectors, k, QUERY_BATCH, search)

    def _query_batch(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The store's own search: vec0 KNN (D float32 (q, k) distance, lower is nearer),
        or for llm an exact cosine (``cos``); NaN / None where fewer than k."""
        if self._lay.kind == "llm":
            return self._exact_batch(vectors, k)
        return self._knn(vectors, k, None)

    def _exact_batch(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact search by indexcheck over the scanned rows, in the store's own scale."""
        return exact_blocks(self._blocks(), vectors, k, self._lay.metric)

    def _native_filter(self, node: Any) -> Any:
        """vec0 column constraints plus a JSON pre-filter (:mod:`indexcheck.filters.sqlitevec`)."""
        from ...filters import translate
        from ...filters.sqlitevec import quote_ident

        lay = self._lay
        columns = {c: t for c, t in lay.columns.items()} if lay.kind == "vec0" else {}
        json_col = quote_ident(lay.metadata) if lay.metadata else None
        return translate(
            node, "sqlitevec", columns=columns, partition=lay.partition, json_column=json_col
        )

    def _filtered_query_batch(
        self, vectors: np.ndarray, k: int, native: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        """The own search under the filter: vec0 KNN with its constraints and a rowid
        pre-filter, or (llm) exact cosine over the rows the JSON filter selects."""
        if self._lay.kind == "llm":
            blocks = self._blocks(native.json, tuple(native.json_params))
            return exact_blocks(blocks, vectors, k, self._lay.metric)
        return self._knn(vectors, k, native)

    def close(self) -> None:
        """Close the connection; closing twice is fine."""
        conn, self._conn = getattr(self, "_conn", None), None
        if conn is not None:
            conn.close()
