"""A loopback emulator of Weaviate 1.32 (REST for schema and meta, gRPC for search, batch and
aggregate), driven through the official ``weaviate-client`` 4.24 (which sends the near vector
as ``vectors`` from server 1.29 on and batches over unary ``BatchObjects`` below 1.36).

Followed pages (docs.weaviate.io/weaviate): config-refs/distances (``cosine`` is ``1-cos`` in
[0, 2], ``dot`` is ``-dot``, ``l2-squared`` the squared distance; ``certainty`` exists for
cosine only, ``(2-d)/2``), config-refs/indexing/vector-index (HNSW ``ef`` -1: dynamic,
``clamp(limit * dynamicEfFactor, dynamicEfMin, dynamicEfMax)``; ``flatSearchCutoff``: a
filtered search allowing fewer objects than that is a flat, exact search), search/filters
(Equal NotEqual GreaterThan... ContainsAny Like IsNull; IsNull needs ``indexNullState``;
a text property's tokenization decides what Equal matches), manage-objects/read-all-objects
(the cursor ``after``: uuid order, not combinable with a filter or a search),
config-refs/schema (auto-schema: text, number, boolean, text[], number[]; the defaults a
created class is filled with; limits ``QUERY_MAXIMUM_RESULTS`` 10,000); the client's
``weaviate/proto/v1`` protos and ``weaviate-python-client`` mock tests give field names.

- REST: ``GET /v1/meta``, ``/v1/.well-known/{ready,live}``, ``/v1/nodes``, ``GET
  /v1/schema[/NAME]`` (404 unknown), ``POST /v1/schema`` (defaults filled), ``DELETE
  /v1/schema/NAME``; ``/v1/.well-known/openid-configuration`` 404 (no OIDC).
- gRPC ``weaviate.v1.Weaviate`` from the client's generated protos: ``Search`` (near_vector
  with distance/certainty thresholds and target vectors, limit/offset, filters, the ``after``
  cursor, return properties and metadata), ``BatchObjects`` (auto-schema, dimension checks,
  per-object errors), ``Aggregate`` (objects count, filtered), ``TenantsGet``.
- Search: a faiss ``IndexHNSWFlat`` per (collection, vector) built with
  ``maxConnections``/``efConstruction`` of the collection, searched at its ``ef``; distances
  of the hits are computed exactly. ``exact=True`` scans everything.
- ``api_key``: REST ``Authorization: Bearer`` and gRPC ``authorization`` metadata required
  (401 / UNAUTHENTICATED). ``fail_next(n, status)`` fails the next calls (an HTTP status on
  REST, a gRPC code name on gRPC). Every request is kept in ``requests``; ``writes()``.
"""

from __future__ import annotations

import json
import re
import threading
import uuid as uuid_lib
from concurrent import futures
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

VERSION = "1.32.0"
MAX_RESULTS, DEFAULT_LIMIT = 10000, 10
WRITE_RPCS = ("BatchObjects", "BatchReferences", "BatchDelete", "BatchStream")
_TOKEN = re.compile(r"[^\W_]+|_", re.UNICODE)


def distances(metric: str, q: np.ndarray, mat: np.ndarray) -> np.ndarray:
    """Weaviate's distance of one query (d,) to rows (n, d): float64 (n,)."""
    a, b = np.asarray(q, np.float64), np.asarray(mat, np.float64)
    if metric == "l2-squared":
        out: np.ndarray = ((b - a) ** 2).sum(1)
        return out
    if metric == "manhattan":
        return np.abs(b - a).sum(1)  # type: ignore[no-any-return]
    dots = b @ a
    if metric == "dot":
        return -dots  # type: ignore[no-any-return]
    norms = np.linalg.norm(b, axis=1) * np.linalg.norm(a)
    cos = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return 1.0 - cos  # type: ignore[no-any-return]


