"""A loopback emulator of the Upstash Vector REST API, exercised through the real SDK.

As the Upstash docs describe it (upstash.com/docs/vector/api/...): every command is a POST
(GET also accepted) to ``<index url>/<command>[/<namespace>]`` with a camelCase JSON body;
success is ``{"result": ...}``, failure ``{"error": "...", "status": N}`` with that HTTP
status; ``Authorization: Bearer <token>`` is required (401 otherwise). Query scores
(features/similarityfunctions): COSINE ``(1+cos)/2``, EUCLIDEAN ``1/(1+squared l2)``,
DOT_PRODUCT ``(1+dot)/2``, not clipped. Fetch answers in the order asked with ``null`` for
unknown ids; range pages with a string cursor (``"0"`` or ``""`` to start, ``""`` when
done); one request reads at most ``max_reads`` (1000, max_reads_per_request). A batch
query (JSON array) of one item returns one result list, of several a list of lists.

Approximate search: a namespace is split into ``nlist`` partitions around centroids taken
evenly in id order; a query scans only its ``nprobe`` best partitions, so true neighbours
can be missed (a stored vector always finds itself). ``exact=True`` scans everything.

Faults: ``fail_next(n, status, retry_after, message)``, ``garble_next(n, how)`` (a reply
that cannot be read), ``truncate_next(n)`` (JSON cut in half), ``short_next(n)`` (last
entry of the next n result lists dropped), ``delay`` (seconds before each reply). Every
request is kept in ``requests``; ``writes()`` lists the writes.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import numpy as np

SIMILARITIES = ("COSINE", "EUCLIDEAN", "DOT_PRODUCT")
WRITE_COMMANDS = frozenset(
    {"upsert", "upsert-data", "update", "delete", "reset", "delete-namespace", "rename-namespace"}
)
_MESSAGES = {401: "Unauthorized: Invalid auth token", 429: "Too many requests", 503: "Unavailable"}
_BAD_JSON = object()
Reply = tuple[int, dict[str, str], bytes]


def scores(similarity: str, queries: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Upstash scores of ``queries`` (q, d) against ``vectors`` (n, d): float64 (q, n)."""
    a = np.asarray(queries, dtype=np.float64)
    b = np.asarray(vectors, dtype=np.float64)
    if similarity == "EUCLIDEAN":
        sq = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * (a @ b.T)
        out: np.ndarray = 1.0 / (1.0 + np.maximum(sq, 0.0))
        return out
    dots = a @ b.T
    if similarity == "COSINE":
        norms = np.linalg.norm(a, axis=1)[:, None] * np.linalg.norm(b, axis=1)[None, :]
        dots = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return (1.0 + dots) / 2.0


