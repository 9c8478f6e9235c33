"""A loopback Elasticsearch 8/9 / OpenSearch 2.x emulator for the official Python clients.

Test code, not product. It follows the REST API as ``elasticsearch`` 8.19 and
``opensearch-py`` 3.2 call it, written from the vendors' pages:

- Elasticsearch: root info (``version.number``, ``tagline`` and the ``X-Elastic-Product:
  Elasticsearch`` header the 8.x client checks; a 9.x client's ``compatible-with=9`` is
  refused by an 8.x server), ``_mapping``, ``_bulk`` (dynamic mapping: strings become
  ``text`` with a ``keyword`` sub-field, ``ignore_above: 256``), ``_search`` with ``knn``
  (``k`` <= ``num_candidates`` <= 10,000; scores per similarity as on the "kNN search" and
  "dense_vector" pages: cosine (1+cos)/2, dot_product (1+dot)/2, l2_norm 1/(1+l2^2),
  max_inner_product; ``int8_hnsw`` scores from int8-quantised vectors, the default for
  float vectors from 8.14), the query DSL (bool/term/terms/range/exists/ids: a ``term`` on
  a text field matches lower-case tokens), ``_pit`` with ``search_after`` on
  ``_shard_doc``, ``from + size`` <= 10,000, sorting on ``_id`` refused (8.x), and from
  9.2 vectors left out of ``_source`` unless ``exclude_vectors: false``;
- OpenSearch (k-NN plugin pages "Spaces", "k-NN query", "Filtering"): ``knn`` queries with
  ``k``, ``filter`` (lucene and faiss filter inside the search; nmslib refuses it, so a
  filter goes in a ``bool`` after it) and ``method_parameters.ef_search`` (2.16+);
  scores per space: l2 1/(1+l2^2), innerproduct, cosinesimil (1+cos)/2 on lucene and from
  2.19 everywhere, 1/(2-cos) on nmslib/faiss before (k-NN PR 2357); scrolls. A mapping
  that names no engine gets the server's default (k-NN PR 2221 and 2498): nmslib before
  2.18, faiss from 2.18 (but nmslib for cosinesimil on 2.18, where faiss had no cosine),
  faiss from 2.19; 3.x refuses to create an nmslib index.

Approximate search is a real HNSW (faiss ``IndexHNSWFlat``) searched with the breadth the
request names (``num_candidates``; ``ef_search`` or the index setting), so misses are real.
Documents sit in a merged-segment order (by a hash of ``_id``), not the build order.
Every request is recorded in ``requests`` as (method, path, query).
"""

from __future__ import annotations

import json
import re
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import numpy as np

WINDOW = 10_000
TOKEN = re.compile(r"\w+")