def tokens(text: str, tokenization: str) -> list[str]:
    """Weaviate's tokenization of a text value (docs: config-refs/schema, tokenization)."""
    if tokenization == "field":
        return [text.strip()]
    if tokenization == "whitespace":
        return text.split()
    if tokenization == "lowercase":
        return text.lower().split()
    return [t for t in re.split(r"[^0-9A-Za-z]+", text.lower()) if t]  # word


def default_class(body: dict[str, Any]) -> dict[str, Any]:
    """A created class with what Weaviate fills in (shape of the client's mock schemas)."""
    hnsw = {
        "skip": False,
        "cleanupIntervalSeconds": 300,
        "maxConnections": 32,
        "efConstruction": 128,
        "ef": -1,
        "dynamicEfMin": 100,
        "dynamicEfMax": 500,
        "dynamicEfFactor": 8,
        "vectorCacheMaxObjects": 1000000000000,
        "flatSearchCutoff": 40000,
        "distance": "cosine",
        "pq": {
            "enabled": False,
            "bitCompression": False,
            "segments": 0,
            "centroids": 256,
            "trainingLimit": 100000,
            "encoder": {"type": "kmeans", "distribution": "log-normal"},
        },
        "bq": {"enabled": False},
        "sq": {"enabled": False, "trainingLimit": 100000, "rescoreLimit": 20},
    }
    out = dict(body)
    name = str(out["class"])
    out["class"] = name[:1].upper() + name[1:]
    inv = dict(out.get("invertedIndexConfig") or {})
    inv["bm25"] = {"b": 0.75, "k1": 1.2, **(inv.get("bm25") or {})}
    inv.setdefault("cleanupIntervalSeconds", 60)
    stop = {"additions": None, "preset": "en", "removals": None}
    inv["stopwords"] = {**stop, **(inv.get("stopwords") or {})}
    inv.setdefault("indexNullState", False)
    out["invertedIndexConfig"] = inv
    mt = {"enabled": False, "autoTenantCreation": False, "autoTenantActivation": False}
    mt.update(out.pop("MultiTenancyConfig", None) or out.get("multiTenancyConfig") or {})
    out["multiTenancyConfig"] = mt
    out["properties"] = [_property(p) for p in out.get("properties") or []]
    out.setdefault(
        "replicationConfig",
        {"asyncEnabled": False, "factor": 1, "deletionStrategy": "NoAutomatedResolution"},
    )
    out.setdefault(
        "shardingConfig",
        {
            "virtualPerPhysical": 128,
            "desiredCount": 1,
            "actualCount": 1,
            "desiredVirtualCount": 128,
            "actualVirtualCount": 128,
            "key": "_id",
            "strategy": "hash",
            "function": "murmur3",
        },
    )
    if out.get("vectorConfig"):
        for vc in out["vectorConfig"].values():
            vc["vectorIndexConfig"] = {**hnsw, **(vc.get("vectorIndexConfig") or {})}
            vc.setdefault("vectorIndexType", "hnsw")
            vc.setdefault("vectorizer", {"none": {}})
    else:
        out["vectorIndexConfig"] = {**hnsw, **(out.get("vectorIndexConfig") or {})}
        out.setdefault("vectorIndexType", "hnsw")
        out.setdefault("vectorizer", "none")
    return out


def _property(p: dict[str, Any]) -> dict[str, Any]:
    out = dict(p)
    text = out["dataType"][0] in ("text", "text[]")
    out.setdefault("indexFilterable", True)
    out.setdefault("indexSearchable", text)
    out.setdefault("indexRangeFilters", False)
    if text:
        out.setdefault("tokenization", "word")
    return out


