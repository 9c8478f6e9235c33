"""Milvus collections: ``milvus:URI?collection=C[&vector=FIELD&id=FIELD&text=FIELD&db=NAME]``.

``URI`` is a Milvus Lite path ending in ``.db`` (served by pymilvus from an in-process gRPC
server) or a server's ``http(s)://host:port``; the token comes from ``MILVUS_TOKEN`` only. Ids
are the primary key (INT64 or VARCHAR) as a string, or ``&id=FIELD``; texts ``&text=FIELD``
(default ``text``).

Scores are Milvus's own: ``COSINE`` -> ``cos``, ``IP`` -> ``dot``, ``L2`` -> ``l2^2``. ``FLAT``
(or no index, in Lite: brute force, COSINE) is exact; ``IVF_FLAT`` is exact with every list
probed; other indexes have no exact mode (``has_exact`` False). A collection that is not
loaded is loaded and released again on :meth:`MilvusStore.close`
(``info().details["loaded_by_indexcheck"]``). Scans use ``query_iterator`` pages of ``batch``
rows (at most 16,384, pymilvus's limit); fetches ask 1,000 ids at a time. Milvus Lite keeps
every segment in memory and a full scan's time grows with the square of the rows.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from functools import partial
from typing import Any

import numpy as np
import xxhash

from ...errors import DimensionMismatchError
from ..base import BaseStore, Fetched, StoreInfo, StoreSpec, VectorBatch, pack_rows
from ..hits import Hits, gather
from ..params import Str
from .opening import MILVUS_ERRORS, MilvusCollection, open_collection

#: Milvus metric -> (score formula, higher_is_better)
FETCH_BATCH = 1000
QUERY_BATCH = 64
INT64_RANGE = (-(2**63), 2**63 - 1)


class _NoMvccWarning(logging.Filter):
    """Drops pymilvus's per-iterator warning that Milvus Lite has no MVCC timestamp."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "failed to get mvccTs" not in record.getMessage()


_ITERATOR_LOG = logging.getLogger("pymilvus.client.iterator.query_iterator")
_NO_MVCC_WARNING = _NoMvccWarning()


def _quote(text: str) -> str:
    """A Milvus filter string literal (double-quoted, C-style escapes)."""
    escaped = (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )
    return f'"{escaped}"'


def _int_key(text: str) -> int | None:
    """The INT64 key a decimal id string names (canonical spelling only), else None."""
    body = text[1:] if text.startswith("-") else text
    if not body.isdigit() or str(int(text)) != text:
        return None
    value = int(text)
    return value if INT64_RANGE[0] <= value <= INT64_RANGE[1] else None


