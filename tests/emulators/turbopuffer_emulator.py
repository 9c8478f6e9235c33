"""A loopback emulator of turbopuffer's REST API, driven through the official ``turbopuffer``
Python SDK 1.21 (the newest that ``langchain-turbopuffer`` 0.2.0 accepts; the requests are
the SDK's: ``Authorization: Bearer``, JSON bodies, paths below).

Followed pages (turbopuffer.com/docs): query (rank_by, top_k/limit at most 10,000,
filters, include/exclude_attributes, vector_encoding, consistency, "Filtering Parameters",
pagination), export (paging by ``["id", "Gt", last]`` with ``rank_by ["id", "asc"]``), write
(``upsert_rows``, ``deletes``, ``distance_metric``), metadata and schema, auth (the error
body ``{"status": "error", "error": ...}``), limits; the SDK's ``resources/namespaces.py``
and ``types/`` give paths and field names.

- ``POST /v2/namespaces/{ns}`` writes (upsert_rows, deletes; the first write fixes the
  ``distance_metric`` and the dimension); ``DELETE /v2/namespaces/{ns}`` deletes it.
- ``POST /v2/namespaces/{ns}/query``: ``rank_by`` ``["vector", "ANN", q]`` (an HNSW graph,
  faiss ``IndexHNSWFlat`` with ``m``/``ef``, so misses are real; a filter restricts the graph
  walk and a scan of the matching rows tops it up to ``top_k``: "recall-aware" filtering),
  ``["vector", "kNN", q]`` (exhaustive), ``["id"|attr, "asc"|"desc"]`` (order by attribute;
  rows lacking it are left out), or ``aggregate_by {"label": ["Count"]}``. ``$dist`` is
  ``cosine_distance`` = 1 - cos (0..2) or ``euclidean_squared`` = sum((x-y)^2).
  ``include_attributes`` defaults to ``id`` only; ``true`` is every attribute, the vector
  included; ``vector_encoding`` ``float`` or ``base64`` (little-endian float32).
- ``GET /v1/namespaces/{ns}/metadata`` and ``/schema``: the schema turbopuffer infers
  (``[DIMS]f32`` with ``ann.distance_metric``, ``string``, ``int``, ``float``, ``bool``).
- Errors: 401 without the key, 404 for an unknown namespace, 400 for a malformed query;
  faults ``fail_next(n, status, retry_after)``. Every request is kept in ``requests``;
  ``writes()`` lists the ones that change data.
"""

from __future__ import annotations

import base64
import gzip
import json
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote, urlsplit

import numpy as np

from tests.emulators.loopback import Reply, serve, stop
from tests.emulators.turbopuffer_filter import FilterError, kind_of, matches

METRICS = ("cosine_distance", "euclidean_squared")
TOP_K_LIMIT = 10_000
Id = str | int


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Recorded:
    method: str
    path: str
    body: Any


def _id_key(vid: Id) -> tuple[int, Any]:
    return (0, vid) if isinstance(vid, int) else (1, str(vid).encode())


def distances(metric: str, q: np.ndarray, x: np.ndarray) -> np.ndarray:
    """turbopuffer's ``$dist`` of ``q`` (d,) to rows ``x`` (n, d): float64 (n,)."""
    a, b = np.asarray(q, np.float64), np.asarray(x, np.float64)
    if metric == "euclidean_squared":
        out: np.ndarray = ((b - a) ** 2).sum(axis=1)
        return out
    norms = np.linalg.norm(b, axis=1) * np.linalg.norm(a)
    cos = np.divide(b @ a, norms, out=np.zeros(len(b)), where=norms > 0)
    return 1.0 - cos


def _type_of(value: Any) -> str:
    k = kind_of(value)
    if k == "number":
        return "int" if isinstance(value, int) else "float"
    if isinstance(value, list):
        inner = {_type_of(v) for v in value} or {"string"}
        return f"[]{sorted(inner)[0]}"
    return {"bool": "bool", "string": "string"}.get(k, "string")


