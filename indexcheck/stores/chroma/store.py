"""Chroma collections: ``chroma:PATH?collection=C`` or ``chroma:http://host:port?collection=C``.

``PATH`` is a ``PersistentClient`` directory; an ``http(s)://`` location is a server reached
through ``HttpClient`` (``&tenant=``/``&database=`` optional; credentials only from Chroma's
own environment variables). Chroma writes to a persistent directory whenever a client opens
it (an ``acquire_write`` row, a WAL replay into the HNSW files), so a local store is opened
on a private copy: ``chroma.sqlite3`` through SQLite's online backup from a ``mode=ro``
connection, plus the collection's segment folders, deleted on :meth:`ChromaStore.close`.

Scores are Chroma's distances, lower is nearer: ``l2`` -> ``l2^2``, ``ip`` -> ``1-dot``,
``cosine`` -> ``1-cos``. The normal query is HNSW; there is no exact search (``has_exact``
False). No embedding function is ever made or called. Scans page with ``get(limit, offset)``
(at most ``scan_batch`` rows) and keep only the set of ids read, to notice a page that repeats
rows; fetches ask 500 ids at a time. Memory figures: docs/performance.md.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Iterator
from functools import partial
from typing import Any

import numpy as np

from ...errors import IncompleteResultError
from ..base import BaseStore, Fetched, StoreInfo, StoreSpec, VectorBatch, empty_result, pack_rows
from ..node_rows import embedded_texts
from ..params import Str
from .connect import CHROMA_ERRORS, Connection, connect
from .search import ChromaFilter
from .snapshot import _remove_tree

#: Chroma space -> (score formula over cos/dot/l2, higher_is_better)
DEFAULT_SPACE = "l2"
FETCH_BATCH = 500
QUERY_BATCH = 100
SAMPLE_ROWS = 256


def _space_of(collection: Any) -> str:
    """The collection's distance space: schema, then configuration, then legacy metadata."""
    try:
        schema = collection.get_model().serialized_schema or {}
    except Exception:  # older clients have no schema
        schema = {}
    emb = (schema.get("keys") or {}).get("#embedding") or {}
    for holder in (emb, schema.get("defaults") or {}):
        space = ((holder.get("float_list") or {}).get("vector_index") or {}).get("config") or {}
        if isinstance(space.get("space"), str):
            return str(space["space"])
    conf = getattr(collection, "configuration_json", None) or {}
    for key in ("hnsw", "spann"):
        sub = conf.get(key) or {}
        if isinstance(sub.get("space"), str):
            return str(sub["space"])
    meta = collection.metadata or {}
    if isinstance(meta.get("hnsw:space"), str):
        return str(meta["hnsw:space"])
    return DEFAULT_SPACE


def _index_params(collection: Any) -> dict[str, Any]:
    conf = getattr(collection, "configuration_json", None) or {}
    for key in ("hnsw", "spann"):
        if conf.get(key):
            params = {k: v for k, v in dict(conf[key]).items() if k != "space"}
            return {"index": key, "index_params": params}
    return {"index": "hnsw", "index_params": {}}


