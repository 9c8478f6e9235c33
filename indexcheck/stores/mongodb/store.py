"""MongoDB Atlas Vector Search: ``mongodb:URI?db=DB&collection=C[&index=NAME&vector=PATH
&text=FIELD&metadata=FIELD&num_candidates=N&timeout=S]``, read through ``pymongo`` 4.x.

Credentials from the environment only: the user in the URI and the password in
``MONGODB_PASSWORD``, or the whole URI in ``MONGODB_URI`` (spec ``mongodb:?db=...``); the
spec, messages and manifests never hold the password. The layout comes from the collection's
vector search index (``$listSearchIndexes``: path, ``numDimensions``, ``similarity``, the
``filter`` paths) and one document: LangChain's ``MongoDBAtlasVectorSearch`` (``text``,
``embedding``, metadata as top-level fields, ObjectId or string ``_id``) and LlamaIndex's
(``text``, ``embedding``, ``metadata`` sub-document, the node id as ``_id``) need no option.

Scores are Atlas's ``vectorSearchScore``: cosine ``(1+cos)/2``, dotProduct ``(1+dot)/2``,
euclidean ``1/(1+d)`` (``d`` the Euclidean distance). Search is ``$vectorSearch``; its
breadth is ``numCandidates`` (``?num_candidates=N`` sends max(N, k); without it ``10*k``,
what LangChain and LlamaIndex send by default), and ``exact: true`` is the exact search.
Scans page a ``find`` sorted on ``_id`` (a server cursor, one batch held). ``_id`` order is
not build order (string ids have none; ObjectIds made by several writers interleave), so
``ordered`` is False: positions come from ``--chunks``. Every command is a read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from ...errors import DimensionMismatchError, InputError
from ...remote.retry import RetryPolicy
from ...safety.redact import redactor
from ..arrays import fetched_in_order
from ..base import BaseStore, Fetched, StoreInfo, StoreSpec, VectorBatch, pack_rows
from ..hits import Hits, gather
from ..params import Float, Int, Str
from .errors import MONGODB_ERRORS, PASSWORD_ENV, URI_ENV
from .opening import Layout, Target, open_client, sniff, target

MAX_CANDIDATES = 10_000
OVERSAMPLING = 10  # LangChain's and LlamaIndex's numCandidates = 10 * k
FETCH_BATCH = 500
QUERY_BATCH = 32


class MongoStore(BaseStore):
    """Read-only view of one collection and its Atlas vector search index."""

    scheme = "mongodb"
    label = "MongoDB Atlas"
    ordered = False
    order_source = "_id order (no build order: string ids have none, ObjectIds interleave)"
    params = {
        "db": Str(),
        "collection": Str(),
        "index": Str(),
        "vector": Str(),
        "text": Str(),
        "metadata": Str(),
        "num_candidates": Int(min=1, max=MAX_CANDIDATES),
        "timeout": Float(min=0.1, max=600),
    }
    param_hints = {"password": f"the password goes in {PASSWORD_ENV} (or the URI in {URI_ENV})"}
    sweepable = ("num_candidates",)
    breadth = "num_candidates"
    has_exact = True
    errors = MONGODB_ERRORS
    fetch_batch = FETCH_BATCH
    query_batch = QUERY_BATCH
    dimension_error = DimensionMismatchError
    dimension_message = (
        "query vectors have dimension {got} but the vector index of {store._ns} holds {want}; "
        "embed with the model that built the index"
    )

    def __init__(self, client: Any, t: Target, layout: Layout, version: str,
                 values: dict[str, Any]) -> None:  # fmt: skip
        self._client, self._lay, self.version, self.values = client, layout, version, values
        self.spec, self.where = t.spec, t.where
        self._ns = f"{t.db}.{t.collection}"
        self._coll = client[t.db][t.collection]
        self._redact = redactor(t.password)
        self.retry = RetryPolicy(max_retries=3, base_delay=0.5, max_delay=8.0)
        self.requests = 0

    @classmethod
    def from_spec(cls, spec: StoreSpec, options: Any = None) -> MongoStore:
        values = cls.check_params(spec.params)
        t = target(spec)
        fields = {"where": t.where, "namespace": f"{t.db}.{t.collection}",
                  "redact": redactor(t.password)}  # fmt: skip

        def call(doing: str, fn: Any) -> Any:
            return MONGODB_ERRORS.call(doing, fn, **fields)

        timeout_ms = int(1000 * float(values.get("timeout", 20.0)))
        client = call("connect", lambda: open_client(t, timeout_ms))
        try:
            coll = client[t.db][t.collection]
            version = str(call("read the server version", client.server_info).get("version"))
            indexes = call("list the search indexes", lambda: list(coll.list_search_indexes()))
            sample = call("read a document", lambda: coll.find_one({}))
            layout = sniff(indexes, sample, spec.params, f"{t.db}.{t.collection}")
        except BaseException:
            client.close()
            raise
        return cls(client, t, layout, version, values)

    # -- helpers ----------------------------------------------------------------------------
    def _error_fields(self, doing: str) -> dict[str, Any]:
        return {"where": self.where, "namespace": self._ns}

    def _before_call(self) -> None:
        self.requests += 1

    def _text(self, doc: dict[str, Any], meta: dict[str, Any]) -> str | None:
        lay = self._lay
        value = doc.get(lay.text) if lay.text else None
        if not isinstance(value, str):
            return None
        if lay.writer == "llamaindex" and isinstance(meta.get("_node_content"), str):
            from ...inputs.formats.llamaindex import embedded_text_from_row

            return embedded_text_from_row(value, meta, f"document of {self._ns}")
        return value

    def _meta(self, doc: dict[str, Any]) -> dict[str, Any]:
        lay = self._lay
        if lay.metadata:
            m = doc.get(lay.metadata)
            return dict(m) if isinstance(m, dict) else {}
        skip = {"_id", lay.vector.split(".")[0], lay.text}
        return {k: v for k, v in doc.items() if k not in skip}

    def _rows(self, docs: list[dict[str, Any]]) -> VectorBatch:
        raw = []
        for d in docs:
            v: Any = d
            for part in self._lay.vector.split("."):
                v = v.get(part) if isinstance(v, dict) else None
            raw.append(v if isinstance(v, list) else None)
        vectors, dims = pack_rows(raw, self._lay.dimension)
        metas = [self._meta(d) for d in docs]
        texts = [self._text(d, m) for d, m in zip(docs, metas, strict=True)]
        return VectorBatch([str(d["_id"]) for d in docs], vectors, dims,
                           texts if self._lay.text else None, metas)  # fmt: skip

    # -- the Protocol -----------------------------------------------------------------------
    def info(self) -> StoreInfo:
        """Documents in the collection, the index's dimension and similarity, its score."""
        lay = self._lay
        count = self._call("count", self._coll.estimated_document_count)
        given = self.values.get("num_candidates")
        details: dict[str, Any] = {
            "namespace": self._ns,
            "version": self.version,
            "index": lay.index,
            "vector_field": lay.vector,
            "text_field": lay.text,
            "metadata_field": lay.metadata or "(top-level fields)",
            "filter_paths": list(lay.filter_paths),
            "similarity": lay.similarity,
            "writer": lay.writer,
            "id_source": "_id",
            "order": self.order_source,
            "search_breadth": f"numCandidates = max({given}, k)" if given is not None else
            f"numCandidates = {OVERSAMPLING}*k (LangChain's and LlamaIndex's default); set "
            "?num_candidates= to measure the app's",
            "exact_search": "$vectorSearch with exact: true",
            "read_only_by": "find, aggregate, count and listSearchIndexes only",
        }  # fmt: skip
        return self.described(int(count), lay.dimension, lay.similarity, True, details)

    def fingerprint(self) -> str:
        """sha256 prefix over version, namespace, count, the index definition, and the ids
        and vectors of the first 100 documents in ``_id`` order."""
        h = hashlib.sha256()
        count = self._call("count", self._coll.estimated_document_count)
        h.update(f"{self.version}|{self._ns}|{count}|{sorted(self._lay.definition.items())}"
                 .encode())  # fmt: skip
        for b in self._scan(100):
            for i, vid in enumerate(b.ids):
                h.update(vid.encode() + b"\0" + b.vectors[i].tobytes())
            break
        return h.hexdigest()[:16]

    def _scan(self, batch: int) -> Iterator[VectorBatch]:
        """Every document once, ``batch`` at a time, in ``_id`` order (a server cursor)."""
        cursor = self._coll.find({}, sort=[("_id", 1)], batch_size=batch)
        try:
            page: list[dict[str, Any]] = []
            while True:
                with self._translating("scan"):
                    doc = next(cursor, None)
                if doc is None:
                    break
                page.append(doc)
                if len(page) == batch:
                    yield self._rows(page)
                    page = []
            if page:
                yield self._rows(page)
        finally:
            cursor.close()

    def _keys(self, ids: list[str]) -> list[Any]:
        from bson import ObjectId

        keys: list[Any] = []
        for i in dict.fromkeys(ids):
            keys.append(i)
            if ObjectId.is_valid(i):
                keys.append(ObjectId(i))
        return keys

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        """Stored vectors for ``ids`` in order (one ``find`` on ``_id $in``): float32 (n, d)."""
        keys = self._keys(ids)
        docs = self._call("fetch", lambda: list(self._coll.find({"_id": {"$in": keys}})))
        return fetched_in_order(self._rows(docs), ids, self._lay.dimension, bool(self._lay.text))

    def _search_dimension(self) -> int:
        return self._lay.dimension

    def candidates(self, k: int) -> int:
        """``numCandidates`` sent with a search of depth ``k``."""
        given = self.values.get("num_candidates")
        want = OVERSAMPLING * k if given is None else max(int(given), k)
        return min(MAX_CANDIDATES, max(want, k))

    def _hits(self, block: np.ndarray, k: int, native: Any, exact: bool) -> Hits:
        if k > MAX_CANDIDATES:
            raise InputError(f"Atlas returns at most {MAX_CANDIDATES} documents per vector "
                             f"search, asked for k={k}; ask for k <= {MAX_CANDIDATES}")  # fmt: skip
        out = []
        for row in block:
            stage: dict[str, Any] = {
                "index": self._lay.index,
                "path": self._lay.vector,
                "queryVector": [float(x) for x in row],
                "limit": k,
            }
            if exact:
                stage["exact"] = True
            else:
                stage["numCandidates"] = self.candidates(k)
            if native is not None:
                stage["filter"] = native
            out.append(self._search(stage))
        return out

    def _search(self, stage: dict[str, Any]) -> list[tuple[float, str]]:
        score = {"$meta": "vectorSearchScore"}
        pipeline = [{"$vectorSearch": stage}, {"$project": {"_id": 1, "score": score}}]

        def run() -> list[dict[str, Any]]:
            return list(self._coll.aggregate(pipeline))

        return [(float(d["score"]), str(d["_id"])) for d in self._call("search", run)]

    def _query_batch(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Atlas's ANN top-k at this depth (one ``$vectorSearch`` per query and depth): D
        float32 (q, k) in ``vectorSearchScore``, I ids (None where fewer came back)."""
        return gather(vectors, k, QUERY_BATCH, lambda b: self._hits(b, k, None, False))

    def _exact_batch(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Atlas's exact (ENN) search, ``exact: true``: same shapes and scale."""
        return gather(vectors, k, QUERY_BATCH, lambda b: self._hits(b, k, None, True))

    def _native_filter(self, node: Any) -> Any:
        from ...filters import translate

        lay = self._lay
        prefix = f"{lay.metadata}." if lay.metadata else ""
        return translate(node, "mongodb", prefix=prefix, filter_paths=lay.filter_paths,
                         index=lay.index)  # fmt: skip

    def _filtered_query_batch(
        self, vectors: np.ndarray, k: int, native: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        return gather(vectors, k, QUERY_BATCH, lambda b: self._hits(b, k, native, False))

    def close(self) -> None:
        client, self._client = getattr(self, "_client", None), None
        if client is not None:
            client.close()