@dataclass
class Namespace:
    metric: str | None = None
    dimension: int | None = None
    rows: dict[Id, dict[str, Any]] = field(default_factory=dict)  # attributes, vector included
    types: dict[str, str] = field(default_factory=dict)
    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    _graph: Any = None

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, typ in self.types.items():
            out[name] = {"type": typ, "filterable": True}
        if self.dimension is not None:
            out["vector"] = {
                "type": f"[{self.dimension}]f32", "ann": {"distance_metric": self.metric},
            }  # fmt: skip
        return out

    def graph(self, m: int) -> tuple[Any, list[Id]]:
        if self._graph is None:
            import faiss

            ids = sorted((i for i, r in self.rows.items() if r.get("vector") is not None),
                         key=_id_key)  # fmt: skip
            mat = np.stack([self.rows[i]["vector"] for i in ids]).astype(np.float32)
            cosine = self.metric == "cosine_distance"
            if cosine:
                mat = mat / np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-30)
            kind = faiss.METRIC_INNER_PRODUCT if cosine else faiss.METRIC_L2
            index = faiss.IndexHNSWFlat(mat.shape[1], m, kind)
            index.hnsw.efConstruction = 2 * m
            index.add(mat)
            self._graph = (index, ids)
        return self._graph  # type: ignore[no-any-return]