class ApiError(Exception):
    def __init__(self, status: int, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.status, self.kind, self.reason = status, kind, reason


def _version(v: str) -> tuple[int, int]:
    a, b, *_ = (v.split(".") + ["0"])[:3]
    return int(a), int(b)


def _get(source: dict[str, Any], path: str) -> list[Any]:
    if path in source:
        node: Any = source[path]
    else:
        node = source
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                return []
            node = node[part]
    if node is None:
        return []
    return list(node) if isinstance(node, list) else [node]


class Index:
    def __init__(self, name: str, mappings: dict[str, Any], settings: dict[str, Any]) -> None:
        self.name = name
        self.mappings = mappings or {}
        self.mappings.setdefault("properties", {})
        self.settings = settings or {}
        self.docs: dict[str, dict[str, Any]] = {}
        self.order: list[str] = []
        self._hnsw: Any = None

    # -- mapping ----------------------------------------------------------------------------
    def field(self, path: str) -> dict[str, Any] | None:
        props = self.mappings["properties"]
        parts = path.split(".")
        prop: dict[str, Any] | None = None
        for i, part in enumerate(parts):
            if part in props:
                prop = props[part]
                props = prop.get("properties", {})
            elif prop is not None and part in (prop.get("fields") or {}) and i == len(parts) - 1:
                return dict(prop["fields"][part], parent=prop)
            else:
                return None
        return prop

    def _dynamic(self, props: dict[str, Any], source: dict[str, Any]) -> None:
        for key, value in source.items():
            sample = value[0] if isinstance(value, list) and value else value
            if key in props:
                if isinstance(sample, dict) and "properties" in props[key]:
                    self._dynamic(props[key]["properties"], sample)
                continue
            if isinstance(sample, dict):
                props[key] = {"properties": {}}
                self._dynamic(props[key]["properties"], sample)
            elif isinstance(sample, bool):
                props[key] = {"type": "boolean"}
            elif isinstance(sample, int):
                props[key] = {"type": "long"}
            elif isinstance(sample, float):
                props[key] = {"type": "float"}
            elif isinstance(sample, str):
                props[key] = {
                    "type": "text",
                    "fields": {"keyword": {"type": "keyword", "ignore_above": 256}},
                }

    def put(self, doc_id: str, source: dict[str, Any]) -> str:
        self._dynamic(self.mappings["properties"], source)
        result = "updated" if doc_id in self.docs else "created"
        self.docs[doc_id] = source
        self.refresh()
        return result

    def delete(self, doc_id: str) -> bool:
        found = self.docs.pop(doc_id, None) is not None
        self.refresh()
        return found

    def refresh(self) -> None:
        # segments merge: the doc order is not the order documents were added
        self.order = sorted(self.docs, key=lambda i: zlib.crc32(i.encode()))
        self._hnsw = None


class Emulator:
    """One server; ``flavor`` "elasticsearch" or "opensearch", ``version`` its number."""

    def __init__(self, flavor: str = "elasticsearch", version: str = "8.13.4") -> None:
        self.flavor, self.version = flavor, version
        self.indexes: dict[str, Index] = {}
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.bodies: list[Any] = []  # each request's JSON body (NDJSON kept as text)
        self.contexts: dict[str, tuple[str, list[str], dict[str, Any]]] = {}
        self.scrolls: dict[str, dict[str, Any]] = {}
        self.failures: list[int] = []  # statuses to answer the next requests with
        self.require_auth: tuple[str, str] | None = None
        self._n = 0
        self._lock = threading.Lock()
        emu = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once

            def log_message(self, *a: Any) -> None:
                pass

            def _any(self) -> None:
                emu._handle(self)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def es(self) -> bool:
        return self.flavor == "elasticsearch"

    # -- HTTP -------------------------------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        query = dict(parse_qsl(parts.query))
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        self.requests.append((h.command, parts.path, query))
        try:
            self.bodies.append(json.loads(raw) if raw else None)
        except ValueError:
            self.bodies.append(raw.decode("utf-8", "replace"))
        status, body = 200, {}
        try:
            with self._lock:
                if self.failures:
                    status = self.failures.pop(0)
                    raise ApiError(status, "emulated", f"emulated HTTP {status}")
                self._check_headers(h)
                status, body = self._route(h.command, parts.path, query, raw)
        except ApiError as e:
            status = e.status
            body = {
                "error": {
                    "type": e.kind,
                    "reason": e.reason,
                    "root_cause": [{"type": e.kind, "reason": e.reason}],
                },
                "status": e.status,
            }
        data = b"" if h.command == "HEAD" else json.dumps(body).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        if self.es:
            h.send_header("X-Elastic-Product", "Elasticsearch")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _check_headers(self, h: BaseHTTPRequestHandler) -> None:
        accept = h.headers.get("Accept") or ""
        if self.es and "compatible-with=" in accept:
            asked = int(accept.split("compatible-with=")[1][:1])
            if asked > _version(self.version)[0]:
                raise ApiError(
                    400,
                    "media_type_header_exception",
                    f"Invalid media-type value on headers [Accept]: "
                    f"compatible-with={asked} is not supported by this server",
                )
        if self.require_auth is not None:
            import base64

            got = h.headers.get("Authorization") or ""
            want = "Basic " + base64.b64encode(":".join(self.require_auth).encode()).decode()
            if got != want and got != f"ApiKey {self.require_auth[1]}":
                raise ApiError(401, "security_exception", "unable to authenticate user")

    def _route(self, method: str, path: str, q: dict[str, str], raw: bytes) -> tuple[int, Any]:
        seg = [s for s in path.split("/") if s]
        body = json.loads(raw) if raw and not path.endswith("_bulk") else {}
        if not seg:
            return 200, self._info()
        if seg[-1] == "_bulk":
            return 200, self._bulk(raw, seg[0] if len(seg) == 2 else None)
        if seg == ["_pit"] and method == "DELETE":
            return 200, {
                "succeeded": self.contexts.pop(body.get("id"), None) is not None,
                "num_freed": 1,
            }
        if seg == ["_search", "scroll"]:
            if method == "DELETE":
                for sid in body.get("scroll_id") or []:
                    self.scrolls.pop(sid, None)
                return 200, {"succeeded": True, "num_freed": 1}
            return 200, self._scroll_next(body)
        if seg == ["_search"]:
            return 200, self._search(None, body, q)
        name = seg[0]
        if len(seg) == 1:
            if method == "PUT":
                if name in self.indexes:
                    raise ApiError(400, "resource_already_exists_exception", f"[{name}] exists")
                self._create(name, body)
                return 200, {"acknowledged": True, "index": name}
            if method == "DELETE":
                self._index(name)
                del self.indexes[name]
                return 200, {"acknowledged": True}
            idx = self._index(name)
            return 200, {
                name: {"aliases": {}, "mappings": idx.mappings, "settings": {"index": idx.settings}}
            }
        idx = self._index(name)
        op = seg[1]
        if op == "_mapping":
            return 200, {name: {"mappings": idx.mappings}}
        if op == "_settings":
            flat = {f"index.{k}": str(v) for k, v in idx.settings.items()}
            return 200, {name: {"settings": flat}}
        if op == "_refresh":
            idx.refresh()
            return 200, {"_shards": {"total": 1, "successful": 1, "failed": 0}}
        if op == "_count":
            hits = [i for i in idx.order if self._match(idx, i, body.get("query"))]
            return 200, {"count": len(hits)}
        if op == "_pit" and self.es:
            return 200, {"id": self._context(idx)}
        if op == "_search" and len(seg) == 3 and seg[2] == "point_in_time":
            return 200, {"pit_id": self._context(idx)}
        if op == "_search":
            return 200, self._search(idx, body, q)
        if op == "_doc" and len(seg) == 3:
            if method == "DELETE":
                return (200 if idx.delete(seg[2]) else 404), {"result": "deleted"}
            if method in ("PUT", "POST"):
                return 201, {"_id": seg[2], "result": idx.put(seg[2], body)}
            if seg[2] not in idx.docs:
                return 404, {"found": False}
            return 200, {"_id": seg[2], "found": True, "_source": idx.docs[seg[2]]}
        raise ApiError(400, "illegal_argument_exception", f"no handler for {method} {path}")

    # -- APIs -------------------------------------------------------------------------------
    def _info(self) -> dict[str, Any]:
        if self.es:
            return {
                "name": "emu",
                "cluster_name": "emu",
                "version": {"number": self.version, "build_flavor": "default"},
                "tagline": "You Know, for Search",
            }
        return {
            "name": "emu",
            "cluster_name": "emu",
            "version": {"distribution": "opensearch", "number": self.version},
            "tagline": "The OpenSearch Project: https://opensearch.org/",
        }

    def _index(self, name: str) -> Index:
        if name not in self.indexes:
            raise ApiError(404, "index_not_found_exception", f"no such index [{name}]")
        return self.indexes[name]

    def _create(self, name: str, body: dict[str, Any]) -> Index:
        settings: dict[str, Any] = {}

        def flat(prefix: str, d: dict[str, Any]) -> None:
            for k, v in d.items():
                if isinstance(v, dict):
                    flat(f"{prefix}{k}.", v)
                else:
                    settings[f"{prefix}{k}".removeprefix("index.")] = v

        flat("", body.get("settings") or {})
        mappings = json.loads(json.dumps(body.get("mappings") or {}))
        for prop in (mappings.get("properties") or {}).values():
            if (
                self.es
                and prop.get("type") == "dense_vector"
                and "index_options" not in prop
                and _version(self.version) >= (8, 14)
                and prop.get("element_type", "float") == "float"
            ):
                prop["index_options"] = {"type": "int8_hnsw", "m": 16, "ef_construction": 100}
            if (
                not self.es
                and prop.get("type") == "knn_vector"
                and _version(self.version) >= (3, 0)
                and (prop.get("method") or {}).get("engine") == "nmslib"
            ):
                raise ApiError(
                    400,
                    "mapper_parsing_exception",
                    "nmslib engine is deprecated in OpenSearch and cannot be "
                    "used for new index creation starting from version 3.0.0",
                )
        idx = self.indexes[name] = Index(name, mappings, settings)
        return idx

    def _bulk(self, raw: bytes, default: str | None) -> dict[str, Any]:
        lines = [json.loads(x) for x in raw.decode().splitlines() if x.strip()]
        items, i = [], 0
        while i < len(lines):
            ((op, meta),) = lines[i].items()
            name = meta.get("_index") or default
            doc_id = str(meta.get("_id") or f"auto{self._next()}")
            if name not in self.indexes:
                self._create(name, {})
            idx = self.indexes[name]
            if op == "delete":
                idx.delete(doc_id)
                items.append({op: {"_index": name, "_id": doc_id, "status": 200}})
                i += 1
                continue
            result = idx.put(doc_id, lines[i + 1])
            items.append(
                {
                    op: {
                        "_index": name,
                        "_id": doc_id,
                        "result": result,
                        "status": 201 if result == "created" else 200,
                    }
                }
            )
            i += 2
        return {"took": 1, "errors": False, "items": items}

    def _next(self) -> int:
        self._n += 1
        return self._n

    def _context(self, idx: Index) -> str:
        cid = f"ctx{self._next()}"
        self.contexts[cid] = (idx.name, list(idx.order), dict(idx.docs))
        return cid

    # -- search -----------------------------------------------------------------------------
    def _search(self, idx: Index | None, body: dict[str, Any], q: dict[str, str]) -> Any:
        size = int(body.get("size", q.get("size", 10)))
        start = int(body.get("from", 0))
        if start + size > WINDOW:
            raise ApiError(
                400,
                "illegal_argument_exception",
                f"Result window is too large, from + size must be less than or "
                f"equal to: [{WINDOW}] but was [{start + size}]",
            )
        sort = body.get("sort") or []
        keys = [s if isinstance(s, str) else next(iter(s)) for s in sort]
        pit = body.get("pit")
        if pit is not None:
            if idx is not None:
                raise ApiError(
                    400,
                    "action_request_validation_exception",
                    "[indices] cannot be used with point in time",
                )
            if pit.get("id") not in self.contexts:
                raise ApiError(404, "search_context_missing_exception", "No search context")
            name, order, docs = self.contexts[pit["id"]]
            idx = self.indexes[name]
        elif idx is None:
            raise ApiError(400, "illegal_argument_exception", "no index")
        else:
            order, docs = idx.order, idx.docs
        if "_id" in keys and self.es:
            raise ApiError(
                400,
                "illegal_argument_exception",
                "Fielddata access on the _id field is disallowed, you can re-enable "
                "it by updating the dynamic cluster setting: "
                "indices.id_field_data.enabled",
            )
        if "_shard_doc" in keys and pit is None:
            raise ApiError(400, "illegal_argument_exception", "[_shard_doc] requires a pit")
        if "search_after" in body and not sort:
            raise ApiError(400, "illegal_argument_exception", "search_after needs a sort")
        knn = body.get("knn")
        query = body.get("query")
        if knn is not None and self.es:
            scored = self._es_knn(idx, knn, order, docs)
            scored = [(s, i) for s, i in scored if self._match(idx, i, query, docs)]
        elif not self.es and _has_knn(query):
            scored = self._os_knn(idx, query, order, docs)
        else:
            pos = {d: n for n, d in enumerate(order)}
            chosen = [i for i in order if self._match(idx, i, query, docs)]
            after = body.get("search_after")
            if after is not None:
                chosen = [i for i in chosen if pos[i] > int(after[0])]
            scored = [(1.0, i) for i in chosen]
        total = len(scored)
        page = scored[start : start + size]
        pos = {d: n for n, d in enumerate(order)}
        hits = []
        for score, i in page:
            hit: dict[str, Any] = {"_index": idx.name, "_id": i, "_score": score}
            src = self._source(idx, docs[i], body.get("_source", True))
            if src is not None:
                hit["_source"] = src
            if sort:
                hit["sort"] = [pos[i]]
            hits.append(hit)
        out: dict[str, Any] = {
            "took": 1,
            "timed_out": False,
            "hits": {
                "total": {"value": total, "relation": "eq"},
                "max_score": hits[0]["_score"] if hits else None,
                "hits": hits,
            },
        }
        if pit is not None:
            out["pit_id"] = pit["id"]
        if "scroll" in q:
            sid = f"scroll{self._next()}"
            self.scrolls[sid] = {
                "rest": scored[size:],
                "size": size,
                "idx": idx.name,
                "docs": docs,
                "source": body.get("_source", True),
            }
            out["_scroll_id"] = sid
        return out

    def _scroll_next(self, body: dict[str, Any]) -> Any:
        ctx = self.scrolls.get(body.get("scroll_id"))
        if ctx is None:
            raise ApiError(404, "search_context_missing_exception", "No search context found")
        page, ctx["rest"] = ctx["rest"][: ctx["size"]], ctx["rest"][ctx["size"] :]
        idx = self.indexes[ctx["idx"]]
        hits = [
            {
                "_index": idx.name,
                "_id": i,
                "_score": s,
                "_source": self._source(idx, ctx["docs"][i], ctx["source"]),
            }
            for s, i in page
        ]
        return {"_scroll_id": body["scroll_id"], "hits": {"hits": hits}}

    def _source(self, idx: Index, doc: dict[str, Any], spec: Any) -> Any:
        if spec is False:
            return None
        includes, exclude_vectors = None, _version(self.version) >= (9, 2) and self.es
        if isinstance(spec, list):
            includes = spec
        elif isinstance(spec, dict):
            includes = spec.get("includes")
            exclude_vectors = spec.get("exclude_vectors", exclude_vectors)
        dropped = set((idx.mappings.get("_source") or {}).get("excludes") or [])
        vtype = "dense_vector" if self.es else "knn_vector"
        if exclude_vectors:
            dropped |= {k for k, p in idx.mappings["properties"].items() if p.get("type") == vtype}
        out = {k: v for k, v in doc.items() if k not in dropped}
        if includes is not None:
            out = {k: v for k, v in out.items() if k in includes}
        return out

    # -- knn --------------------------------------------------------------------------------
    def _vectors(
        self, idx: Index, field: str, order: list[str], docs: dict[str, Any]
    ) -> tuple[list[str], np.ndarray]:
        ids = [i for i in order if isinstance(docs[i].get(field), list)]
        x = np.asarray([docs[i][field] for i in ids], dtype=np.float32).reshape(len(ids), -1)
        return ids, x

    def _knn_search(
        self,
        idx: Index,
        field: str,
        kind: str,
        qv: np.ndarray,
        k: int,
        ef: int,
        allowed: set[str] | None,
        order: list[str],
        docs: dict[str, Any],
    ) -> list[tuple[float, str]]:
        import faiss

        ids, x = self._vectors(idx, field, order, docs)
        if not ids:
            return []
        xs = x.copy()
        qs = qv.astype(np.float32).reshape(1, -1).copy()
        if kind == "cos":
            faiss.normalize_L2(xs)
            faiss.normalize_L2(qs)
        metric = faiss.METRIC_L2 if kind == "l2" else faiss.METRIC_INNER_PRODUCT
        prop = idx.field(field) or {}
        m = int(
            ((prop.get("method") or {}).get("parameters") or {}).get("m")
            or (prop.get("index_options") or {}).get("m")
            or 16
        )
        key = (field, kind, len(ids), ids[0], ids[-1])
        if idx._hnsw is None or idx._hnsw[0] != key:  # one graph per refresh
            graph = faiss.IndexHNSWFlat(x.shape[1], m, metric)
            graph.hnsw.efConstruction = 100
            graph.add(xs)
            idx._hnsw = (key, graph)
        hnsw = idx._hnsw[1]
        params = faiss.SearchParametersHNSW()
        params.efSearch = max(ef, k)
        if allowed is not None:
            sel = np.asarray([n for n, i in enumerate(ids) if i in allowed], dtype=np.int64)
            if len(sel) == 0:
                return []
            params.sel = faiss.IDSelectorBatch(sel)
        _, P = hnsw.search(qs, max(ef, k), params=params)
        found = [int(p) for p in P[0] if p >= 0]
        vecs = self._quantised(idx, field, x)
        q64, out = qv.astype(np.float64), []
        for p in found:
            out.append((self._score(idx, field, kind, vecs[p], q64), ids[p]))
        out.sort(key=lambda t: -t[0])
        return out[:k]

    def _quantised(self, idx: Index, field: str, x: np.ndarray) -> np.ndarray:
        opts = ((idx.field(field) or {}).get("index_options") or {}).get("type", "")
        if not str(opts).startswith("int8"):
            return x.astype(np.float64)
        lo, hi = float(np.quantile(x, 0.005)), float(np.quantile(x, 0.995))
        step = (hi - lo) / 127 or 1.0
        return (np.round((np.clip(x, lo, hi) - lo) / step) * step + lo).astype(np.float64)

    def _score(self, idx: Index, field: str, kind: str, x: np.ndarray, q: np.ndarray) -> float:
        prop = idx.field(field) or {}
        dot = float(x @ q)
        l2sq = float(((x - q) ** 2).sum())
        cos = dot / (float(np.linalg.norm(x) * np.linalg.norm(q)) or 1.0)
        if self.es:
            sim = prop.get("similarity", "cosine")
            table = {
                "cosine": (1 + cos) / 2,
                "dot_product": (1 + dot) / 2,
                "l2_norm": 1 / (1 + l2sq),
                "max_inner_product": dot + 1 if dot >= 0 else 1 / (1 - dot),
            }
            return float(table[sim])
        space, engine = _space(idx, prop, self.version)
        if space == "l2":
            return 1 / (1 + l2sq)
        if space == "innerproduct":
            return dot + 1 if dot >= 0 else 1 / (1 - dot)
        if engine == "lucene" or _version(self.version) >= (2, 19):
            return max((2 - (1 - cos)) / 2, 0.0)
        return 1 / (1 + (1 - cos))

    def _kind(self, idx: Index, field: str) -> str:
        prop = idx.field(field) or {}
        if self.es:
            sim = prop.get("similarity", "cosine")
            return {"cosine": "cos", "l2_norm": "l2"}.get(sim, "ip")
        space, _ = _space(idx, prop, self.version)
        return {"cosinesimil": "cos", "l2": "l2"}.get(space, "ip")

    def _es_knn(self, idx: Index, knn: Any, order: list[str], docs: dict[str, Any]) -> Any:
        knn = knn[0] if isinstance(knn, list) else knn
        k = int(knn.get("k", 10))
        nc = int(knn.get("num_candidates", min(max(k, round(1.5 * k)), WINDOW)))
        if nc > WINDOW:
            raise ApiError(
                400, "illegal_argument_exception", f"[num_candidates] cannot exceed [{WINDOW}]"
            )
        if k > nc:
            raise ApiError(
                400, "illegal_argument_exception", "[num_candidates] cannot be less than [k]"
            )
        field = knn["field"]
        allowed = None
        if knn.get("filter"):
            flt = knn["filter"]
            flt = {"bool": {"filter": flt}} if isinstance(flt, list) else flt
            allowed = {i for i in order if self._match(idx, i, flt, docs)}
        qv = np.asarray(knn["query_vector"], dtype=np.float64)
        return self._knn_search(idx, field, self._kind(idx, field), qv, k, nc, allowed, order, docs)

    def _os_knn(
        self, idx: Index, query: dict[str, Any], order: list[str], docs: dict[str, Any]
    ) -> Any:
        post = None
        if "bool" in query:
            musts = query["bool"].get("must") or []
            knn_q = next(m for m in musts if "knn" in m)["knn"]
            post = {"bool": {"filter": query["bool"].get("filter") or []}}
        else:
            knn_q = query["knn"]
        ((field, spec),) = knn_q.items()
        prop = idx.field(field) or {}
        _, engine = _space(idx, prop, self.version)
        k = int(spec["k"])
        mp = spec.get("method_parameters")
        if mp is not None and _version(self.version) < (2, 16):
            raise ApiError(
                400,
                "parsing_exception",
                "[knn] unknown token [START_OBJECT] after [method_parameters]",
            )
        if engine == "lucene":
            ef = k
        else:
            ef = int(idx.settings.get("knn.algo_param.ef_search", 100))
        if mp and "ef_search" in mp:
            ef = int(mp["ef_search"])
        allowed = None
        if spec.get("filter") is not None:
            if engine == "nmslib":
                raise ApiError(
                    400, "illegal_argument_exception", "Engine [NMSLIB] does not support filters"
                )
            allowed = {i for i in order if self._match(idx, i, spec["filter"], docs)}
            if len(allowed) <= k:  # efficient filtering: exact search over so few
                ef = len(docs) + k
        qv = np.asarray(spec["vector"], dtype=np.float64)
        out = self._knn_search(idx, field, self._kind(idx, field), qv, k, ef, allowed, order, docs)
        if post is not None:
            out = [(s, i) for s, i in out if self._match(idx, i, post, docs)]
        return out

    # -- query DSL --------------------------------------------------------------------------
    def _match(self, idx: Index, doc_id: str, q: Any, docs: dict[str, Any] | None = None) -> bool:
        if not q:
            return True
        doc = (docs or idx.docs)[doc_id]
        ((kind, arg),) = q.items()
        if kind == "match_all":
            return True
        if kind == "ids":
            return doc_id in set(arg.get("values") or [])
        if kind == "bool":

            def many(key: str) -> list[Any]:
                v = arg.get(key) or []
                return v if isinstance(v, list) else [v]

            ok = all(self._match(idx, doc_id, c, docs) for c in many("must") + many("filter"))
            ok = ok and not any(self._match(idx, doc_id, c, docs) for c in many("must_not"))
            should = many("should")
            need = int(
                arg.get(
                    "minimum_should_match",
                    0 if many("must") or many("filter") else 1 if should else 0,
                )
            )
            return ok and sum(self._match(idx, doc_id, c, docs) for c in should) >= need
        if kind == "exists":
            return bool(self._values(idx, doc, arg["field"]))
        if kind in ("term", "terms"):
            ((path, want),) = arg.items()
            if kind == "term":
                want = [want.get("value") if isinstance(want, dict) else want]
            have = self._values(idx, doc, path)
            prop = idx.field(path) or {}
            if prop.get("type") == "text":  # analysed: lower-case tokens
                have = [t for v in have for t in TOKEN.findall(str(v).lower())]
            return any(_equal(h, w) for h in have for w in want)
        if kind == "range":
            ((path, bounds),) = arg.items()
            ops = {"gt": np.greater, "gte": np.greater_equal, "lt": np.less, "lte": np.less_equal}
            for v in self._values(idx, doc, path):
                if isinstance(v, bool) or not isinstance(v, int | float):
                    continue
                if all(ops[o](v, b) for o, b in bounds.items()):
                    return True
            return False
        raise ApiError(400, "parsing_exception", f"unknown query [{kind}]")

    def _values(self, idx: Index, doc: dict[str, Any], path: str) -> list[Any]:
        prop = idx.field(path)
        if prop is not None and "parent" in prop:  # a keyword sub-field
            base = path.rsplit(".", 1)[0]
            limit = int(prop.get("ignore_above", 1 << 30))
            return [v for v in _get(doc, base) if isinstance(v, str) and len(v) <= limit]
        return _get(doc, path)


def _equal(have: Any, want: Any) -> bool:
    if isinstance(have, bool) or isinstance(want, bool):
        return isinstance(have, bool) and isinstance(want, bool) and have == want
    if isinstance(have, int | float) and isinstance(want, int | float):
        return float(have) == float(want)
    return have == want


def _has_knn(q: Any) -> bool:
    if not isinstance(q, dict):
        return False
    if "knn" in q:
        return True
    return any("knn" in m for m in (q.get("bool") or {}).get("must") or [])


def _space(idx: Index, prop: dict[str, Any], version: str) -> tuple[str, str]:
    method = prop.get("method") or {}
    space = (
        method.get("space_type")
        or prop.get("space_type")
        or idx.settings.get("knn.space_type")
        or "l2"
    )
    engine = method.get("engine") or default_engine(version, str(space))
    return str(space), str(engine)


def default_engine(version: str, space: str) -> str:
    """The engine OpenSearch ``version`` builds a knn_vector with when the mapping names
    none (k-NN PR 2221: faiss from 2.18; PR 2498: cosinesimil too from 2.19)."""
    v = _version(version)
    if v < (2, 18) or (v < (2, 19) and space == "cosinesimil"):
        return "nmslib"
    return "faiss"