class ApiError(Exception):
    """An error reply: HTTP ``status`` and the ``error`` message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Recorded:
    """One request as received: ``command`` is e.g. ``query``, ``namespace`` '' for default."""

    method: str
    path: str
    index: str
    command: str
    namespace: str
    body: Any


@dataclass
class EmulatedIndex:
    """One index: namespace -> id -> {"vector": float32 (d,), "metadata", "data"}."""

    dimension: int
    similarity: str = "COSINE"
    namespaces: dict[str, dict[str, dict[str, Any]]] = field(default_factory=lambda: {"": {}})


class UpstashEmulator:
    """Serves Upstash indexes on ``http://127.0.0.1:<port>/<index name>``; a context manager."""

    max_reads = 1000
    delay = 0.0

    def __init__(
        self, token: str = "emulator-token", *, exact: bool = False, nlist: int = 8, nprobe: int = 2
    ) -> None:
        self.token, self.exact, self.nlist, self.nprobe = token, exact, nlist, nprobe
        self.indexes: dict[str, EmulatedIndex] = {}
        self.requests: list[Recorded] = []
        self._faults: list[tuple[int, float | None, str]] = []
        self._truncate = self._short = 0
        self._garble: list[str] = []
        self._lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def add_index(self, name: str, dimension: int, similarity: str = "COSINE") -> str:
        """Create an empty index and return its REST URL."""
        if similarity not in SIMILARITIES:
            raise ValueError(f"similarity must be one of {SIMILARITIES}")
        with self._lock:
            self.indexes[name] = EmulatedIndex(dimension, similarity)
        return self.url(name)

    def url(self, name: str) -> str:
        return f"{self.base_url}/{name}"

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the emulator first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def fail_next(
        self, n: int, status: int = 429, retry_after: float | None = None, message: str = ""
    ) -> None:
        """Answer the next ``n`` requests with ``status`` (and a Retry-After header if given)."""
        with self._lock:
            self._faults.extend([(status, retry_after, message)] * n)

    def truncate_next(self, n: int) -> None:
        with self._lock:
            self._truncate += n

    def short_next(self, n: int) -> None:
        with self._lock:
            self._short += n

    def garble_next(self, n: int, how: str) -> None:
        """The next ``n`` replies are 200s that cannot be read: ``gzip`` (a Content-Encoding
        header that lies about a plain body), ``encoding`` (bytes that are not UTF-8)."""
        with self._lock:
            self._garble.extend([how] * n)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults, self._truncate, self._short, self.delay = [], 0, 0, 0.0
            self._garble = []

    def writes(self) -> list[Recorded]:
        """Requests whose command changes an index."""
        return [r for r in self.requests if r.command in WRITE_COMMANDS]

    def start(self) -> UpstashEmulator:
        handler = type("Handler", (_Handler,), {"emulator": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> UpstashEmulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def handle(self, method: str, raw_path: str, auth: str | None, raw: bytes) -> Reply:
        """Answer one request: (HTTP status, extra headers, body bytes)."""
        parts = urlsplit(raw_path)
        segs = parts.path.strip("/").split("/", 2) + ["", ""]
        name, command, namespace = segs[0], segs[1], segs[2]
        try:
            body: Any = json.loads(raw) if raw.strip() else None
        except ValueError:
            body = _BAD_JSON
        if self.delay:
            time.sleep(self.delay)
        with self._lock:
            shown = raw.decode("utf-8", "replace") if body is _BAD_JSON else body
            self.requests.append(Recorded(method, parts.path, name, command, namespace, shown))
            if self._faults:
                status, retry_after, message = self._faults.pop(0)
                headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
                return _error(status, message or _MESSAGES.get(status, f"HTTP {status}"), headers)
            if auth != f"Bearer {self.token}":
                return _error(401, _MESSAGES[401])
            index = self.indexes.get(name)
            if index is None:
                return _error(404, f"index '{name}' not found")
            if body is _BAD_JSON:
                return _error(400, "request body is not valid JSON")
            try:
                result = self._dispatch(index, command, namespace, body, parts.query)
            except ApiError as exc:
                return _error(exc.status, str(exc))
            if self._short and isinstance(result, list) and result:
                self._short -= 1
                result = result[:-1]
            elif self._short and isinstance(result, dict) and result.get("vectors"):
                self._short -= 1
                result = {**result, "vectors": result["vectors"][:-1]}
            payload = json.dumps({"result": result}).encode()
            if self._truncate:
                self._truncate -= 1
                payload = payload[: len(payload) // 2]
            if self._garble:
                how = self._garble.pop(0)
                if how == "gzip":
                    return 200, {"Content-Encoding": "gzip"}, payload
                return 200, {}, b'{"result": "\xff\xfe\xc3\x28"}'
            return 200, {}, payload

    def _dispatch(self, index: EmulatedIndex, cmd: str, ns: str, body: Any, query: str) -> Any:
        if cmd == "info":
            return _info(index)
        if cmd == "list-namespaces":
            return list(index.namespaces)
        if cmd in ("upsert-data", "query-data") or cmd.startswith("resumable-query"):
            raise ApiError(400, "this index has no embedding model; send vectors instead")
        if cmd == "upsert":
            return self._upsert(index, index.namespaces.setdefault(ns, {}), body)
        if cmd == "reset":
            if query == "all":
                index.namespaces = {"": {}}
            else:
                index.namespaces.get(ns, {}).clear()
            return "Success"
        if cmd == "delete-namespace":
            if ns == "" or ns not in index.namespaces:
                raise ApiError(400, f"cannot delete namespace '{ns}'")
            del index.namespaces[ns]
            return "Success"
        store = index.namespaces.get(ns, {})
        body = body if body is not None else {}
        if cmd == "fetch":
            return self._fetch(store, body)
        if cmd == "range":
            return self._range(store, body)
        if cmd == "query":
            if isinstance(body, list):
                out = [self._query(index, store, q) for q in body]
                return out[0] if len(out) == 1 else out
            return self._query(index, store, body)
        if cmd == "delete":
            return self._delete(store, body)
        if cmd == "update":
            return self._update(index, store, body)
        raise ApiError(404, f"unknown command '{cmd}'")

    def _upsert(self, index: EmulatedIndex, store: dict[str, Any], body: Any) -> str:
        items = body if isinstance(body, list) else [body]
        for item in items:
            if not isinstance(item, dict) or not str(item.get("id", "")):
                raise ApiError(400, "every vector needs a non-empty id")
            vec = _vector(index, item.get("vector"))
            store[str(item["id"])] = {
                "vector": vec,
                "metadata": item.get("metadata"),
                "data": item.get("data"),
            }
        return "Success"

    def _fetch(self, store: dict[str, Any], body: dict[str, Any]) -> list[Any]:
        if "prefix" in body and "ids" not in body:
            ids = sorted(i for i in store if i.startswith(str(body["prefix"])))[: self.max_reads]
        else:
            raw = body.get("ids", [])
            ids = [str(i) for i in (raw if isinstance(raw, list) else [raw])]
        if len(ids) > self.max_reads:
            raise ApiError(400, f"at most {self.max_reads} vectors can be fetched per request")
        return [_entry(i, store[i], body) if i in store else None for i in ids]

    def _range(self, store: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        limit = body.get("limit")
        if not isinstance(limit, int) or not 0 < limit <= self.max_reads:
            raise ApiError(400, f"limit must be between 1 and {self.max_reads}")
        cursor = str(body.get("cursor", "") or "0")
        if not cursor.isdigit():
            raise ApiError(400, f"invalid cursor '{cursor}'")
        ids = sorted(i for i in store if i.startswith(str(body.get("prefix", ""))))
        start = int(cursor)
        page = ids[start : start + limit]
        nxt = str(start + limit) if start + limit < len(ids) else ""
        return {"nextCursor": nxt, "vectors": [_entry(i, store[i], body) for i in page]}

    def _query(self, index: EmulatedIndex, store: dict[str, Any], body: Any) -> list[Any]:
        if not isinstance(body, dict):
            raise ApiError(400, "a query must be a JSON object")
        q = _vector(index, body.get("vector"))
        top_k = int(body.get("topK", 10))
        if not 0 < top_k <= self.max_reads:
            raise ApiError(400, f"topK must be between 1 and {self.max_reads}")
        ids = self._candidates(index, store, q)
        if body.get("filter"):  # the documented syntax, evaluated on the candidates
            from tests.emulators.upstash_filter import FilterSyntaxError, keep

            try:
                ids = keep(str(body["filter"]), ids, store)
            except FilterSyntaxError as err:
                raise ApiError(400, str(err)) from None
        if not ids:
            return []
        s = scores(index.similarity, q[None, :], np.stack([store[i]["vector"] for i in ids]))[0]
        order = sorted(range(len(ids)), key=lambda j: (-s[j], ids[j]))[:top_k]
        return [{**_entry(ids[j], store[ids[j]], body), "score": float(s[j])} for j in order]

    def _candidates(self, index: EmulatedIndex, store: dict[str, Any], q: np.ndarray) -> list[str]:
        """Ids the (approximate) search will score for query ``q``."""
        ids = sorted(store)
        if self.exact or len(ids) <= self.nlist:
            return ids
        mat = np.stack([store[i]["vector"] for i in ids])
        centroids = mat[np.linspace(0, len(ids) - 1, self.nlist).astype(int)]
        assign = scores(index.similarity, mat, centroids).argmax(axis=1)
        probe = np.argsort(-scores(index.similarity, q[None, :], centroids)[0])[: self.nprobe]
        keep = np.isin(assign, probe)
        return [i for i, k in zip(ids, keep, strict=True) if k]

    def _delete(self, store: dict[str, Any], body: dict[str, Any]) -> dict[str, int]:
        if body.get("filter"):
            raise ApiError(400, "metadata filters are not supported by the emulator")
        raw = body.get("ids", [])
        ids = [str(i) for i in (raw if isinstance(raw, list) else [raw])]
        if "prefix" in body:
            ids += [i for i in store if i.startswith(str(body["prefix"]))]
        deleted = [store.pop(i) for i in set(ids) if i in store]
        return {"deleted": len(deleted)}

    def _update(self, index: EmulatedIndex, store: dict[str, Any], body: Any) -> dict[str, int]:
        rec = store.get(str(body.get("id")))
        if rec is None:
            return {"updated": 0}
        if "vector" in body:
            rec["vector"] = _vector(index, body["vector"])
        if "data" in body:
            rec["data"] = body["data"]
        if "metadata" in body:
            if body.get("metadataUpdateMode") == "PATCH" and rec["metadata"]:
                rec["metadata"] = {**rec["metadata"], **body["metadata"]}
            else:
                rec["metadata"] = body["metadata"]
        return {"updated": 1}


def _vector(index: EmulatedIndex, raw: Any) -> np.ndarray:
    if not isinstance(raw, list) or not raw:
        raise ApiError(400, "a dense vector is required")
    if len(raw) != index.dimension:
        raise ApiError(400, f"Invalid vector dimension: {len(raw)}, expected: {index.dimension}")
    return np.asarray(raw, dtype=np.float32)


def _entry(vid: str, rec: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"id": vid}
    if body.get("includeVectors"):
        out["vector"] = rec["vector"].tolist()
    if body.get("includeMetadata") and rec["metadata"] is not None:
        out["metadata"] = rec["metadata"]
    if body.get("includeData") and rec["data"] is not None:
        out["data"] = rec["data"]
    return out


def _info(index: EmulatedIndex) -> dict[str, Any]:
    total, dim, sim = sum(map(len, index.namespaces.values())), index.dimension, index.similarity
    return {
        "vectorCount": total,
        "pendingVectorCount": 0,
        "indexSize": total * dim * 4,
        "dimension": dim,
        "similarityFunction": sim,
        "indexType": "DENSE",
        "denseIndex": {"dimension": dim, "similarityFunction": sim, "embeddingModel": ""},
        "namespaces": {
            ns: {"vectorCount": len(s), "pendingVectorCount": 0}
            for ns, s in index.namespaces.items()
        },
    }


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    return status, headers or {}, json.dumps({"error": message, "status": status}).encode()


class _Handler(BaseHTTPRequestHandler):
    emulator: UpstashEmulator

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        status, headers, payload = self.emulator.handle(
            self.command, self.path, self.headers.get("Authorization"), raw
        )
        try:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test); nothing to answer

    do_GET = do_POST = _serve

    def log_message(self, format: str, *args: Any) -> None:
        pass
