"""A loopback emulator of Pinecone's REST API (control plane and data plane), driven through
the official ``pinecone`` SDK 7.3 (API version 2025-04, header ``X-Pinecone-API-Version``).

Followed pages (docs.pinecone.io): reference/api/2025-04/control-plane/describe_index,
reference/api/2025-04/data-plane/{describeindexstats,list,fetch,query,upsert},
guides/index-data/indexing-overview (similarity metrics), guides/search/filter-by-metadata,
guides/manage-data/list-record-ids, reference/api/database-limits; the SDK's
``pinecone/core/openapi`` models give the field names.

- Control plane (``base_url``): ``GET /indexes/{name}`` answers the index model with its
  ``host`` (each index is served on its own port, as each Pinecone index has its own host)
  and ``spec`` ``{"serverless": ...}`` or ``{"pod": ...}``; unknown names 404.
- Data plane: ``POST /describe_index_stats`` (``namespaces`` keyed ``""`` for the default
  namespace; a ``filter`` is refused with 400 on serverless), ``GET /vectors/list``
  (serverless only, else 400; ids sorted bytewise, ``limit`` default 100, at most 100, a
  ``pagination.next`` token), ``GET /vectors/fetch`` (at most 1,000 ids; absent ids are left
  out; values are float32), ``POST /query`` (``topK`` <= 10,000, <= 1,000 with values or
  metadata included), ``POST /vectors/upsert``. ``"__default__"`` names the default
  namespace in every data-plane call too.
- Scores (the indexing-overview page): ``cosine`` the cosine, ``dotproduct`` the dot
  product (higher is better), ``euclidean`` the squared distance (lower is better).
- Search: faiss ``IndexHNSWFlat`` per namespace (``m``, ``ef``), so misses are real; the
  scores of its hits are computed exactly. Filtered search returns the k nearest matching
  rows the graph reaches, topped up by a scan of the matching rows ("searches with
  metadata filters retrieve exactly the number of nearest-neighbor results that match").
  ``exact=True`` scans everything.
- ``Api-Key`` header required (401 ``Unauthorized`` otherwise). Faults: ``fail_next(n,
  status, retry_after)``. Every request is kept in ``requests``; ``writes()`` lists writes.
"""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import numpy as np

from tests.emulators.loopback import Reply, serve
from tests.emulators.pinecone_filter import FilterError, matches

METRICS = ("cosine", "dotproduct", "euclidean")
WRITE_PATHS = ("/vectors/upsert", "/vectors/update", "/vectors/delete", "/records/", "/bulk/")
LIST_LIMIT, FETCH_LIMIT, TOPK_LIMIT, TOPK_WITH_DATA = 100, 1000, 10000, 1000


def scores(metric: str, queries: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Pinecone's score of ``queries`` (q, d) against ``vectors`` (n, d): float64 (q, n)."""
    a, b = np.asarray(queries, np.float64), np.asarray(vectors, np.float64)
    if metric == "euclidean":
        out: np.ndarray = np.maximum(
            (a * a).sum(1)[:, None] + (b * b).sum(1)[None] - 2 * a @ b.T, 0
        )
        return out
    dots = a @ b.T
    if metric == "cosine":
        norms = np.linalg.norm(a, axis=1)[:, None] * np.linalg.norm(b, axis=1)[None]
        dots = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return dots


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Recorded:
    """One request: ``server`` is ``control`` or the index name."""

    method: str
    path: str
    server: str
    query: dict[str, list[str]]
    body: Any
    api_version: str | None


@dataclass
class Namespace:
    rows: dict[str, tuple[np.ndarray, dict[str, Any] | None]] = field(default_factory=dict)
    _graph: Any = None  # (faiss index, ids) built on the first search after a write

    def graph(self, metric: str, m: int) -> tuple[Any, list[str]]:
        if self._graph is None:
            import faiss

            ids = sorted(self.rows)
            mat = np.stack([self.rows[i][0] for i in ids]).astype(np.float32)
            if metric == "cosine":
                mat = mat / np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-30)
            kind = faiss.METRIC_L2 if metric == "euclidean" else faiss.METRIC_INNER_PRODUCT
            index = faiss.IndexHNSWFlat(mat.shape[1], m, kind)
            index.hnsw.efConstruction = 2 * m
            index.add(mat)
            self._graph = (index, ids)
        return self._graph  # type: ignore[no-any-return]