class GrpcAbort(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Recorded:
    """One request: ``kind`` is ``rest`` or ``grpc``; ``path`` the URL path or RPC name."""

    kind: str
    method: str
    path: str
    body: Any = None


@dataclass
class Obj:
    props: dict[str, Any]
    vectors: dict[str, np.ndarray]


@dataclass
class Collection:
    config: dict[str, Any]
    objects: dict[str, Obj] = field(default_factory=dict)  # insertion order = doc id order
    graphs: dict[str, Any] = field(default_factory=dict)

    @property
    def named(self) -> bool:
        return bool(self.config.get("vectorConfig"))

    def index_config(self, target: str) -> dict[str, Any]:
        if self.named:
            return dict(self.config["vectorConfig"][target]["vectorIndexConfig"])
        return dict(self.config["vectorIndexConfig"])

    def prop_types(self) -> dict[str, dict[str, Any]]:
        return {p["name"]: p for p in self.config["properties"]}


class WeaviateEmulator:
    """REST on ``url``, gRPC on ``grpc_port``; a context manager."""

    def __init__(
        self, api_key: str | None = None, *, exact: bool = False, version: str = VERSION
    ) -> None:
        self.api_key, self.exact, self.version = api_key, exact, version
        self.collections: dict[str, Collection] = {}
        self.requests: list[Recorded] = []
        self._faults: list[str] = []
        self._lock = threading.RLock()
        self._http: Any = None
        self._grpc: Any = None
        self.grpc_port = 0

    # -- setup -----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    def fail_next(self, n: int, status: int | str = 503) -> None:
        """Fail the next ``n`` requests: an int is an HTTP status (REST), a str a gRPC code."""
        with self._lock:
            self._faults.extend([str(status)] * n)

    def writes(self) -> list[Recorded]:
        """Requests that would change a collection or the schema."""
        return [
            r
            for r in self.requests
            if (r.kind == "rest" and r.method != "GET")
            or (r.kind == "grpc" and r.path in WRITE_RPCS)
        ]

    def start(self) -> WeaviateEmulator:
        import grpc
        from weaviate.proto.v1 import weaviate_pb2_grpc

        handler = type("Handler", (_Handler,), {"emulator": self})
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._http.daemon_threads, self._http.block_on_close = True, False
        threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        self._grpc = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        weaviate_pb2_grpc.add_WeaviateServicer_to_server(_Servicer(self), self._grpc)
        self.grpc_port = self._grpc.add_insecure_port("127.0.0.1:0")
        self._grpc.start()
        return self

    def stop(self) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        if self._grpc is not None:
            self._grpc.stop(None)

    def __enter__(self) -> WeaviateEmulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _fault(self) -> str | None:
        with self._lock:
            return self._faults.pop(0) if self._faults else None

    def _authorised(self, header: str | None) -> str | None:
        """None when allowed, else the refusal's message."""
        if self.api_key is None:
            return None
        if not header:
            return "anonymous access not enabled, please provide an auth scheme such as OIDC"
        if header != f"Bearer {self.api_key}":
            return "unauthorized: invalid api key"
        return None

    # -- REST ------------------------------------------------------------------------------
    def rest(self, method: str, path: str, headers: Any, raw: bytes) -> tuple[int, Any]:
        body = json.loads(raw) if raw.strip() else None
        with self._lock:
            self.requests.append(Recorded("rest", method, path, body))
        fault = self._fault()
        if fault is not None:
            return int(fault), {"error": [{"message": f"HTTP {fault}"}]}
        if path.startswith("/v1/.well-known/"):
            return (404, None) if path.endswith("openid-configuration") else (200, None)
        refused = self._authorised(headers.get("Authorization"))
        if refused:
            return 401, {"code": 401, "message": refused}
        segs = path.strip("/").split("/")
        with self._lock:
            if path == "/v1/meta":
                return 200, {
                    "hostname": "http://[::]:8080",
                    "version": self.version,
                    "modules": {},
                    "grpcMaxMessageSize": 104858000,
                }
            if path == "/v1/nodes":
                return 200, {
                    "nodes": [
                        {
                            "name": "node1",
                            "status": "HEALTHY",
                            "version": self.version,
                            "gitHash": "emulator",
                            "batchStats": {"queueLength": 0, "ratePerSecond": 0},
                            "stats": {"objectCount": 0, "shardCount": 1},
                        }
                    ]
                }
            if segs[:2] == ["v1", "schema"]:
                return self._schema(method, segs[2] if len(segs) > 2 else None, body)
        return 404, {"error": [{"message": f"the emulator does not serve {method} {path}"}]}

    def _schema(self, method: str, name: str | None, body: Any) -> tuple[int, Any]:
        if method == "GET" and name is None:
            return 200, {"classes": [c.config for c in self.collections.values()]}
        if method == "POST" and name is None:
            cls = default_class(body)
            if self._find(cls["class"]) is not None:
                msg = f"class name {cls['class']} already exists"
                return 422, {"error": [{"message": msg}]}
            self.collections[cls["class"]] = Collection(cls)
            return 200, cls
        coll = self._find(name or "")
        if coll is None:
            return 404, None
        if method == "GET":
            return 200, coll.config
        if method == "DELETE":
            del self.collections[coll.config["class"]]
            return 200, None
        return 405, {"error": [{"message": f"{method} on the schema is not emulated"}]}

    def _find(self, name: str) -> Collection | None:
        for key, coll in self.collections.items():
            if key.lower() == name.lower():
                return coll
        return None

    def _collection(self, name: str) -> Collection:
        coll = self._find(name)
        if coll is None:
            raise GrpcAbort("UNKNOWN", f"could not find class {name} in schema")
        return coll

    # -- gRPC ------------------------------------------------------------------------------
    def rpc(self, name: str, request: Any, context: Any) -> Any:
        with self._lock:
            self.requests.append(Recorded("grpc", "POST", name, request))
        fault = self._fault()
        try:
            if fault is not None:
                code = fault if not fault.isdigit() else "UNAVAILABLE"
                raise GrpcAbort(code, f"{code}: injected fault")
            meta = dict(context.invocation_metadata())
            refused = self._authorised(meta.get("authorization"))
            if refused:
                raise GrpcAbort("UNAUTHENTICATED", refused)
            with self._lock:
                return getattr(self, f"_rpc_{name}")(request)
        except GrpcAbort as exc:
            import grpc

            context.abort(getattr(grpc.StatusCode, exc.code), str(exc))

    def _rpc_TenantsGet(self, req: Any) -> Any:
        coll = self._collection(req.collection)
        if not coll.config["multiTenancyConfig"]["enabled"]:
            raise GrpcAbort("UNKNOWN", f"multi-tenancy is not enabled for class {req.collection}")
        from weaviate.proto.v1 import tenants_pb2

        return tenants_pb2.TenantsGetReply(took=0.0)

    def _rpc_Aggregate(self, req: Any) -> Any:
        from weaviate.proto.v1 import aggregate_pb2

        coll = self._collection(req.collection)
        self._tenant(coll, req.tenant)
        keep = self._filtered(coll, req.filters if req.HasField("filters") else None)
        single = aggregate_pb2.AggregateReply.Single(objects_count=len(keep))
        return aggregate_pb2.AggregateReply(took=0.0, single_result=single)

    def _tenant(self, coll: Collection, tenant: str) -> None:
        if tenant and not coll.config["multiTenancyConfig"]["enabled"]:
            raise GrpcAbort(
                "UNKNOWN",
                f"class has multi-tenancy disabled, but request was with tenant '{tenant}'",
            )

    def _rpc_BatchObjects(self, req: Any) -> Any:
        from weaviate.proto.v1 import batch_pb2

        errors = []
        for i, obj in enumerate(req.objects):
            try:
                self._insert(obj)
            except GrpcAbort as exc:
                errors.append(batch_pb2.BatchObjectsReply.BatchError(index=i, error=str(exc)))
        return batch_pb2.BatchObjectsReply(took=0.0, errors=errors)

    def _insert(self, obj: Any) -> None:
        from google.protobuf.json_format import MessageToDict

        coll = self._find(obj.collection)
        if coll is None:  # auto-schema creates the class
            cls = default_class({"class": obj.collection, "properties": []})
            coll = self.collections[cls["class"]] = Collection(cls)
        props: dict[str, Any] = dict(MessageToDict(obj.properties.non_ref_properties))
        for kind in ("text", "number", "int", "boolean"):
            for arr in getattr(obj.properties, f"{kind}_array_properties"):
                values = list(arr.values) or _unpack(kind, getattr(arr, "values_bytes", b""))
                props[arr.prop_name] = values
        types = coll.prop_types()
        for key, value in props.items():
            if value is None:
                continue
            if key not in types:
                types[key] = _auto_property(key, value)
                coll.config["properties"].append(types[key])
            props[key] = _coerce(types[key], value, coll.config["class"])
        vectors: dict[str, np.ndarray] = {}
        if obj.vector_bytes:
            vectors["default"] = np.frombuffer(obj.vector_bytes, "<f4").copy()
        elif len(obj.vector):
            vectors["default"] = np.asarray(obj.vector, np.float32)
        for v in obj.vectors:
            vectors[v.name or "default"] = np.frombuffer(v.vector_bytes, "<f4").copy()
        for name, vec in vectors.items():
            if coll.named and name not in coll.config["vectorConfig"]:
                raise GrpcAbort("UNKNOWN", f"target vector {name!r} not found in collection")
            have = [o.vectors[name] for o in coll.objects.values() if name in o.vectors]
            if have and len(have[0]) != len(vec):
                raise GrpcAbort(
                    "UNKNOWN",
                    f"new node has a vector with length {len(vec)}. "
                    f"Existing nodes have vectors with length "
                    f"{len(have[0])}",
                )
        uid = str(uuid_lib.UUID(obj.uuid)) if obj.uuid else str(uuid_lib.uuid4())
        coll.objects[uid] = Obj({k: v for k, v in props.items() if v is not None}, vectors)
        coll.graphs.clear()

    def _rpc_Search(self, req: Any) -> Any:
        from weaviate.proto.v1 import search_get_pb2

        coll = self._collection(req.collection)
        self._tenant(coll, req.tenant)
        limit = int(req.limit) or DEFAULT_LIMIT
        if limit + int(req.offset) > MAX_RESULTS:
            raise GrpcAbort(
                "UNKNOWN",
                f"query maximum results exceeded: limit {limit} plus "
                f"offset {req.offset} is over {MAX_RESULTS}",
            )
        flt = req.filters if req.HasField("filters") else None
        near = req.HasField("near_vector")
        scored: list[tuple[str, float | None]]
        target = ""
        if req.after:
            if flt is not None or near or len(req.sort_by):
                raise GrpcAbort(
                    "UNKNOWN",
                    "explorer: list objects: invalid 'after' parameter: "
                    "where filter and sort cannot be set with after",
                )
            after = str(uuid_lib.UUID(req.after))
            ids = sorted(u for u in coll.objects if u > after)
            scored = [(u, None) for u in ids[:limit]]
        elif near:
            target, scored = self._near(coll, req.near_vector, flt, limit + int(req.offset))
            scored = scored[int(req.offset) :]
        else:  # unfiltered: the objects bucket, keyed by uuid; filtered: doc id order
            ids = sorted(coll.objects) if flt is None else self._filtered(coll, flt)
            scored = [(u, None) for u in ids[int(req.offset) :][:limit]]
        results = [self._result(coll, u, d, target, req) for u, d in scored]
        return search_get_pb2.SearchReply(took=0.0, results=results)

    def _near(
        self, coll: Collection, nv: Any, flt: Any, limit: int
    ) -> tuple[str, list[tuple[str, float]]]:
        names = list(nv.targets.target_vectors) or list(nv.target_vectors)
        if coll.named:
            if not names and len(coll.config["vectorConfig"]) > 1:
                raise GrpcAbort(
                    "UNKNOWN",
                    "multiple target vectors in collection, please specify target vector(s)",
                )
            target = names[0] if names else next(iter(coll.config["vectorConfig"]))
            if target not in coll.config["vectorConfig"]:
                raise GrpcAbort("UNKNOWN", f"target vector {target!r} not found")
        else:
            if names:
                raise GrpcAbort(
                    "UNKNOWN",
                    f"target vector {names[0]!r} not found: the collection has no named vectors",
                )
            target = "default"
        if len(nv.vectors):
            q = np.frombuffer(nv.vectors[0].vector_bytes, "<f4")
        elif nv.vector_bytes:
            q = np.frombuffer(nv.vector_bytes, "<f4")
        else:
            q = np.asarray(nv.vector, np.float32)
        cfg = coll.index_config(target)
        metric = cfg["distance"]
        if nv.HasField("certainty") and metric != "cosine":
            raise GrpcAbort(
                "UNKNOWN",
                f"can't compute and return certainty when vector index "
                f"is configured with {metric} distance",
            )
        pool = [u for u in self._filtered(coll, flt) if target in coll.objects[u].vectors]
        if not pool:
            return target, []
        dim = len(coll.objects[pool[0]].vectors[target])
        if len(q) != dim:
            raise GrpcAbort(
                "UNKNOWN",
                f"vector search: knn search: distance between entrypoint "
                f"and query node: vector lengths don't match: {dim} vs "
                f"{len(q)}",
            )
        graphable = metric in ("cosine", "dot", "l2-squared")  # faiss has no l1 HNSW here
        flat = (
            self.exact or not graphable or (flt is not None and len(pool) < cfg["flatSearchCutoff"])
        )
        cand = pool if flat else self._graph_search(coll, target, cfg, q, limit, set(pool))
        d = distances(metric, q, np.stack([coll.objects[u].vectors[target] for u in cand]))
        hits = sorted(zip(cand, d.tolist(), strict=True), key=lambda t: (t[1], t[0]))
        if nv.HasField("distance"):
            hits = [h for h in hits if h[1] <= nv.distance]
        if nv.HasField("certainty"):
            hits = [h for h in hits if (2 - h[1]) / 2 >= nv.certainty]
        return target, hits[:limit]

    def _graph_search(
        self,
        coll: Collection,
        target: str,
        cfg: dict[str, Any],
        q: np.ndarray,
        limit: int,
        allowed: set[str],
    ) -> list[str]:
        import faiss

        if target not in coll.graphs:
            ids = [u for u, o in coll.objects.items() if target in o.vectors]
            mat = np.stack([coll.objects[u].vectors[target] for u in ids]).astype(np.float32)
            metric = cfg["distance"]
            if metric == "cosine":  # Weaviate normalises vectors for cosine
                mat = mat / np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-30)
            kind = faiss.METRIC_L2 if metric == "l2-squared" else faiss.METRIC_INNER_PRODUCT
            index = faiss.IndexHNSWFlat(mat.shape[1], max(2, cfg["maxConnections"] // 2), kind)
            index.hnsw.efConstruction = int(cfg["efConstruction"])
            index.add(mat)
            coll.graphs[target] = (index, ids)
        index, ids = coll.graphs[target]
        ef = int(cfg["ef"])
        if ef < 0:  # dynamic ef
            ef = min(
                max(limit * int(cfg["dynamicEfFactor"]), int(cfg["dynamicEfMin"])),
                int(cfg["dynamicEfMax"]),
            )
        x = q[None].astype(np.float32)
        if cfg["distance"] == "cosine":
            x = x / max(float(np.linalg.norm(x)), 1e-30)
        params = faiss.SearchParametersHNSW(efSearch=max(ef, limit))
        if len(allowed) < len(ids):
            pos = [i for i, u in enumerate(ids) if u in allowed]
            params.sel = faiss.IDSelectorBatch(np.array(pos, dtype=np.int64))
        _, found = index.search(x, min(limit, len(ids)), params=params)
        return [ids[i] for i in found[0] if i >= 0]

    def _result(self, coll: Collection, uid: str, dist: float | None, target: str, req: Any) -> Any:
        from weaviate.proto.v1 import base_pb2, properties_pb2, search_get_pb2

        obj, m = coll.objects[uid], req.metadata
        meta = search_get_pb2.MetadataResult(id=uid, id_as_bytes=uuid_lib.UUID(uid).bytes)
        if dist is not None and m.distance:
            meta.distance, meta.distance_present = dist, True
        if dist is not None and m.certainty and coll.index_config(target)["distance"] == "cosine":
            meta.certainty, meta.certainty_present = (2 - dist) / 2, True
        if coll.named and (m.vector or len(m.vectors)):
            for name in list(m.vectors) or list(coll.config["vectorConfig"]):
                if name in obj.vectors:
                    meta.vectors.append(
                        base_pb2.Vectors(
                            name=name,
                            vector_bytes=obj.vectors[name].astype("<f4").tobytes(),
                            type=base_pb2.Vectors.VECTOR_TYPE_SINGLE_FP32,
                        )
                    )
        elif m.vector and "default" in obj.vectors:
            meta.vector_bytes = obj.vectors["default"].astype("<f4").tobytes()
        props = properties_pb2.Properties()
        p = req.properties
        every = not req.HasField("properties") or p.return_all_nonref_properties
        names = list(obj.props) if every else list(p.non_ref_properties)
        if names:
            types = coll.prop_types()
            for name in names:
                if name in obj.props:
                    props.fields[name].CopyFrom(_value(types[name], obj.props[name]))
        result = search_get_pb2.PropertiesResult(
            non_ref_props=props, target_collection=coll.config["class"], metadata=meta
        )
        return search_get_pb2.SearchResult(properties=result, metadata=meta)

    # -- filters ---------------------------------------------------------------------------
    def _filtered(self, coll: Collection, flt: Any) -> list[str]:
        if flt is None:
            return list(coll.objects)
        return [u for u, o in coll.objects.items() if self._match(coll, flt, u, o)]

    def _match(self, coll: Collection, f: Any, uid: str, obj: Obj) -> bool:
        from weaviate.proto.v1 import base_pb2

        op = base_pb2.Filters.Operator.Name(f.operator).removeprefix("OPERATOR_")
        if op in ("AND", "OR", "NOT"):
            got = [self._match(coll, g, uid, obj) for g in f.filters]
            return all(got) if op == "AND" else any(got) if op == "OR" else not got[0]
        name = f.target.property if f.HasField("target") else f.on[0]
        kind = f.WhichOneof("test_value")
        value: Any = getattr(f, kind) if kind else None
        if kind and kind.endswith("_array"):
            value = list(value.values)
        if name == "_id":
            have: Any = uid
            spec: dict[str, Any] = {"dataType": ["uuid"]}
        else:
            spec = coll.prop_types().get(name) or {}
            if not spec:
                raise GrpcAbort(
                    "UNKNOWN",
                    f"no such prop with name '{name}' found in class "
                    f"'{coll.config['class']}' in the schema",
                )
            have = obj.props.get(name)
        dtype = spec["dataType"][0]
        if op == "IS_NULL":
            if not coll.config["invertedIndexConfig"].get("indexNullState"):
                raise GrpcAbort(
                    "UNKNOWN",
                    "Nullstate must be indexed to be filterable! Add "
                    "`indexNullState: true` to the invertedIndexConfig",
                )
            return (have is None) == bool(value)
        want = {"int": "value_int", "number": "value_number", "boolean": "value_boolean"}
        base = dtype.removesuffix("[]")
        if base in want and kind and not kind.startswith(want[base]):
            raise GrpcAbort(
                "UNKNOWN",
                f'data type filter cannot use "{_camel(kind)}" on type '
                f'"{dtype}", use "{_camel(want[base])}" instead',
            )
        values = value if isinstance(value, list) else [value]
        if op == "NOT_EQUAL":
            return not self._equal(spec, have, values[0])  # NotEqual: all but Equal's rows
        if have is None:
            return False
        if op == "EQUAL":
            return self._equal(spec, have, values[0])
        if op == "CONTAINS_ANY":
            return any(self._equal(spec, have, v) for v in values)
        if op == "LIKE":
            pattern = re.escape(str(values[0])).replace(r"\*", ".*").replace(r"\?", ".")
            return any(re.fullmatch(pattern, str(h), re.I) for h in _listed(have))
        cmp = {
            "GREATER_THAN": np.greater,
            "GREATER_THAN_EQUAL": np.greater_equal,
            "LESS_THAN": np.less,
            "LESS_THAN_EQUAL": np.less_equal,
        }[op]
        return any(bool(cmp(h, values[0])) for h in _listed(have))

    @staticmethod
    def _equal(spec: dict[str, Any], have: Any, want: Any) -> bool:
        if have is None:
            return False
        if spec["dataType"][0] in ("text", "text[]"):
            tok = spec.get("tokenization", "word")
            need = tokens(str(want), tok)
            return any(need and all(t in tokens(str(h), tok) for t in need) for h in _listed(have))
        return any(h == want for h in _listed(have))


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _camel(kind: str) -> str:
    head, *rest = kind.split("_")
    return head + "".join(r.title() for r in rest)


def _unpack(kind: str, raw: bytes) -> list[Any]:
    if not raw:
        return []
    return np.frombuffer(raw, "<f8" if kind == "number" else "<i8").tolist()  # type: ignore[no-any-return]


def _auto_property(name: str, value: Any) -> dict[str, Any]:
    """Auto-schema's type for a new property (numbers are ``number``: gRPC sends doubles)."""
    first = value[0] if isinstance(value, list) and value else value
    base = (
        "boolean"
        if isinstance(first, bool)
        else "number"
        if isinstance(first, int | float)
        else "text"
    )
    return _property({"name": name, "dataType": [base + ("[]" if isinstance(value, list) else "")]})


def _coerce(spec: dict[str, Any], value: Any, cls: str) -> Any:
    dtype = spec["dataType"][0]
    base = dtype.removesuffix("[]")
    items = value if isinstance(value, list) else [value]
    ok = {"text": str, "boolean": bool, "number": (int, float), "int": (int, float)}.get(base)
    if ok is not None and any(
        not isinstance(v, ok) or (base != "boolean" and isinstance(v, bool)) for v in items
    ):
        raise GrpcAbort(
            "UNKNOWN", f"invalid {dtype} property '{spec['name']}' on class '{cls}': not a {base}"
        )
    if base == "int":
        items = [int(v) for v in items]
    elif base == "number":
        items = [float(v) for v in items]
    return items if isinstance(value, list) else items[0]


def _value(spec: dict[str, Any], value: Any) -> Any:
    from weaviate.proto.v1 import properties_pb2

    dtype = spec["dataType"][0]
    if dtype.endswith("[]"):
        lv = properties_pb2.ListValue()
        base = dtype[:-2]
        if base == "text":
            lv.text_values.values.extend(value)
        elif base == "boolean":
            lv.bool_values.values.extend(value)
        elif base == "int":
            lv.int_values.values = np.asarray(value, "<i8").tobytes()
        else:
            lv.number_values.values = np.asarray(value, "<f8").tobytes()
        return properties_pb2.Value(list_value=lv)
    if dtype == "boolean":
        return properties_pb2.Value(bool_value=bool(value))
    if dtype == "int":
        return properties_pb2.Value(int_value=int(value))
    if dtype == "number":
        return properties_pb2.Value(number_value=float(value))
    return properties_pb2.Value(text_value=str(value))


class _Servicer:
    def __init__(self, emulator: WeaviateEmulator) -> None:
        self.emulator = emulator

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda request, context: self.emulator.rpc(name, request, context)


class _Handler(BaseHTTPRequestHandler):
    emulator: WeaviateEmulator
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0]
        status, body = self.emulator.rest(self.command, path, self.headers, raw)
        payload = b"" if body is None else json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_GET = do_POST = do_DELETE = do_PATCH = do_PUT = do_HEAD = _serve

    def log_message(self, format: str, *args: Any) -> None:
        pass


__all__ = ["WeaviateEmulator", "default_class", "distances", "tokens"]
