"""A loopback MongoDB Atlas server speaking the wire protocol, for ``pymongo`` 4.x.

Test code, not product. No mongod with Atlas Search installs here, so this serves what
pymongo 4.20 (and langchain-mongodb 0.12 / llama-index-vector-stores-mongodb 0.11 through
it) sends, written from the MongoDB docs pages "Wire Protocol" (OP_MSG with its kind-0 body
and kind-1 document sequences; legacy OP_QUERY/OP_REPLY for the first ``isMaster``/``hello``
of a connection), "hello", the CRUD command pages (``insert``, ``update``, ``delete``,
``find``, ``getMore``, ``killCursors``, ``count``, ``aggregate``, ``listCollections``,
``create``, ``drop``, ``endSessions``) and Atlas Vector Search's "Run Vector Search Queries"
(``$vectorSearch``: ``index``, ``path``, ``queryVector``, ``numCandidates`` 1..10,000 and
at least ``limit``, ``filter``, ``exact: true`` for ENN without ``numCandidates``), "How to
Index Fields for Vector Search" (``vector`` fields with ``numDimensions`` and
``similarity``; ``filter`` fields), "createSearchIndexes" and ``$listSearchIndexes``.

- Scores ("About the similarity functions"): cosine ``(1 + cos) / 2``, dotProduct
  ``(1 + dot) / 2``, euclidean ``1 / (1 + d)`` with ``d`` the Euclidean distance.
- ANN is a real HNSW (faiss ``IndexHNSWFlat``, M=16) searched with ``efSearch =
  numCandidates`` under the filter (an ID selector inside the graph search: Atlas filters
  before scoring), so a small breadth misses real neighbours; ``exact: true`` scans.
  Documents whose vector is missing, of another length, non-finite, or zero under cosine
  are not indexed (Atlas skips them).
- ``filter`` takes MQL (:mod:`tests.emulators.mongodb_filter`) on paths declared ``filter``
  in the index only; another path fails as Atlas users quote it ("Path 'x' needs to be
  indexed as filter"). A ``$vectorSearch`` naming an index that does not exist returns no
  documents, as Atlas does.
- Error replies are ``{ok: 0, errmsg, code, codeName}``; the codes of validation errors are
  ``BadValue`` (2) here, not verified against Atlas. ``saslStart`` always fails with
  ``AuthenticationFailed`` (18): the emulator has no users.

Every command is logged in ``commands`` as (name, db, collection), its document in
``bodies``; :func:`writes` lists the ones that change data or indexes. ``failures`` makes
the next commands fail with given codes (retry tests).
"""

from __future__ import annotations

import datetime
import itertools
import socket
import socketserver
import struct
import threading
from collections.abc import Iterator
from typing import Any

import bson
import numpy as np
from bson import ObjectId

from tests.emulators.mongodb_filter import MISSING, QueryError, lookup, matches, paths_and_ops

OP_REPLY, OP_QUERY, OP_MSG = 1, 2004, 2013
MAX_CANDIDATES = 10_000
WRITE_COMMANDS = frozenset({
    "insert", "update", "delete", "findAndModify", "create", "drop", "dropDatabase",
    "createIndexes", "dropIndexes", "createSearchIndexes", "updateSearchIndex",
    "dropSearchIndex", "renameCollection", "bulkWrite", "collMod",
})  # fmt: skip
VECTOR_FILTER_OPS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin",
                               "$exists", "$not", "$and", "$or", "$nor"})  # fmt: skip