@dataclass
class EmulatedIndex:
    name: str
    dimension: int
    metric: str
    pod: bool
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    server: Any = None


class PineconeEmulator:
    """A control plane on ``base_url`` and one data-plane server per index; a context manager."""

    def __init__(self, api_key: str = "pc-emulator-key", *, exact: bool = False,
                 m: int = 4, ef: int = 10) -> None:  # fmt: skip
        self.api_key, self.exact, self.m, self.ef = api_key, exact, m, ef
        self.indexes: dict[str, EmulatedIndex] = {}
        self.requests: list[Recorded] = []
        self._faults: list[tuple[int, float | None]] = []
        self._lock = threading.RLock()
        self._control: Any = None

    # -- setup -----------------------------------------------------------------------------
    def add_index(
        self, name: str, dimension: int, metric: str = "cosine", pod: bool = False
    ) -> str:
        """Create an empty index; return its data-plane host URL."""
        assert metric in METRICS, metric
        idx = EmulatedIndex(name, dimension, metric, pod)
        idx.server = _serve(self, name)
        with self._lock:
            self.indexes[name] = idx
        return self.host(name)

    def host(self, name: str) -> str:
        return f"http://127.0.0.1:{self.indexes[name].server.server_address[1]}"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._control.server_address[1]}"

    def fail_next(self, n: int, status: int = 429, retry_after: float | None = None) -> None:
        with self._lock:
            self._faults.extend([(status, retry_after)] * n)

    def writes(self) -> list[Recorded]:
        """Requests that would change an index or the project."""
        return [
            r for r in self.requests
            if (r.server == "control" and r.method != "GET")
            or any(r.path.startswith(p) for p in WRITE_PATHS)
            or r.method in ("DELETE", "PATCH", "PUT")
        ]  # fmt: skip

    def start(self) -> PineconeEmulator:
        self._control = _serve(self, "control")
        return self

    def stop(self) -> None:
        for srv in [self._control, *(i.server for i in self.indexes.values())]:
            if srv is not None:
                srv.shutdown()
                srv.server_close()

    def __enter__(self) -> PineconeEmulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- requests --------------------------------------------------------------------------
    def handle(self, server: str, method: str, raw_path: str, headers: Any, raw: bytes) -> Reply:
        parts = urlsplit(raw_path)
        query = parse_qs(parts.query, keep_blank_values=True)
        try:
            body: Any = json.loads(raw) if raw.strip() else None
        except ValueError:
            body = None
        with self._lock:
            version = headers.get("X-Pinecone-API-Version")
            self.requests.append(Recorded(method, parts.path, server, query, body, version))
            if self._faults:
                status, after = self._faults.pop(0)
                extra = {} if after is None else {"Retry-After": f"{after:g}"}
                return _error(status, f"HTTP {status}", extra)
            if headers.get("Api-Key") != self.api_key:
                return 401, {}, b'"Unauthorized"'
            try:
                if server == "control":
                    return 200, {}, json.dumps(self._control_plane(method, parts.path)).encode()
                result = self._data_plane(self.indexes[server], method, parts.path, query, body)
            except ApiError as exc:
                return _error(exc.status, str(exc))
            return 200, {}, json.dumps(result).encode()

    def _control_plane(self, method: str, path: str) -> Any:
        segs = path.strip("/").split("/")
        if method != "GET" or segs[0] != "indexes" or len(segs) != 2:
            raise ApiError(405, "the emulator serves describe_index only")
        idx = self.indexes.get(segs[1])
        if idx is None:
            raise ApiError(404, f"Resource {segs[1]} not found")
        spec = (
            {"pod": {"environment": "us-east1-gcp", "pod_type": "p1.x1", "replicas": 1,
                     "shards": 1, "pods": 1}}
            if idx.pod else {"serverless": {"cloud": "aws", "region": "us-east-1"}}
        )  # fmt: skip
        return {
            "name": idx.name, "dimension": idx.dimension, "metric": idx.metric,
            "host": self.host(idx.name), "spec": spec, "vector_type": "dense",
            "status": {"ready": True, "state": "Ready"}, "deletion_protection": "disabled",
        }  # fmt: skip

    def _data_plane(self, idx: EmulatedIndex, method: str, path: str,
                    query: dict[str, list[str]], body: Any) -> Any:  # fmt: skip
        body = body if isinstance(body, dict) else {}
        ns_name = (query.get("namespace") or [body.get("namespace") or ""])[0]
        ns_name = "" if ns_name == "__default__" else ns_name
        ns = idx.namespaces.get(ns_name, Namespace())
        if path == "/describe_index_stats":
            if body.get("filter") and not idx.pod:
                raise ApiError(400, "Serverless and starter indexes do not support describing "
                                    "index stats with metadata filtering")  # fmt: skip
            spaces = {k: {"vectorCount": len(v.rows)} for k, v in idx.namespaces.items() if v.rows}
            return {"namespaces": spaces, "dimension": idx.dimension, "indexFullness": 0.0,
                    "totalVectorCount": sum(len(v.rows) for v in idx.namespaces.values()),
                    "metric": idx.metric, "vectorType": "dense"}  # fmt: skip
        if path == "/vectors/list":
            return self._list(idx, ns, ns_name, query)
        if path == "/vectors/fetch":
            ids = query.get("ids", [])
            if not ids or len(ids) > FETCH_LIMIT:
                raise ApiError(400, f"fetch takes 1 to {FETCH_LIMIT} ids, got {len(ids)}")
            vecs = {
                i: _entry(i, ns.rows[i], True, True) for i in dict.fromkeys(ids) if i in ns.rows
            }
            return {"vectors": vecs, "namespace": ns_name, "usage": {"readUnits": 1}}
        if path == "/query":
            return self._query(idx, ns, ns_name, body)
        if path == "/vectors/upsert":
            target = idx.namespaces.setdefault(ns_name, Namespace())
            for v in body.get("vectors", []):
                values = v.get("values")
                if not isinstance(values, list) or len(values) != idx.dimension:
                    raise ApiError(400, f"Vector dimension {len(values or [])} does not match "
                                        f"the dimension of the index {idx.dimension}")  # fmt: skip
                target.rows[str(v["id"])] = (np.asarray(values, np.float32), v.get("metadata"))
            target._graph = None
            return {"upsertedCount": len(body.get("vectors", []))}
        if path == "/vectors/delete" and body.get("deleteAll"):  # a whole namespace
            idx.namespaces.pop(ns_name, None)
            return {}
        raise ApiError(404, f"the emulator does not serve {method} {path}")

    def _list(self, idx: EmulatedIndex, ns: Namespace, ns_name: str,
              query: dict[str, list[str]]) -> Any:  # fmt: skip
        if idx.pod:
            raise ApiError(400, "list is only supported for serverless indexes")
        limit = int((query.get("limit") or [LIST_LIMIT])[0])
        if not 0 < limit <= LIST_LIMIT:
            raise ApiError(400, f"limit must be between 1 and {LIST_LIMIT}")
        prefix = (query.get("prefix") or [""])[0]
        ids = sorted((i for i in ns.rows if i.startswith(prefix)), key=lambda s: s.encode())
        token = (query.get("paginationToken") or [""])[0]
        after = base64.b64decode(token).decode() if token else None
        if after is not None:
            ids = [i for i in ids if i.encode() > after.encode()]
        page = ids[:limit]
        out: dict[str, Any] = {"vectors": [{"id": i} for i in page], "namespace": ns_name,
                               "usage": {"readUnits": 1}}  # fmt: skip
        if len(ids) > limit:
            out["pagination"] = {"next": base64.b64encode(page[-1].encode()).decode()}
        return out

    def _query(self, idx: EmulatedIndex, ns: Namespace, ns_name: str, body: dict[str, Any]) -> Any:
        top_k = body.get("topK")
        with_data = bool(body.get("includeValues") or body.get("includeMetadata"))
        cap = TOPK_WITH_DATA if with_data else TOPK_LIMIT
        if not isinstance(top_k, int) or not 0 < top_k <= cap:
            raise ApiError(400, f"topK must be between 1 and {cap}, got {top_k}")
        q = body.get("vector")
        if not isinstance(q, list) or len(q) != idx.dimension:
            raise ApiError(400, f"Query vector dimension {len(q or [])} does not match the "
                                f"dimension of the index {idx.dimension}")  # fmt: skip
        qv = np.asarray(q, np.float32)
        flt = body.get("filter")
        try:
            keep = None if not flt else [i for i, r in ns.rows.items() if matches(flt, r[1])]
        except FilterError as err:
            raise ApiError(400, f"Invalid filter: {err}") from None
        ids = self._search(idx, ns, qv, top_k, keep) if ns.rows else []
        if not ids:
            return {"matches": [], "namespace": ns_name, "usage": {"readUnits": 1}}
        s = scores(idx.metric, qv[None], np.stack([ns.rows[i][0] for i in ids]))[0]
        sign = 1.0 if idx.metric == "euclidean" else -1.0
        order = sorted(range(len(ids)), key=lambda j: (sign * s[j], ids[j]))[:top_k]
        hits = [{**_entry(ids[j], ns.rows[ids[j]], bool(body.get("includeValues")),
                          bool(body.get("includeMetadata"))), "score": float(s[j])}
                for j in order]  # fmt: skip
        return {"matches": hits, "namespace": ns_name, "usage": {"readUnits": 5}}

    def _search(self, idx: EmulatedIndex, ns: Namespace, q: np.ndarray, k: int,
                keep: list[str] | None) -> list[str]:  # fmt: skip
        """Candidate ids: the graph's hits (with the filter as a selector), topped up by a scan
        of the matching rows when the graph reached fewer than k of them."""
        pool = sorted(ns.rows) if keep is None else sorted(keep)
        if self.exact or len(pool) <= k:
            return pool
        import faiss

        graph, ids = ns.graph(idx.metric, self.m)
        x = q[None].astype(np.float32)
        if idx.metric == "cosine":
            x = x / max(float(np.linalg.norm(x)), 1e-30)
        params = faiss.SearchParametersHNSW(efSearch=max(self.ef, k))
        if keep is not None:
            pos = {v: i for i, v in enumerate(ids)}
            sel = faiss.IDSelectorBatch(np.array([pos[i] for i in keep], dtype=np.int64))
            params.sel = sel
        _, found = graph.search(x, k, params=params)
        got = [ids[i] for i in found[0] if i >= 0]
        if len(got) < k:  # exactly k when k rows match: the rest by a scan of the matches
            s = scores(idx.metric, x, np.stack([ns.rows[i][0] for i in pool]))[0]
            rank = np.argsort(s if idx.metric == "euclidean" else -s, kind="stable")
            got += [pool[j] for j in rank if pool[j] not in got][: k - len(got)]
        return got


def _entry(vid: str, row: tuple[np.ndarray, Any], values: bool, metadata: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"id": vid}
    if values:
        out["values"] = [float(x) for x in row[0]]  # float32 values, as Pinecone stores them
    if metadata and row[1]:
        out["metadata"] = row[1]
    return out


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    body = {"error": {"code": {400: "INVALID_ARGUMENT", 404: "NOT_FOUND"}.get(status, "UNKNOWN"),
                      "message": message}, "status": status}  # fmt: skip
    return status, headers or {}, json.dumps(body).encode()


def _serve(emu: PineconeEmulator, server: str) -> ThreadingHTTPServer:
    return serve(lambda method, path, headers, raw: emu.handle(server, method, path, headers, raw))
