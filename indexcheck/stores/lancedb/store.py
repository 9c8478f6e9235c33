"""LanceDB tables: ``lancedb:PATH?table=T[&vector=vector&id=id&text=text&metric=...]``.

``PATH`` is what ``lancedb.connect(PATH)`` opens. ``metric`` (``l2``, ``cosine``, ``dot``) must
agree with a vector index on the column (LanceDB makes queries use the index's distance);
without an index it picks the distance, LanceDB's ``l2`` by default. Every query, normal or
exact, is sent with that distance.

Scores are LanceDB's ``_distance``, lower is nearer: ``l2`` -> ``l2^2``, ``cosine`` ->
``1-cos``, ``dot`` -> ``1-dot`` (LanceDB's docstrings say "Euclidean" and "the dot product").
With a PQ/SQ index normal distances are estimates from codes; ``exact_query`` (a flat scan,
``bypass_vector_index``) reports exact ones. ``&nprobes=``, ``&refine_factor=`` and ``&ef=``
set the search so recall can be swept. The version current at open is pinned; nothing is
written. Scans read it in ``offset``/``limit`` pages of ``PAGE_ROWS`` rows at most (one
``to_batches`` reader would read ahead and hold most of the table); fetches use an id map.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

import numpy as np

from ...errors import InputError
from ..base import BaseStore, Fetched, StoreInfo, StoreSpec, VectorBatch, pack_rows
from ..hits import Hits, gather
from ..metric_table import scores_of
from ..params import Choice, Int, Str
from .opening import LANCEDB_ERRORS, LanceTable, open_table, quote_ident

#: LanceDB distance type -> (score formula over cos/dot/l2, higher_is_better)
DISTANCE_SCORES = scores_of("lancedb")
FETCH_BATCH = 500
QUERY_BATCH = 64
#: rows one scan query reads at most (the most a scan holds, with one block)
PAGE_ROWS = 8192


def _quote_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class LanceDBStore(BaseStore):
    """A read-only view of one LanceDB table, pinned to the version current at open.

    Scores: LanceDB ``_distance`` for the table's distance type (``l2^2``, ``1-cos`` or
    ``1-dot``), lower is nearer; ids are the id column's values as strings.
    """

    ordered = True  # rows come back in the order they were added

    scheme = "lancedb"
    #: lancedb and pyarrow raise many types for unreadable data: all mean the dataset
    errors = LANCEDB_ERRORS
    params = {
        "table": Str(),
        "vector": Str(),
        "id": Str(),
        "text": Str(),
        "metric": Choice(*DISTANCE_SCORES),
        "nprobes": Int(min=1),
        "refine_factor": Int(min=1),
        "ef": Int(min=1),
        #: a filtered search filters before (true) or after (false) the vector search
        "prefilter": Choice("true", "false"),
    }
    sweepable = ("nprobes", "refine_factor", "ef")
    fetch_batch = FETCH_BATCH
    query_batch = QUERY_BATCH

    has_exact = True

    def __init__(self, opened: LanceTable) -> None:
        self._t = opened  # what the table is: columns, index, metric, search options
        self.spec, self._tbl, self._name = opened.spec, opened.table, opened.name
        self._vcol, self._idcol, self._textcol = opened.vector, opened.id, opened.text
        self._dimension, self._metric = opened.dimension, opened.metric
        self._version = int(opened.table.version)
        self._offset_of: dict[str, int] | None = None

    @classmethod
    def from_spec(cls, spec: StoreSpec, options: Any = None) -> LanceDBStore:
        return cls(open_table(spec, cls.check_params(spec.params)))

    # -- helpers -----------------------------------------------------------------------

    def _error_fields(self, doing: str) -> dict[str, Any]:
        return {"table": self._name, "path": ""}

    def _pages(self, cols: list[str], size: int, doing: str) -> Iterator[Any]:
        """The pinned table, ``cols`` only, as Arrow record batches of at most ``size``
        rows in scan order. Each query reads one page (``offset``/``limit``) of at most
        ``max(size, PAGE_ROWS)`` rows through ``to_batches``, so LanceDB can read ahead
        within the page but never past it."""
        start = 0
        while True:
            query = self._tbl.search().select(cols).offset(start).limit(max(size, PAGE_ROWS))
            reader = self._call(doing, partial(query.to_batches, size))
            got = 0
            while True:
                with self._translating(doing):
                    try:
                        batch = reader.read_next_batch()
                    except StopIteration:
                        break
                got += batch.num_rows
                if batch.num_rows:
                    yield batch
            if got == 0:
                return
            start += got

    def _vectors_of(self, col: Any) -> tuple[np.ndarray, np.ndarray]:
        """A list/fixed-size-list Arrow column -> (float32 (n, d), dims int32 (n,))."""
        import pyarrow as pa

        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks()
        n = len(col)
        d = self._dimension
        if pa.types.is_fixed_size_list(col.type) and col.null_count == 0 and n and d:
            flat = col.flatten().to_numpy(zero_copy_only=False)
            if flat.size == n * d:
                dims = np.full(n, d, dtype=np.int32)
                return np.ascontiguousarray(flat.reshape(n, d), dtype=np.float32), dims
        return pack_rows(col.to_pylist(), d)

    def _ids_of(self, col: Any) -> list[str]:
        return [str(v) for v in col.to_pylist()]

    def _vector_search(
        self, q: np.ndarray, k: int, exact: bool, where: str | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        if not self._t.fixed:
            raise InputError(
                f"lancedb column '{self._vcol}' of table '{self._name}' holds variable-length "
                "lists, which LanceDB cannot search; fetch and iterate work, or store the "
                "vectors as a fixed-size list"
            )

        def search(part: np.ndarray) -> Hits:
            builder = (
                self._tbl.search(part, vector_column_name=self._vcol)
                .distance_type(self._metric)
                .select([self._idcol, "_distance"])
                .limit(k)
            )
            if where is not None:
                if self._t.prefilter is None:  # LanceDB's own default, as the application
                    builder = builder.where(where)
                else:
                    builder = builder.where(where, prefilter=self._t.prefilter == "true")
            if exact:
                builder = builder.bypass_vector_index()
            else:
                if self._t.search["nprobes"]:
                    builder = builder.nprobes(self._t.search["nprobes"])
                if self._t.search["refine_factor"]:
                    builder = builder.refine_factor(self._t.search["refine_factor"])
                if self._t.search["ef"]:
                    builder = builder.ef(self._t.search["ef"])
            res = self._call("search", builder.to_arrow)
            qidx = (
                np.asarray(res.column("query_index").to_numpy(), dtype=np.int64)
                if "query_index" in res.column_names
                else np.zeros(res.num_rows, dtype=np.int64)
            )
            dist = np.asarray(res.column("_distance").to_numpy(zero_copy_only=False), np.float32)
            ids = self._ids_of(res.column(self._idcol))
            hits: list[list[tuple[float, str]]] = [[] for _ in range(part.shape[0])]
            for row in np.argsort(dist, kind="stable"):  # each query's rows, nearest first
                hits[int(qidx[row])].append((float(dist[row]), ids[row]))
            return hits

        return gather(q, k, QUERY_BATCH, search)

    # -- Protocol ----------------------------------------------------------------------

    def info(self) -> StoreInfo:
        """Count, dimension, distance type and its score formula; details name the index."""
        count = int(self._call("count_rows", self._tbl.count_rows))
        details: dict[str, Any] = {
            "table": self._name,
            "version": self._version,
            "vector_column": self._vcol,
            "id_column": self._idcol,
            "text_column": self._textcol,
            "metric_source": self._t.metric_source,
            "index": self._t.index,
            "search_params": {k: v for k, v in self._t.search.items() if v},
        }
        return self.described(
            count, self._dimension, self._metric, self._t.index is not None, details
        )

    def fingerprint(self) -> str:
        """sha256 prefix over table name, pinned version and its commit time, row count,
        dimension, distance type and index uuid; every LanceDB write makes a new version."""
        stamp = ""
        versions = self._call("list_versions", self._tbl.list_versions)
        for v in versions:
            if int(v.get("version", -1)) == self._version:
                stamp = str(v.get("timestamp"))
        count = int(self._call("count_rows", self._tbl.count_rows))
        uuid = self._t.index.get("uuid") if self._t.index else None
        raw = (
            f"{self._name}|{self._version}|{stamp}|{count}|{self._dimension}|{self._metric}|{uuid}"
        )
        return hashlib.sha256(raw.encode()).hexdigest()[:16]

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        """Stored vectors for ``ids`` in the order asked: float32 (n, d), found (n,), dims
        (n,), texts from the text column when there is one. Duplicate ids: first row wins."""
        asked = [str(i) for i in ids]
        cols = [self._idcol, self._vcol] + ([self._textcol] if self._textcol else [])
        rows: dict[str, tuple[Any, str | None]] = {}
        unique = list(dict.fromkeys(asked))
        for start in range(0, len(unique), FETCH_BATCH):
            part = unique[start : start + FETCH_BATCH]
            res = self._take(part, cols)
            if res is None:  # offsets unusable for this batch: filter by id instead
                literals = self._literals(part)
                if not literals:
                    continue
                where = f"{quote_ident(self._idcol)} IN ({', '.join(literals)})"
                query = self._tbl.search().where(where).select(cols).limit(None)
                res = self._call("fetch", query.to_arrow)
            got_ids = self._ids_of(res.column(self._idcol))
            col = res.column(self._vcol)
            mat, got_dims = self._vectors_of(col)
            # fixed-length rows go through numpy; ragged ones keep their true length
            vecs = list(mat) if (got_dims == self._dimension).all() else col.to_pylist()
            texts = res.column(self._textcol).to_pylist() if self._textcol else [None] * len(vecs)
            for vid, vec, text in zip(got_ids, vecs, texts, strict=True):
                rows.setdefault(vid, (vec, text if isinstance(text, str) else None))
        found = np.array([i in rows for i in asked], dtype=bool)
        vectors, dims = pack_rows(
            [rows[i][0] if i in rows else None for i in asked], self._dimension
        )
        return Fetched(
            ids=asked,
            vectors=vectors,
            found=found,
            dims=dims,
            texts=[rows[i][1] if i in rows else None for i in asked] if self._textcol else None,
        )

    def _take(self, part: list[str], cols: list[str]) -> Any:
        """Rows for ``part`` by row offset (no table scan per batch), or None to fall back.

        The id -> offset map is read once from a projected scan of the id column. A batch
        whose returned ids differ from the ones asked (a table whose scan order is not its
        offset order) returns None, so the caller filters by id instead: never a wrong row.
        """
        if self._offset_of is None:
            offsets: dict[str, int] = {}
            row = 0
            for page in self._pages([self._idcol], 10 * FETCH_BATCH, "read ids"):
                for vid in self._ids_of(page.column(self._idcol)):
                    offsets.setdefault(vid, row)
                    row += 1
            self._offset_of = offsets
        wanted = [self._offset_of[i] for i in part if i in self._offset_of]
        if not wanted:
            return None
        res = self._call("fetch", lambda: self._tbl.take_offsets(wanted).select(cols).to_arrow())
        expected = {i for i in part if i in self._offset_of}
        if set(self._ids_of(res.column(self._idcol))) != expected:
            return None
        return res

    def _literals(self, ids: list[str]) -> list[str]:
        if not self._t.id_is_int:
            return [_quote_str(i) for i in ids]
        out = []
        for i in ids:
            try:
                out.append(str(int(i)))
            except ValueError:
                continue  # cannot match an integer id column
        return out

    def _scan(self, batch: int) -> Iterator[VectorBatch]:
        """Every row once, page by page, reading only the id/vector/text columns: float32
        (n, d) blocks of at most ``batch`` rows."""
        cols = [self._idcol, self._vcol] + ([self._textcol] if self._textcol else [])
        for page in self._pages(cols, batch, "scan"):
            vectors, dims = self._vectors_of(page.column(self._vcol))
            texts: list[str | None] | None = None
            if self._textcol:
                texts = [
                    t if isinstance(t, str) else None
                    for t in page.column(self._textcol).to_pylist()
                ]
            yield VectorBatch(
                ids=self._ids_of(page.column(self._idcol)),
                vectors=vectors,
                dims=dims,
                texts=texts,
            )

    def _query_batch(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Normal (index) search: float32 (q, d) -> D float32 (q, k) ``_distance`` (lower is
        nearer; NaN where missing), I object (q, k) ids (None where missing)."""
        return self._vector_search(vectors, k, False)

    def _native_filter(self, node: Any) -> Any:
        """The ``where`` string over the table's columns, or inside its ``metadata``
        struct column when the filter's fields are not top-level columns."""
        from ...filters import check_fields, fields_of, translate
        from ..local_filtering import lance_fields

        top, struct, integers = lance_fields(self._tbl.schema, self._vcol)
        heads = {f.split(".")[0] for f in fields_of(node)}
        inside = struct is not None and not heads <= set(top)
        # a field of the struct is known by its own name and by its dotted path
        # ('profile' and 'metadata.profile', as the metadata is shown): both are accepted,
        # and a name that is neither is refused with the closest one (exit 2), not sent
        subs: list[str] = []
        if struct is not None:
            nested = self._tbl.schema.field(struct).type
            subs = [nested.field(i).name for i in range(nested.num_fields)]
        known = (subs if inside else []) + top + [f"{struct}.{n}" for n in subs]
        check_fields(node, known)
        return translate(
            node,
            "lancedb",
            struct=struct if inside else None,
            integer_fields=integers.get(struct if inside and struct is not None else "", ()),
        )

    def _filtered_query_batch(
        self, vectors: np.ndarray, k: int, native: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        return self._vector_search(vectors, k, False, native)

    def metadata_of(self, ids: Sequence[str]) -> list[dict[str, Any]]:
        """The non-vector columns of ``ids`` (read once for the table, then looked up)."""
        from ..local_filtering import lance_metadata

        rows = lance_metadata(self)
        return [rows.get(i, {}) for i in ids]

    def _exact_batch(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Flat scan (``bypass_vector_index``) with the same distance type: exact ``_distance``."""
        return self._vector_search(vectors, k, True)

    def _search_dimension(self) -> int | None:
        return self._dimension or None

    def close(self) -> None:
        """Drop the table handle."""
        tbl, self._tbl = self._tbl, None
        closer = getattr(tbl, "close", None)
        if callable(closer):
            try:
                closer()
            except Exception:  # already closed
                pass