def writes(log: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The commands of a log that write: write commands, and aggregates with $out/$merge."""
    return [c for c in log if c[0] in WRITE_COMMANDS or c[0] == "aggregate+write"]


class Fail(Exception):
    def __init__(self, errmsg: str, code: int = 2, code_name: str = "BadValue") -> None:
        super().__init__(errmsg)
        self.errmsg, self.code, self.code_name = errmsg, code, code_name


def _key(value: Any) -> bytes:
    return bson.encode({"v": value})


def _sort_key(value: Any) -> tuple[int, Any]:
    """BSON comparison order for the types ids take: numbers, strings, ObjectIds."""
    if isinstance(value, bool):
        return (8, value)
    if isinstance(value, (int, float)):
        return (2, value)
    if isinstance(value, str):
        return (3, value)
    if isinstance(value, ObjectId):
        return (7, value.binary)
    return (9, repr(value))


class Collection:
    def __init__(self) -> None:
        self.docs: dict[bytes, dict[str, Any]] = {}
        self.search_indexes: dict[str, dict[str, Any]] = {}
        self.version = 0
        self._graphs: dict[str, tuple[int, Any]] = {}

    def vector_field(self, name: str) -> dict[str, Any]:
        fields = self.search_indexes[name]["latestDefinition"].get("fields", [])
        return next(f for f in fields if f.get("type") == "vector")

    def graph(self, name: str) -> tuple[list[dict[str, Any]], np.ndarray, Any]:
        """The documents the index holds, their vectors (n, d) float32 and an HNSW over
        them, rebuilt after a write."""
        import faiss

        cached = self._graphs.get(name)
        if cached is not None and cached[0] == self.version:
            return cached[1]
        field = self.vector_field(name)
        path, dim, sim = field["path"], int(field["numDimensions"]), field["similarity"]
        docs, rows = [], []
        for doc in self.docs.values():
            v = lookup(doc, path)
            if not isinstance(v, list) or len(v) != dim:
                continue
            if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
                continue
            arr = np.asarray(v, dtype=np.float64)
            if not np.isfinite(arr).all() or (sim == "cosine" and not np.any(arr)):
                continue
            docs.append(doc)
            rows.append(arr)
        X = np.array(rows, dtype=np.float32).reshape(len(rows), dim)
        metric = faiss.METRIC_L2 if sim == "euclidean" else faiss.METRIC_INNER_PRODUCT
        index = faiss.IndexHNSWFlat(dim, 16, metric)
        index.hnsw.efConstruction = 40
        if len(rows):
            index.add(_unit(X) if sim == "cosine" else X)
        self._graphs[name] = (self.version, (docs, X, index))
        return docs, X, index


def _unit(x: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.where(n == 0, 1, n)).astype(np.float32)


def score(sim: str, q: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Atlas's vectorSearchScore of ``q`` (d,) against rows ``X`` (n, d): float64 (n,)."""
    a, B = np.asarray(q, np.float64), np.asarray(X, np.float64)
    if sim == "euclidean":
        return 1.0 / (1.0 + np.sqrt(np.maximum(((B - a) ** 2).sum(1), 0)))  # type: ignore[no-any-return]
    dots = B @ a
    if sim == "cosine":
        dots = dots / (np.linalg.norm(B, axis=1) * np.linalg.norm(a))
    return (1.0 + dots) / 2.0  # type: ignore[no-any-return]


class Emulator:
    """One mongod-like server on 127.0.0.1; ``url`` is its ``mongodb://`` URI."""

    def __init__(self, version: str = "7.0.12") -> None:
        self.version = version
        self.dbs: dict[str, dict[str, Collection]] = {}
        self.commands: list[tuple[str, str, str]] = []
        self.bodies: list[dict[str, Any]] = []
        #: (code, codeName) replies for the next commands that are not handshakes
        self.failures: list[tuple[int, str]] = []
        self.cursors: dict[int, tuple[str, list[dict[str, Any]]]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.RLock()
        emu = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                emu._serve(self.request)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.url = f"mongodb://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def collection(self, db: str, name: str) -> Collection:
        with self._lock:
            return self.dbs.setdefault(db, {}).setdefault(name, Collection())

    # -- the wire ------------------------------------------------------------------------
    def _serve(self, sock: socket.socket) -> None:
        try:
            while True:
                head = _read(sock, 16)
                if head is None:
                    return
                length, request_id, _, opcode = struct.unpack("<iiii", head)
                body = _read(sock, length - 16)
                if body is None:
                    return
                if opcode == OP_QUERY:
                    sock.sendall(self._op_query(request_id, body))
                elif opcode == OP_MSG:
                    reply = self._op_msg(request_id, body)
                    if reply is not None:
                        sock.sendall(reply)
                else:
                    return
        except (ConnectionError, OSError):
            return

    def _op_query(self, request_id: int, body: bytes) -> bytes:
        end = body.index(b"\0", 4)
        namespace = body[4:end].decode()
        pos = end + 1 + 8
        size = struct.unpack("<i", body[pos : pos + 4])[0]
        cmd = bson.decode(body[pos : pos + size])
        doc = self._command(namespace.split(".")[0], cmd)
        payload = struct.pack("<iqii", 0, 0, 0, 1) + bson.encode(doc)
        return struct.pack("<iiii", 16 + len(payload), next(self._ids), request_id,
                           OP_REPLY) + payload  # fmt: skip

    def _op_msg(self, request_id: int, body: bytes) -> bytes | None:
        flags = struct.unpack("<I", body[:4])[0]
        end = len(body) - (4 if flags & 1 else 0)
        pos, cmd = 4, {}
        sequences: dict[str, list[dict[str, Any]]] = {}
        while pos < end:
            kind = body[pos]
            pos += 1
            size = struct.unpack("<i", body[pos : pos + 4])[0]
            if kind == 0:
                cmd = bson.decode(body[pos : pos + size])
            else:
                name_end = body.index(b"\0", pos + 4)
                name = body[pos + 4 : name_end].decode()
                sequences[name] = bson.decode_all(body[name_end + 1 : pos + size])
            pos += size
        cmd.update(sequences)
        doc = self._command(str(cmd.get("$db", "admin")), cmd)
        if flags & 2:  # moreToCome: the client wants no reply
            return None
        payload = struct.pack("<I", 0) + b"\0" + bson.encode(doc)
        return struct.pack("<iiii", 16 + len(payload), next(self._ids), request_id,
                           OP_MSG) + payload  # fmt: skip

    # -- commands ------------------------------------------------------------------------
    def _command(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        name = next(iter(cmd))
        target = cmd[name] if isinstance(cmd[name], str) else str(cmd.get("collection", ""))
        logged = name
        if name == "aggregate" and any(
            "$out" in s or "$merge" in s for s in cmd.get("pipeline", []) if isinstance(s, dict)
        ):
            logged = "aggregate+write"
        with self._lock:
            self.commands.append((logged, db, target))
            self.bodies.append(cmd)
            try:
                if self.failures and name.lower() not in ("ismaster", "hello", "endsessions"):
                    code, code_name = self.failures.pop(0)
                    raise Fail(f"injected {code_name}", code, code_name)
                handler = getattr(self, "_cmd_" + name.lower(), None)
                if handler is None:
                    raise Fail(f"no such command: '{name}'", 59, "CommandNotFound")
                out: dict[str, Any] = handler(db, cmd)
            except Fail as f:
                return {"ok": 0.0, "errmsg": f.errmsg, "code": f.code, "codeName": f.code_name}
            except QueryError as q:
                return {"ok": 0.0, "errmsg": q.errmsg, "code": q.code, "codeName": q.code_name}
        out["ok"] = 1.0
        return out

    def _hello(self, legacy: bool) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "isWritablePrimary": True,
            "maxBsonObjectSize": 16 * 1024 * 1024,
            "maxMessageSizeBytes": 48_000_000,
            "maxWriteBatchSize": 100_000,
            "localTime": datetime.datetime.now(datetime.UTC),
            "logicalSessionTimeoutMinutes": 30,
            "connectionId": next(self._ids),
            "minWireVersion": 0,
            "maxWireVersion": 21,
            "readOnly": False,
        }
        if legacy:
            doc["ismaster"] = True
            doc["helloOk"] = True
        return doc

    def _cmd_ismaster(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        return self._hello(True)

    def _cmd_hello(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        return self._hello(False)

    def _cmd_ping(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        return {}

    def _cmd_buildinfo(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        parts = [int(p) for p in self.version.split(".")]
        return {"version": self.version, "versionArray": [*parts, 0], "modules": ["enterprise"]}

    def _cmd_endsessions(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        return {}

    def _cmd_saslstart(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        raise Fail("Authentication failed.", 18, "AuthenticationFailed")

    def _cmd_listcollections(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        rows = [{"name": n, "type": "collection", "options": {}, "info": {"readOnly": False}}
                for n in sorted(self.dbs.get(db, {}))]  # fmt: skip
        rows = [r for r in rows if matches(r, cmd.get("filter") or {})]
        return self._cursor(f"{db}.$cmd.listCollections", rows, cmd.get("cursor", {}))

    def _cmd_create(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        if cmd["create"] in self.dbs.get(db, {}):
            raise Fail(f"Collection {db}.{cmd['create']} already exists.", 48,
                       "NamespaceExists")  # fmt: skip
        self.collection(db, cmd["create"])
        return {}

    def _cmd_drop(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        self.dbs.get(db, {}).pop(cmd["drop"], None)
        return {}

    def _cmd_createindexes(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        self.collection(db, cmd["createIndexes"])
        return {"numIndexesBefore": 1, "numIndexesAfter": 2}

    def _cmd_createsearchindexes(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        coll = self.collection(db, cmd["createSearchIndexes"])
        made = []
        for spec in cmd["indexes"]:
            name = spec.get("name", "default")
            if name in coll.search_indexes:
                raise Fail(f"Duplicate Index: {name}", 68, "IndexAlreadyExists")
            coll.search_indexes[name] = {
                "id": str(ObjectId()), "name": name, "type": spec.get("type", "search"),
                "status": "READY", "queryable": True, "latestDefinitionVersion": {"version": 0},
                "latestDefinition": spec["definition"],
            }  # fmt: skip
            coll.version += 1
            made.append({"id": coll.search_indexes[name]["id"], "name": name})
        return {"indexesCreated": made}

    def _cmd_insert(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        coll = self.collection(db, cmd["insert"])
        n, errors = 0, []
        for i, doc in enumerate(cmd.get("documents", [])):
            doc.setdefault("_id", ObjectId())
            key = _key(doc["_id"])
            if key in coll.docs:
                errors.append({"index": i, "code": 11000, "errmsg": "E11000 duplicate key error"})
                if cmd.get("ordered", True):
                    break
                continue
            coll.docs[key] = doc
            n += 1
        coll.version += 1
        return {"n": n, **({"writeErrors": errors} if errors else {})}

    def _cmd_update(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        coll = self.collection(db, cmd["update"])
        n = modified = 0
        upserted = []
        for i, op in enumerate(cmd.get("updates", [])):
            q, u = op.get("q", {}), op["u"]
            hits = _by_id(coll, q)
            if not op.get("multi"):
                hits = hits[:1]
            for k in hits:
                coll.docs[k] = _updated(coll.docs[k], u)
                n += 1
                modified += 1
            if not hits and op.get("upsert"):
                seed = {k: v for k, v in q.items() if not k.startswith("$")
                        and not isinstance(v, dict)}  # fmt: skip
                doc = _updated(seed, u)
                doc.setdefault("_id", seed.get("_id", ObjectId()))
                coll.docs[_key(doc["_id"])] = doc
                upserted.append({"index": i, "_id": doc["_id"]})
                n += 1
        coll.version += 1
        return {"n": n, "nModified": modified, **({"upserted": upserted} if upserted else {})}

    def _cmd_delete(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        coll = self.collection(db, cmd["delete"])
        n = 0
        for op in cmd.get("deletes", []):
            hits = [k for k, d in coll.docs.items() if matches(d, op.get("q", {}))]
            for k in hits[: (1 if op.get("limit") == 1 else None)]:
                del coll.docs[k]
                n += 1
        coll.version += 1
        return {"n": n}

    def _cmd_count(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        coll = self.dbs.get(db, {}).get(cmd["count"])
        docs = list(coll.docs.values()) if coll else []
        return {"n": sum(1 for d in docs if matches(d, cmd.get("query") or {}))}

    def _cmd_find(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        coll = self.dbs.get(db, {}).get(cmd["find"])
        docs = [d for d in (coll.docs.values() if coll else []) if
                matches(d, cmd.get("filter") or {})]  # fmt: skip
        for field, way in reversed(list((cmd.get("sort") or {}).items())):
            docs.sort(key=lambda d, f=field: _sort_key(lookup(d, f)), reverse=way == -1)
        docs = docs[int(cmd.get("skip", 0)) :]
        if cmd.get("limit"):
            docs = docs[: abs(int(cmd["limit"]))]
        docs = [_project(d, cmd.get("projection")) for d in docs]
        size = cmd.get("batchSize", 101)
        if cmd.get("singleBatch") or cmd.get("limit") and int(cmd["limit"]) < 0:
            size = len(docs)
        return self._cursor(f"{db}.{cmd['find']}", docs, {"batchSize": size})

    def _cursor(self, ns: str, docs: list[dict[str, Any]], spec: dict[str, Any]) -> dict[str, Any]:
        size = int(spec.get("batchSize", 101))
        first, rest = docs[:size], docs[size:]
        cid = 0
        if rest:
            cid = next(self._ids)
            self.cursors[cid] = (ns, rest)
        return {"cursor": {"id": bson.int64.Int64(cid), "ns": ns, "firstBatch": first}}

    def _cmd_getmore(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        cid = int(cmd["getMore"])
        if cid not in self.cursors:
            raise Fail(f"cursor id {cid} not found", 43, "CursorNotFound")
        ns, docs = self.cursors.pop(cid)
        size = int(cmd.get("batchSize") or 101)
        batch, rest = docs[:size], docs[size:]
        if rest:
            self.cursors[cid] = (ns, rest)
        return {"cursor": {"id": bson.int64.Int64(cid if rest else 0), "ns": ns,
                           "nextBatch": batch}}  # fmt: skip

    def _cmd_killcursors(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        ids = [int(c) for c in cmd.get("cursors", [])]
        for c in ids:
            self.cursors.pop(c, None)
        return {"cursorsKilled": ids, "cursorsNotFound": [], "cursorsAlive": [],
                "cursorsUnknown": []}  # fmt: skip

    def _cmd_aggregate(self, db: str, cmd: dict[str, Any]) -> dict[str, Any]:
        name = cmd["aggregate"]
        coll = self.dbs.get(db, {}).get(name) if isinstance(name, str) else None
        stages = list(cmd.get("pipeline", []))
        docs: list[dict[str, Any]]
        if stages and "$vectorSearch" in stages[0]:
            docs = self._vector_search(coll, stages.pop(0)["$vectorSearch"])
        elif stages and "$listSearchIndexes" in stages[0]:
            want = stages.pop(0)["$listSearchIndexes"].get("name")
            idx = list(coll.search_indexes.values()) if coll else []
            docs = [dict(i) for i in idx if want is None or i["name"] == want]
        else:
            docs = [dict(d) for d in (coll.docs.values() if coll else [])]
        for stage in stages:
            docs = _stage(docs, stage)
        docs = [{k: v for k, v in d.items() if k != "__score"} for d in docs]
        return self._cursor(f"{db}.{name}", docs, cmd.get("cursor", {}))

    def _vector_search(self, coll: Collection | None, vs: dict[str, Any]) -> list[dict[str, Any]]:
        for key in ("index", "path", "queryVector", "limit"):
            if key not in vs:
                raise Fail(f"$vectorSearch.{key} is required")
        exact = bool(vs.get("exact", False))
        limit = int(vs["limit"])
        if exact and "numCandidates" in vs:
            raise Fail("$vectorSearch.numCandidates is not allowed when exact is true")
        if not exact:
            if "numCandidates" not in vs:
                raise Fail("$vectorSearch.numCandidates is required when exact is false")
            cand = int(vs["numCandidates"])
            if not 1 <= cand <= MAX_CANDIDATES:
                raise Fail(f"numCandidates must be between 1 and {MAX_CANDIDATES}")
            if limit > cand:
                raise Fail("$vectorSearch.limit must be less than or equal to numCandidates")
        if limit < 1:
            raise Fail("$vectorSearch.limit must be positive")
        if coll is None or vs["index"] not in coll.search_indexes:
            return []  # Atlas answers an unknown index with no documents, not an error
        definition = coll.search_indexes[vs["index"]]["latestDefinition"]
        field = coll.vector_field(vs["index"])
        if vs["path"] != field["path"]:
            raise Fail(f"Path '{vs['path']}' needs to be indexed as vector", 8, "UnknownError")
        q = np.asarray(vs["queryVector"], dtype=np.float64)
        if q.shape != (int(field["numDimensions"]),):
            raise Fail(
                f"vector field is indexed with {field['numDimensions']} dimensions but queried "
                f"with {q.shape[0]}", 8, "UnknownError",
            )  # fmt: skip
        flt = vs.get("filter") or {}
        declared = {f["path"] for f in definition.get("fields", []) if f.get("type") == "filter"}
        for path, op in paths_and_ops(flt):
            if op not in VECTOR_FILTER_OPS:
                raise Fail(f"Operator '{op}' is not supported in $vectorSearch filter", 8,
                           "UnknownError")  # fmt: skip
            if path and path not in declared:
                raise Fail(
                    "PlanExecutor error during aggregation :: caused by :: Path "
                    f"'{path}' needs to be indexed as filter", 8, "UnknownError",
                )  # fmt: skip
        docs, X, graph = coll.graph(vs["index"])
        allowed = np.array([i for i, d in enumerate(docs) if matches(d, flt)], dtype=np.int64)
        if not len(allowed):
            return []
        sim = field["similarity"]
        if exact:
            rows = allowed
        else:
            import faiss

            qq = q.astype(np.float32)[None]
            if sim == "cosine":
                qq = _unit(qq)
            params = faiss.SearchParametersHNSW()
            params.efSearch = cand
            sel = faiss.IDSelectorBatch(allowed)
            params.sel = sel
            _, found = graph.search(qq, min(cand, len(allowed)), params=params)
            rows = found[0][found[0] >= 0]
        s = score(sim, q, X[rows])
        best = np.argsort(-s, kind="stable")[:limit]
        return [dict(docs[rows[i]], __score=float(s[i])) for i in best]


def _by_id(coll: Collection, q: dict[str, Any]) -> list[bytes]:
    """Keys of the documents ``q`` matches; ``{_id: value}`` is one lookup (the _id index)."""
    if set(q) == {"_id"} and not isinstance(q["_id"], dict):
        key = _key(q["_id"])
        return [key] if key in coll.docs else []
    return [k for k, d in coll.docs.items() if matches(d, q)]


def _updated(doc: dict[str, Any], u: Any) -> dict[str, Any]:
    if isinstance(u, dict) and u and all(k.startswith("$") for k in u):
        out = dict(doc)
        for k, v in (u.get("$set") or {}).items():
            out[k] = v
        for k in u.get("$unset") or {}:
            out.pop(k, None)
        return out
    out = dict(u)
    if "_id" in doc:
        out["_id"] = doc["_id"]
    return out


def _meta(value: Any, d: dict[str, Any]) -> Any:
    if isinstance(value, dict) and value.get("$meta") == "vectorSearchScore":
        return d.get("__score", 0.0)
    if isinstance(value, dict) and "$meta" in value:
        raise Fail(f"unsupported $meta: {value['$meta']}")
    return value


def _project(d: dict[str, Any], proj: Any) -> dict[str, Any]:
    if not proj:
        return d
    keep = {k: v for k, v in proj.items() if v not in (0, False)}
    if keep and any(k != "_id" for k in keep):
        out: dict[str, Any] = {}
        if proj.get("_id", 1) not in (0, False) and "_id" in d:
            out["_id"] = d["_id"]
        for k, v in keep.items():
            if isinstance(v, dict):
                out[k] = _meta(v, d)
            elif k != "_id":
                val = lookup(d, k)
                if val is not MISSING:
                    _put(out, k, val)
        if "__score" in d:
            out["__score"] = d["__score"]
        return out
    drop = {k for k, v in proj.items() if v in (0, False)}
    return {k: v for k, v in d.items() if k not in drop}


def _put(out: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    node = out
    for p in parts[:-1]:
        node = node.setdefault(p, {})
    node[parts[-1]] = value


def _stage(docs: list[dict[str, Any]], stage: dict[str, Any]) -> list[dict[str, Any]]:
    ((name, arg),) = stage.items()
    if name == "$match":
        return [d for d in docs if matches(d, arg)]
    if name == "$project":
        return [_project(d, arg) for d in docs]
    if name in ("$set", "$addFields"):
        return [dict(d, **{k: _meta(v, d) for k, v in arg.items()}) for d in docs]
    if name == "$limit":
        return docs[: int(arg)]
    if name == "$skip":
        return docs[int(arg) :]
    if name == "$group" and arg.get("_id") in (1, None):
        ((field, acc),) = ((k, v) for k, v in arg.items() if k != "_id")
        if acc != {"$sum": 1}:
            raise Fail("only {$sum: 1} is emulated in $group")
        return [{"_id": arg.get("_id"), field: len(docs)}] if docs else []
    raise Fail(f"Unrecognized pipeline stage name: '{name}'", 40324, "Location40324")


def _read(sock: socket.socket, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        part = sock.recv(n - len(buf))
        if not part:
            return None
        buf += part
    return buf


def docs_of(e: Emulator, db: str, coll: str) -> Iterator[dict[str, Any]]:
    """The stored documents of a collection, in insertion order."""
    yield from e.collection(db, coll).docs.values()
