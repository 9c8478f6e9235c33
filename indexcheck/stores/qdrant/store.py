"""Qdrant collections: ``qdrant:URL_OR_PATH?collection=C[&vector=NAME&id_field=F&text_field=T]``.

``URL_OR_PATH`` is a server's ``http(s)://`` URL (key from ``QDRANT_API_KEY`` only) or a
``QdrantClient(path=...)`` folder (local mode, in-process). Ids are ``str(point id)`` (decimal,
or a canonical lower-case UUID), or ``payload[F]`` with ``&id_field=F`` (a payload-id -> point-id
dict is built on the first fetch); texts ``payload[T]``: without ``&text_field=`` the layout
is read from a point: LangChain's ``page_content`` (metadata nested under ``metadata``, where
filters then look), LlamaIndex's node under ``_node_content`` (the text it embedded: the
metadata header and the text), else ``text``.

Scores: ``Cosine`` -> ``cos``, ``Dot`` -> ``dot``, ``Euclid`` -> ``l2`` (not squared),
``Manhattan`` -> ``l1``. Cosine vectors are normalised on read in both modes (a server stores
them normalised; local mode keeps the raw ones). Local mode searches by brute force, stores
points as pickles (opened only with ``trust_pickle=True``), writes nothing to a folder holding
``meta.json`` and ``.lock`` and locks ``.lock`` while open; it holds the whole collection in
this process. Scans scroll pages of ``batch`` points and hold one; fetches ask 256 ids at a
time. Memory figures: docs/performance.md.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from ...errors import DimensionMismatchError
from ...vectors import normalize_rows
from ..base import BaseStore, Fetched, StoreInfo, StoreSpec, VectorBatch, pack_rows
from ..hits import Hits, gather
from ..node_rows import payload_text
from ..params import Str
from .opening import QDRANT_ERRORS, QdrantCollection, open_collection

#: Qdrant distance -> (score formula, higher_is_better)
FETCH_BATCH = 256
QUERY_BATCH = 64
SAMPLE_POINTS = 1024
MAX_UINT64 = 2**64 - 1


def _point_id(text: str) -> int | str | None:
    """The Qdrant point id an indexcheck id names, or None when it names none."""
    if text.isdigit() and str(int(text)) == text and int(text) <= MAX_UINT64:
        return int(text)
    try:
        canonical = str(uuid.UUID(text))
    except ValueError:
        return None
    return text if canonical == text else None


class QdrantStore(BaseStore):
    """Read-only view of one Qdrant collection (server or local mode)."""

    scheme = "qdrant"
    errors = QDRANT_ERRORS
    dimension_message = (
        "query vectors have dimension {got} but {store._where} holds {want}; embed with the "
        "model that built the index"
    )
    dimension_error = DimensionMismatchError
    #: Qdrant scrolls by point id: no build order
    ordered = False
    order_source = "qdrant order (no build order)"
    params = {"collection": Str(), "vector": Str(), "id_field": Str(), "text_field": Str()}
    fetch_batch = FETCH_BATCH
    query_batch = QUERY_BATCH

    def __init__(self, opened: QdrantCollection) -> None:
        self._c = opened  # what the collection is: vector, dimension, distance, config
        self.spec, self._client, self._models = opened.spec, opened.client, opened.models
        self._collection, self._location = opened.collection, opened.location
        self._where = opened.where
        self._point_of: dict[str, Any] | None = None
        self._closed = False
        self.has_exact = True

    @classmethod
    def from_spec(cls, spec: StoreSpec, options: Any = None) -> QdrantStore:
        return cls(open_collection(spec, options))

    # -- helpers ---------------------------------------------------------------

    def _error_fields(self, doing: str) -> dict[str, Any]:
        return {"location": self._location, "collection": self._collection}

    def _scroll(
        self, doing: str, limit: int, offset: Any, payload: bool | list[str], vectors: bool = True
    ) -> tuple[list[Any], Any]:
        """One page of points from ``offset`` (None: the first), and the next offset."""
        with_vectors = self._with_vectors() if vectors else False
        page: tuple[list[Any], Any] = self._call(
            doing,
            partial(
                self._client.scroll,
                self._collection,
                limit=limit,
                offset=offset,
                with_payload=payload,
                with_vectors=with_vectors,
            ),
        )
        return page

    def _points(self, doing: str, point_ids: list[Any], payload: list[str | None]) -> list[Any]:
        """The points ``point_ids`` with their vector and the ``payload`` keys."""
        found: list[Any] = self._call(
            doing,
            partial(
                self._client.retrieve,
                self._collection,
                ids=point_ids,
                with_payload=payload,
                with_vectors=self._with_vectors(),
            ),
        )
        return found

    def _count(self) -> int:
        client, name = self._client, self._collection
        return int(self._call("count points", lambda: client.count(name, exact=True).count))

    def _with_vectors(self) -> bool | list[str]:
        return [self._c.vector] if self._c.vector else True

    def _vector_of(self, record: Any) -> Any:
        vec = record.vector
        if isinstance(vec, dict):
            return vec.get(self._c.vector or "")
        return vec

    def _pack(self, rows: Sequence[Any | None]) -> tuple[np.ndarray, np.ndarray]:
        """float32 (n, d) vectors and stored lengths; Cosine rows unit-normalised.

        Qdrant scores Cosine on unit vectors. A server normalises when storing; local
        mode keeps the raw vectors on disk and normalises its in-memory copy only on
        upsert or, in place, when a search first touches it. Normalising here gives the
        vectors the engine scores with, whatever ran before.
        """
        vectors, dims = pack_rows(rows, self._c.dimension)
        if self._c.distance == "Cosine":
            vectors = normalize_rows(vectors)
        return vectors, dims

    def _id_of(self, record: Any) -> str:
        if self._c.id_field is None:
            return str(record.id)
        value = (record.payload or {}).get(self._c.id_field)
        if value is None:
            # A point without the id field has no indexcheck id; keep it visible.
            return f"<no {self._c.id_field}: point {record.id}>"
        return str(value)

    def _text_of(self, record: Any) -> str | None:
        return payload_text(record.payload or {}, self._c.text_field, self._c.where)

    def _search_params(self, exact: bool) -> Any:
        if self._c.local:
            return None  # local mode is brute force; it warns about any search params
        models = self._models
        if exact:
            return models.SearchParams(
                exact=True, quantization=models.QuantizationSearchParams(ignore=True)
            )
        return None

    # -- Protocol ---------------------------------------------------------------

    def info(self) -> StoreInfo:
        """Count, dimension, distance and Qdrant's score formula for it."""
        count = self._count()
        details = self._c.details()
        c = self._c
        return self.described(int(count), c.dimension, c.distance, not c.local, details)

    def fingerprint(self) -> str:
        """Digest of count, collection config and content.

        Local mode hashes the collection's whole ``storage.sqlite`` file, so any change
        to any point shows. On a server (or a local alias) it hashes the ids and vectors
        of the first 1024 points in id order; changes beyond those show only through
        the count.
        """
        name = self._collection
        h = xxhash.xxh3_128()
        count = self._count()
        config = self._c.info.config.params.model_dump(mode="json")
        h.update(json.dumps([count, config], sort_keys=True, default=str).encode())
        sqlite = Path(self._location) / "collection" / name / "storage.sqlite"
        if self._c.local and sqlite.is_file():
            # File bytes, not vectors read back: local mode renormalises Cosine vectors in
            # memory during searches, which changes their last bits.
            with sqlite.open("rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
        else:
            records, _ = self._scroll("read points", SAMPLE_POINTS, None, bool(self._c.id_field))
            for record in records:
                h.update(self._id_of(record).encode() + b"\0")
                vec = self._vector_of(record)
                if vec is not None:
                    h.update(self._pack([vec])[0].tobytes())
        return f"qdrant:{count}:{self._c.dimension}:{h.hexdigest()}"

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        """Stored vectors float32 (n, d) for ``ids`` in order, found mask, dims, texts."""
        by_id: dict[str, Any] = {}
        if self._c.id_field is None:
            records = self._retrieve(ids)
        else:
            records = self._scroll_by_payload(ids)
        for record in records:
            by_id.setdefault(self._id_of(record), record)
        rows: list[Any | None] = []
        texts: list[str | None] = []
        found = np.zeros(len(ids), dtype=bool)
        for i, vid in enumerate(ids):
            record = by_id.get(vid)
            if record is None:
                rows.append(None)
                texts.append(None)
                continue
            found[i] = True
            rows.append(self._vector_of(record))
            texts.append(self._text_of(record))
        vectors, dims = self._pack(rows)
        has_texts = any(t is not None for t in texts)
        return Fetched(list(ids), vectors, found, dims, texts if has_texts else None)

    def _retrieve(self, batch: list[str]) -> list[Any]:
        point_ids = [pid for pid in (_point_id(v) for v in batch) if pid is not None]
        if not point_ids:
            return []
        return self._points("fetch points", point_ids, list(self._c.text_keys))

    def _scroll_by_payload(self, batch: list[str]) -> list[Any]:
        """Points whose payload id is in ``batch``, through a payload-id -> point-id map.

        The map is read once (one scroll of payload ids, no vectors) and reused: a filtered
        scroll per batch costs a full scan in local mode (no payload index), which made a
        fetch of n ids O(n^2).
        """
        if self._point_of is None:
            key = [str(self._c.id_field)]
            mapping: dict[str, Any] = {}
            offset: Any = None
            while True:
                records, offset = self._scroll("read payload ids", 10_000, offset, key, False)
                for r in records:
                    mapping.setdefault(self._id_of(r), r.id)
                if offset is None:
                    break
            self._point_of = mapping
        point_ids = [self._point_of[v] for v in batch if v in self._point_of]
        if not point_ids:
            return []
        payload = [self._c.id_field, *self._c.text_keys]
        return self._points("fetch points by payload id", point_ids, payload)

    def _scan(self, batch: int) -> Iterator[VectorBatch]:
        """Every point once, in id order: ids, float32 (n, d) vectors, texts, payloads."""
        offset: Any = None
        while True:
            records, offset = self._scroll("read points", batch, offset, True)
            if records:
                vectors, dims = self._pack([self._vector_of(r) for r in records])
                texts = [self._text_of(r) for r in records]
                metadata = [self._c.metadata_of(dict(r.payload or {})) for r in records]
                yield VectorBatch(
                    ids=[self._id_of(r) for r in records],
                    vectors=vectors,
                    dims=dims,
                    texts=texts,
                    metadata=metadata,
                )
            if offset is None:
                return

    def _query_batch(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Normal search: float32 (q, d) -> (D (q, k) Qdrant score, I (q, k) ids)."""
        return self._search(vectors, k, exact=False)

    def _native_filter(self, node: Any) -> Any:
        """A ``models.Filter`` on the payload (dotted paths address nested keys)."""
        from ...filters import translate

        return translate(node, "qdrant", prefix=self._c.filter_prefix)

    def _filtered_query_batch(
        self, vectors: np.ndarray, k: int, native: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        return self._search(vectors, k, exact=False, query_filter=native)

    def _exact_batch(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Full-scan search (``exact=true``, quantization ignored); same scale as query."""
        return self._search(vectors, k, exact=True)

    def _search_dimension(self) -> int:
        return int(self._c.dimension)

    def _search(
        self, xq: np.ndarray, k: int, exact: bool, query_filter: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        models = self._models
        params = self._search_params(exact)
        payload: bool | list[str] = [self._c.id_field] if self._c.id_field else False
        client, name = self._client, self._collection

        def search(block: np.ndarray) -> Hits:
            requests = [
                models.QueryRequest(
                    query=row.tolist(),
                    using=self._c.vector,
                    filter=query_filter,
                    limit=k,
                    params=params,
                    with_payload=payload,
                    with_vector=False,
                )
                for row in block
            ]
            responses = self._call(
                "search", partial(client.query_batch_points, name, requests=requests)
            )
            return [[(p.score, self._id_of(p)) for p in r.points] for r in responses]

        return gather(xq, k, QUERY_BATCH, search)

    def close(self) -> None:
        """Release the client (and, in local mode, the folder lock)."""
        if not self._closed:
            self._closed = True
            self._client.close()