class TurbopufferEmulator:
    """One turbopuffer region on ``base_url``; a context manager."""

    def __init__(self, api_key: str = "tpuf-emulator-key", *, exact: bool = False,
                 m: int = 4, ef: int = 10) -> None:  # fmt: skip
        self.api_key, self.exact, self.m, self.ef = api_key, exact, m, ef
        self.namespaces: dict[str, Namespace] = {}
        self.requests: list[Recorded] = []
        self._faults: list[tuple[int, float | None]] = []
        self._lock = threading.RLock()
        self._server: Any = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def fail_next(self, n: int, status: int = 429, retry_after: float | None = None) -> None:
        with self._lock:
            self._faults.extend([(status, retry_after)] * n)

    def writes(self) -> list[Recorded]:
        """Requests that would change a namespace."""
        return [
            r for r in self.requests
            if r.method in ("DELETE", "PATCH", "PUT")
            or (r.method == "POST" and not r.path.endswith(("/query", "/explain_query")))
        ]  # fmt: skip

    def start(self) -> TurbopufferEmulator:
        self._server = serve(self.handle)
        return self

    def stop(self) -> None:
        stop(self._server)

    def __enter__(self) -> TurbopufferEmulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- requests --------------------------------------------------------------------------
    def handle(self, method: str, raw_path: str, headers: Any, raw: bytes) -> Reply:
        path = urlsplit(raw_path).path
        if headers.get("Content-Encoding") == "gzip":
            raw = gzip.decompress(raw)
        try:
            body: Any = json.loads(raw) if raw.strip() else None
        except ValueError:
            body = None
        with self._lock:
            self.requests.append(Recorded(method, path, body))
            if self._faults:
                status, after = self._faults.pop(0)
                extra = {} if after is None else {"Retry-After": f"{after:g}"}
                return _error(status, f"HTTP {status}", extra)
            if headers.get("Authorization") != f"Bearer {self.api_key}":
                return _error(401, "unauthorized: invalid API key")
            try:
                return 200, {}, json.dumps(self._route(method, path, body)).encode()
            except ApiError as exc:
                return _error(exc.status, str(exc))

    def _route(self, method: str, path: str, body: Any) -> Any:
        segs = [unquote(s) for s in path.strip("/").split("/")]
        if len(segs) < 3 or segs[1] != "namespaces":
            raise ApiError(404, f"the emulator does not serve {method} {path}")
        name, tail = segs[2], segs[3:]
        if method == "POST" and segs[0] == "v2" and not tail:
            return self._write(name, body if isinstance(body, dict) else {})
        ns = self.namespaces.get(name)
        if ns is None:
            raise ApiError(404, f"🤷 namespace '{name}' was not found")
        if method == "DELETE" and not tail:
            del self.namespaces[name]
            return {"status": "ok"}
        if method == "POST" and tail == ["query"]:
            return self._query(ns, body if isinstance(body, dict) else {})
        if method == "GET" and tail == ["schema"]:
            return ns.schema()
        if method == "GET" and tail == ["metadata"]:
            return {
                "approx_logical_bytes": 4 * len(ns.rows) * (ns.dimension or 0),
                "approx_row_count": len(ns.rows), "created_at": ns.created,
                "updated_at": datetime.now(UTC).isoformat(), "encryption": {"sse": True},
                "index": {"status": "up-to-date"}, "schema": ns.schema(),
            }  # fmt: skip
        raise ApiError(404, f"the emulator does not serve {method} {path}")

    def _write(self, name: str, body: dict[str, Any]) -> Any:
        ns = self.namespaces.setdefault(name, Namespace())
        metric = body.get("distance_metric")
        if metric is not None and metric not in METRICS:
            raise ApiError(400, f"invalid distance_metric {metric!r}")
        rows = body.get("upsert_rows") or []
        if rows and ns.metric is None:
            if metric is None:
                raise ApiError(400, "distance_metric is required on the first write with vectors")
            ns.metric = metric
        elif metric is not None and ns.metric is not None and metric != ns.metric:
            raise ApiError(400, f"distance_metric {metric} does not match {ns.metric}")
        for row in rows:
            vec = row.get("vector")
            if isinstance(vec, str):
                vec = np.frombuffer(base64.b64decode(vec), "<f4").tolist()
            if vec is not None:
                if ns.dimension is None:
                    ns.dimension = len(vec)
                if len(vec) != ns.dimension:
                    raise ApiError(400, f"vector dimension {len(vec)} does not match "
                                        f"the namespace's {ns.dimension}")  # fmt: skip
            attrs = {k: v for k, v in row.items() if k not in ("id", "vector")}
            for k, v in attrs.items():
                if v is None:
                    continue
                typ = _type_of(v)
                if ns.types.setdefault(k, typ) != typ and {typ, ns.types[k]} != {"int", "float"}:
                    raise ApiError(400, f"attribute '{k}' has type {ns.types[k]}, got {typ}")
            stored = dict(attrs)
            stored["vector"] = None if vec is None else np.asarray(vec, np.float32)
            ns.rows[row["id"]] = stored
            ns.types.setdefault("id", "uint" if isinstance(row["id"], int) else "string")
        for vid in body.get("deletes") or []:
            ns.rows.pop(vid, None)
        ns._graph = None
        return {"status": "OK", "message": "write succeeded", "rows_affected": len(rows),
                "billing": {"billable_logical_bytes_written": 0}}  # fmt: skip

    def _query(self, ns: Namespace, body: dict[str, Any]) -> Any:
        top_k = body.get("top_k")
        limit = body.get("limit")
        if top_k is not None and limit is not None:
            raise ApiError(400, "top_k and limit cannot both be set")
        if isinstance(limit, dict):
            limit = limit.get("total")
        k = top_k if top_k is not None else limit
        flt = body.get("filters")
        types = {**ns.types, "id": ns.types.get("id", "string")}
        try:
            keep = [i for i, r in ns.rows.items() if flt is None or matches(flt, {**r, "id": i},
                                                                             types)]  # fmt: skip
        except FilterError as err:
            raise ApiError(400, f"invalid filter: {err}") from None
        perf = {"approx_namespace_size": len(ns.rows), "cache_hit_ratio": 1.0,
                "cache_temperature": "hot", "exhaustive_search_count": 0,
                "query_execution_ms": 1, "server_total_ms": 1}  # fmt: skip
        billing = {"billable_logical_bytes_queried": 0, "billable_logical_bytes_returned": 0}
        agg = body.get("aggregate_by")
        if agg is not None:
            if any(v != ["Count"] for v in agg.values()):
                raise ApiError(400, "the emulator aggregates Count only")
            return {"aggregations": {label: len(keep) for label in agg},
                    "billing": billing, "performance": perf}  # fmt: skip
        if not isinstance(k, int) or not 0 < k <= TOP_K_LIMIT:
            raise ApiError(400, f"top_k must be between 1 and {TOP_K_LIMIT}, got {k}")
        rank = body.get("rank_by")
        if not isinstance(rank, list) or len(rank) not in (2, 3):
            raise ApiError(400, "rank_by is required")
        dists: dict[Id, float] = {}
        if len(rank) == 3 and rank[1] in ("ANN", "kNN"):
            if rank[0] != "vector" or ns.dimension is None:
                raise ApiError(400, f"no vector index for {rank[0]!r}")
            q = np.asarray(rank[2], np.float32)
            if q.shape != (ns.dimension,):
                raise ApiError(400, f"query vector has dimension {q.size}, the namespace "
                                    f"{ns.dimension}")  # fmt: skip
            pool = [i for i in keep if ns.rows[i]["vector"] is not None]
            cand = pool if rank[1] == "kNN" or self.exact else self._ann(ns, q, k, pool)
            if cand:
                d = distances(ns.metric or "cosine_distance", q,
                              np.stack([ns.rows[i]["vector"] for i in cand]))  # fmt: skip
                dists = {i: float(d[j]) for j, i in enumerate(cand)}
            order = sorted(cand, key=lambda i: (dists[i], _id_key(i)))[:k]
        elif len(rank) == 2 and rank[1] in ("asc", "desc"):
            attr = rank[0]
            have = [i for i in keep if attr == "id" or ns.rows[i].get(attr) is not None]
            order = sorted(have, key=lambda i: _id_key(i) if attr == "id"
                           else (ns.rows[i][attr], _id_key(i)),
                           reverse=rank[1] == "desc")[:k]  # fmt: skip
        else:
            raise ApiError(400, f"unsupported rank_by {rank!r}")
        rows = [self._row(ns, i, dists.get(i), body) for i in order]
        return {"rows": rows, "billing": billing, "performance": perf}

    def _ann(self, ns: Namespace, q: np.ndarray, k: int, pool: list[Id]) -> list[Id]:
        """The graph's hits among ``pool`` (a selector over the HNSW walk), topped up by a
        scan of ``pool`` when the walk reached fewer than k of them."""
        if len(pool) <= k:
            return pool
        import faiss

        graph, ids = ns.graph(self.m)
        x = q[None].astype(np.float32)
        if ns.metric == "cosine_distance":
            x = x / max(float(np.linalg.norm(x)), 1e-30)
        params = faiss.SearchParametersHNSW(efSearch=max(self.ef, k))
        if len(pool) < len(ids):
            pos = {v: j for j, v in enumerate(ids)}
            params.sel = faiss.IDSelectorBatch(np.array([pos[i] for i in pool], np.int64))
        _, found = graph.search(x, k, params=params)
        got = [ids[j] for j in found[0] if j >= 0]
        if len(got) < k:
            d = distances(ns.metric or "cosine_distance", q,
                          np.stack([ns.rows[i]["vector"] for i in pool]))  # fmt: skip
            seen = set(got)
            got += [pool[j] for j in np.argsort(d, kind="stable") if pool[j] not in seen][
                : k - len(got)
            ]
        return got

    def _row(self, ns: Namespace, vid: Id, dist: float | None, body: dict[str, Any]) -> Any:
        stored = ns.rows[vid]
        include = body.get("include_attributes")
        exclude = body.get("exclude_attributes")
        if include is not None and exclude is not None:
            raise ApiError(400, "include_attributes and exclude_attributes are exclusive")
        names = list(stored)
        if exclude is not None:
            names = [n for n in names if n not in exclude]
        elif include is True:
            pass
        elif isinstance(include, list):
            names = [n for n in names if n in include]
        else:
            names = []
        out: dict[str, Any] = {"id": vid}
        if dist is not None:
            out["$dist"] = dist
        for n in names:
            value = stored[n]
            if n == "vector" and value is not None:
                if body.get("vector_encoding") == "base64":
                    value = base64.b64encode(value.astype("<f4").tobytes()).decode()
                else:
                    value = [float(v) for v in value]
            if value is not None:
                out[n] = value
        return out


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    return status, headers or {}, json.dumps({"status": "error", "error": message}).encode()