class ChromaStore(ChromaFilter, BaseStore):
    """A read-only view of one Chroma collection (local snapshot or HTTP server).

    Scores: Chroma's distance for the collection space (``l2^2``, ``1-dot`` or ``1-cos``),
    lower is nearer; ids are Chroma's string ids.
    """

    scheme = "chroma"
    #: Chroma returns rows in its own storage order, not insertion order: no build order
    ordered = False
    order_source = "chroma order (no build order)"
    params = {"collection": Str(), "tenant": Str(), "database": Str()}
    fetch_batch = FETCH_BATCH
    #: chromadb 1.5's local engine fails a ``get`` page of more than 32,766 rows ("too many
    #: SQL variables": SQLite's default limit of bound variables)
    scan_batch = 16_384
    query_batch = QUERY_BATCH
    errors = CHROMA_ERRORS
    no_exact_message = (
        "chroma offers no exact search; compute the exact neighbours from fetched "
        "vectors instead (has_exact is False)"
    )

    def __init__(self, conn: Connection) -> None:
        self.spec = conn.spec
        self._client = conn.client
        self._col = conn.collection
        self._mode = conn.mode
        self._snapshot_dir = conn.snapshot_dir
        self._seq = conn.seq
        self._tenant = conn.tenant
        self._database = conn.database
        self._space = _space_of(self._col)
        self._dimension = self._find_dimension()
        snapshot = conn.snapshot_dir
        self._finalizer = weakref.finalize(self, _remove_tree, snapshot) if snapshot else None

    @classmethod
    def from_spec(cls, spec: StoreSpec, options: Any = None) -> ChromaStore:
        return cls(connect(spec))

    # -- helpers -----------------------------------------------------------------------

    def _error_fields(self, doing: str) -> dict[str, Any]:
        name = getattr(getattr(self, "_col", None), "name", "?")
        return {"what": f"chroma {doing} on collection '{name}'"}

    def _get(self, **kwargs: Any) -> Any:
        """``collection.get(**kwargs)`` through ``_call``."""
        return self._call("get", partial(self._col.get, **kwargs))

    def _count(self) -> int:
        return int(self._call("count", self._col.count))

    def _search_dimension(self) -> int | None:
        return self._dimension or None

    def _find_dimension(self) -> int:
        dim = None
        try:
            dim = self._col.get_model().dimension
        except Exception:
            dim = None
        if isinstance(dim, int) and dim > 0:
            return dim
        got = self._get(limit=1, include=["embeddings"])
        embs = got.get("embeddings")
        if embs is not None and len(embs):
            return int(len(embs[0]))
        return 0

    def _rows(self, got: dict[str, Any]) -> tuple[list[str], list[Any], list[Any], list[Any]]:
        ids = [str(i) for i in got.get("ids") or []]
        n = len(ids)
        embs = got.get("embeddings")
        docs = list(got.get("documents") or [None] * n)
        metas = list(got.get("metadatas") or [None] * n)
        where = f"chroma collection '{self._col.name}'"  # LlamaIndex rows: the embedded text
        return (
            ids,
            list(embs) if embs is not None else [None] * n,
            embedded_texts(docs, metas, where),
            metas,
        )

    # -- Protocol ----------------------------------------------------------------------

    def info(self) -> StoreInfo:
        """Count, dimension and score scale; ``score`` is Chroma's documented distance."""
        count = self._count()
        details: dict[str, Any] = {
            "collection": self._col.name,
            "collection_id": str(self._col.id),
            "tenant": self._tenant,
            "database": self._database,
            "mode": self._mode,
            **_index_params(self._col),
        }
        if self._mode == "persistent":
            details["read_only_by"] = "snapshot copy in a temporary directory"
        return self.described(count, self._dimension, self._space, True, details)

    def fingerprint(self) -> str:
        """sha256 prefix over collection id, count, dimension, space, the ids and vectors of
        the first and last 256 rows, and (local) the collection's last log sequence id."""
        h = hashlib.sha256()
        count = self._count()
        h.update(f"{self._col.id}|{count}|{self._dimension}|{self._space}|{self._seq}".encode())
        offsets = {0, max(0, count - SAMPLE_ROWS)} if count else set()
        for off in sorted(offsets):
            got = self._get(limit=SAMPLE_ROWS, offset=off, include=["embeddings"])
            ids, embs, _, _ = self._rows(got)
            for vid, emb in zip(ids, embs, strict=True):
                h.update(vid.encode() + b"\0")
                if emb is not None:
                    h.update(np.asarray(emb, dtype=np.float32).tobytes())
        return h.hexdigest()[:16]

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        """Stored vectors for ``ids`` in the order asked: float32 (n, d), found (n,), dims
        (n,); texts are the stored documents (None when no fetched row has one)."""
        asked = ids
        rows: dict[str, tuple[Any, Any]] = {}
        unique = list(dict.fromkeys(asked))
        if unique:
            got = self._get(ids=unique, include=["embeddings", "documents", "metadatas"])
            rid, embs, docs, _ = self._rows(got)
            for vid, emb, doc in zip(rid, embs, docs, strict=True):
                rows[vid] = (emb, doc)
        found = np.array([i in rows for i in asked], dtype=bool)
        vectors, dims = pack_rows(
            [rows[i][0] if i in rows else None for i in asked], self._dimension
        )
        texts: list[str | None] = [rows[i][1] if i in rows else None for i in asked]
        return Fetched(
            ids=asked,
            vectors=vectors,
            found=found,
            dims=dims,
            texts=texts if any(t is not None for t in texts) else None,
        )

    def _scan(self, batch: int) -> Iterator[VectorBatch]:
        """Every row once, in Chroma's storage order, paged with limit/offset: float32
        (n, d) blocks with documents and metadata."""
        total = self._count()
        seen: set[str] = set()
        offset = 0
        while True:
            got = self._get(
                limit=batch, offset=offset, include=["embeddings", "documents", "metadatas"]
            )
            ids, embs, docs, metas = self._rows(got)
            if not ids:
                break
            if seen.intersection(ids):
                raise IncompleteResultError(
                    f"chroma collection '{self._col.name}' changed while it was read (a page "
                    "repeated ids); run the check again when no writer is active"
                )
            seen.update(ids)
            offset += len(ids)
            vectors, dims = pack_rows(embs, self._dimension)
            yield VectorBatch(
                ids=ids,
                vectors=vectors,
                dims=dims,
                texts=[d if isinstance(d, str) else None for d in docs],
                metadata=[dict(m) if m else {} for m in metas],
            )
        if len(seen) != total:
            raise IncompleteResultError(
                f"chroma collection '{self._col.name}' returned {len(seen)} of {total} rows "
                "while paging; run the check again when no writer is active"
            )

    def _query_batch(
        self, part: np.ndarray, k: int, where: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """HNSW search (under ``where``: ChromaFilter): float32 (q, d) -> D float32 (q, k)
        distances (lower is nearer; NaN where missing), I object (q, k) ids or None."""
        D, I = empty_result(part.shape[0], k)
        ask = {"where": where} if where is not None else {}
        got = self._call(
            "query",
            partial(
                self._col.query, query_embeddings=part, n_results=k, include=["distances"], **ask
            ),
        )
        for row, (rid, dist) in enumerate(
            zip(got.get("ids") or [], got.get("distances") or [], strict=True)
        ):
            m = min(len(rid), k)
            D[row, :m] = np.asarray(dist[:m], dtype=np.float32)
            I[row, :m] = [str(x) for x in rid[:m]]
        return D, I

    def close(self) -> None:
        """Release the client and delete the snapshot copy, if any."""
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:  # closing twice or a dead server is not an error here
                pass
        if self._finalizer is not None:
            self._finalizer()