class MilvusStore(BaseStore):
    """Read-only view of one Milvus collection (server or Milvus Lite)."""

    scheme = "milvus"
    errors = MILVUS_ERRORS
    dimension_message = (
        "query vectors have dimension {got} but collection '{store._collection}' in "
        "{store._where} holds {want}; embed with the model that built the index"
    )
    dimension_error = DimensionMismatchError
    no_exact_message = (
        "{store._where}: a {store._c.index_type} index has no exact search mode; "
        "compare against exact search computed from the fetched vectors instead"
    )
    #: Milvus returns rows by segment and primary key: no build order
    ordered = False
    order_source = "milvus order (no build order)"
    params = {"collection": Str(), "vector": Str(), "id": Str(), "text": Str(), "db": Str()}
    fetch_batch = FETCH_BATCH
    #: pymilvus's ``query_iterator`` refuses a larger ``batch_size`` (its MAX_BATCH_SIZE)
    scan_batch = 16_384
    query_batch = QUERY_BATCH

    def __init__(self, opened: MilvusCollection) -> None:
        self._c = opened  # what the collection is: schema, index, metric, load state
        self.spec, self._client, self._where = opened.spec, opened.client, opened.where
        self._collection = opened.name
        self._closed = False
        self.has_exact = opened.exact_params is not None

    @classmethod
    def from_spec(cls, spec: StoreSpec, options: Any = None) -> MilvusStore:
        return cls(open_collection(spec))

    def _error_fields(self, doing: str) -> dict[str, Any]:
        return {"where": self._where}

    # -- Protocol -------------------------------------------------------------------

    def _count(self) -> int:
        client, name = self._client, self._collection
        rows = self._call(
            "count rows",
            lambda: client.query(
                name, filter="", output_fields=["count(*)"], consistency_level="Strong"
            ),
        )
        return int(rows[0]["count(*)"])

    def info(self) -> StoreInfo:
        """Count, dimension, metric and Milvus's score formula for it."""
        exact = "none"
        if self._c.exact_params == {}:
            exact = "the normal search is exact"
        elif self._c.exact_params:
            exact = f"IVF_FLAT with nprobe={self._c.exact_params['nprobe']} (every list)"
        details: dict[str, Any] = {
            "mode": "lite" if self._c.lite else "server",
            "collection": self._collection,
            "vector_field": self._c.vector,
            "primary_key": self._c.pk,
            "id_field": self._c.id_field,
            "text_field": self._c.text_field,
            "index_type": self._c.index_type,
            "index": {k: v for k, v in self._c.index.items() if k not in ("field_name",)},
            "exact_search": exact,
            "loaded_by_indexcheck": self._c.loaded_by_us,
        }
        c = self._c
        return self.described(self._count(), c.dimension, c.metric, c.approximate, details)

    def fingerprint(self) -> str:
        """Order-independent digest of every (id, vector) plus count, schema and index.

        Milvus exposes no content version, so this reads the whole collection once
        (one pass of :meth:`iter_vectors`); any change to any row's id or vector shows.
        """
        total, mixed, count = 0, 0, 0
        for batch in self._scan(batch=2000, with_extras=False):
            for vid, vec in zip(batch.ids, batch.vectors, strict=True):
                digest = xxhash.xxh3_64_intdigest(vid.encode() + b"\0" + vec.tobytes())
                total = (total + digest) % (1 << 64)
                mixed ^= digest
                count += 1
        head = xxhash.xxh3_64_hexdigest(
            repr(
                (self._c.schema_summary, self._c.metric, self._c.index_type, self._c.vector)
            ).encode()
        )
        return f"milvus:{count}:{self._c.dimension}:{head}:{total:016x}{mixed:016x}"

    def _filter(self, keys: list[str]) -> str:
        if self._c.int_ids:
            literals = [str(v) for v in (_int_key(k) for k in keys) if v is not None]
        else:
            literals = [_quote(k) for k in keys]
        return f"{self._c.id_field} in [{', '.join(literals)}]" if literals else ""

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        """Stored vectors float32 (n, d) for ``ids`` in order, found mask, dims, texts."""
        fields = [self._c.id_field, self._c.vector] + (
            [self._c.text_field] if self._c.text_field else []
        )
        client, name = self._client, self._collection
        by_id: dict[str, dict[str, Any]] = {}
        expr = self._filter(ids)
        if expr:
            rows = self._call(
                "fetch rows",
                partial(
                    client.query,
                    name,
                    filter=expr,
                    output_fields=fields,
                    consistency_level="Strong",
                ),
            )
            for row in rows:
                by_id.setdefault(str(row[self._c.id_field]), row)
        found = np.array([vid in by_id for vid in ids], dtype=bool)
        vectors, dims = pack_rows(
            [by_id[v][self._c.vector] if v in by_id else None for v in ids], self._c.dimension
        )
        texts: list[str | None] | None = None
        if self._c.text_field:
            texts = [_text(by_id[v].get(self._c.text_field)) if v in by_id else None for v in ids]
        return Fetched(list(ids), vectors, found, dims, texts)

    def _scan(self, batch: int, with_extras: bool = True) -> Iterator[VectorBatch]:
        """Every row once: ids, float32 (n, d) vectors, texts and scalar fields."""
        client, name = self._client, self._collection
        fields = [self._c.pk, self._c.id_field, self._c.vector]
        if with_extras:
            fields += self._c.scalars + ([self._c.text_field] if self._c.text_field else [])
        fields = list(dict.fromkeys(fields))
        if self._c.lite:
            _ITERATOR_LOG.addFilter(_NO_MVCC_WARNING)
        iterator = self._call(
            "start reading rows",
            partial(
                client.query_iterator,
                name,
                batch_size=batch,
                output_fields=fields,
                consistency_level="Strong",
            ),
        )
        try:
            while True:
                rows = self._call("read rows", iterator.next)
                if not rows:
                    return
                vectors, dims = pack_rows([r[self._c.vector] for r in rows], self._c.dimension)
                texts = metadata = None
                if with_extras:
                    if self._c.text_field:
                        texts = [_text(r.get(self._c.text_field)) for r in rows]
                    metadata = [
                        {
                            k: v
                            for k, v in r.items()
                            if k not in (self._c.vector, self._c.text_field)
                        }
                        for r in rows
                    ]
                yield VectorBatch(
                    ids=[str(r[self._c.id_field]) for r in rows],
                    vectors=vectors,
                    dims=dims,
                    texts=texts,
                    metadata=metadata,
                )
        finally:
            iterator.close()
            _ITERATOR_LOG.removeFilter(_NO_MVCC_WARNING)

    def _query_batch(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Normal search: float32 (q, d) -> (D (q, k) Milvus distance, I (q, k) ids)."""
        return self._search(vectors, k, {})

    def _native_filter(self, node: Any) -> Any:
        """The ``filter`` expression over the scalar fields (a field that is not one is
        read as a dynamic field); string values are quoted, names checked."""
        from ...filters import translate

        return translate(node, "milvus", json_field=None, columns=self._c.scalars)

    def _filtered_query_batch(
        self, vectors: np.ndarray, k: int, native: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        return self._search(vectors, k, {}, expr=native)

    def _exact_batch(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact search in the same scale: FLAT as is, IVF_FLAT probing every list."""
        return self._search(vectors, k, self._c.exact_params or {})

    def _search_dimension(self) -> int:
        return int(self._c.dimension)

    def _search(
        self, xq: np.ndarray, k: int, params: dict[str, Any], expr: str = ""
    ) -> tuple[np.ndarray, np.ndarray]:
        client, name = self._client, self._collection
        search_params = {"metric_type": self._c.metric, "params": params}

        def search(block: np.ndarray) -> Hits:
            result = self._call(
                "search",
                partial(
                    client.search,
                    name,
                    data=block.tolist(),
                    limit=k,
                    anns_field=self._c.vector,
                    search_params=search_params,
                    filter=expr,
                    output_fields=[self._c.id_field],
                    consistency_level="Strong",
                ),
            )
            by_pk = self._c.id_field == self._c.pk
            return [
                [
                    (h["distance"], str(h.id if by_pk else h["entity"][self._c.id_field]))
                    for h in hits
                ]
                for hits in result
            ]

        return gather(xq, k, QUERY_BATCH, search)

    def close(self) -> None:
        """Release the collection if opening loaded it, then the client (and Lite server)."""
        if not self._closed:
            self._closed = True
            self._c.close()


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
