"""Weaviate (v4 API: REST for the schema, gRPC for search), read through ``weaviate-client`` 4.

Spec: ``weaviate:URL?collection=NAME[&grpc_port=N&grpc_host=H&target_vector=V&score=S
&tenant=T&text_key=K&batch=N&retries=N&retry_interval=S&timeout=S]``

- ``URL`` is the REST endpoint (``http://localhost:8080``, ``https://x.weaviate.cloud``); gRPC
  is on ``grpc_host`` (default: the URL's host) and ``grpc_port`` (default 50051, or 443 for
  https). The API key comes only from ``WEAVIATE_API_KEY`` and never appears in messages.
- ``collection``: the class read (LangChain's ``index_name``, LlamaIndex's ``index_name``).
- ``target_vector``: the named vector read, required when the collection has several; a
  collection without named vectors has one vector, which the client calls ``default``.
- ``score``: ``distance`` (the default, lower is better: ``1-cos``, ``-dot``, the squared l2)
  or ``certainty`` (``(1+cos)/2``, which Weaviate computes for cosine only).
- ``text_key``: the property holding the chunk text (LangChain's and LlamaIndex's ``text``);
  rows LlamaIndex wrote (``_node_content``) give the text LlamaIndex embedded.

Search is Weaviate's HNSW; its breadth is the collection's ``ef`` (``-1``: dynamic, ``limit *
dynamicEfFactor`` clamped to [dynamicEfMin, dynamicEfMax]), a setting of the collection, not of a
query, so ``info().details`` reports it and indexcheck, read-only, does not change it. A
filtered search that allows fewer objects than ``flatSearchCutoff`` is exact. A full read walks
the cursor (``after``, uuid order: no build order, positions for a shift come from ``--chunks``).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from ...errors import InputError, MissingDependencyError, SpecError
from ...safety.redact import redactor
from ...safety.secrets import env_secret
from ..base import Fetched, StoreInfo, StoreSpec, VectorBatch, pack_rows
from ..hosted import PACING_PARAMS, HostedStore, key_hint, shown_spec
from ..params import Choice, Int, Str, http_url
from .errors import KEY_ENV, WEAVIATE_ERRORS

__all__ = ["KEY_ENV", "WeaviateStore"]

MAX_RESULTS = 10000  # QUERY_MAXIMUM_RESULTS: limit + offset of one query
FINGERPRINT_SAMPLE = 100
PARAMS = (
    "collection",
    "grpc_host",
    "grpc_port",
    "target_vector",
    "score",
    "tenant",
    "text_key",
    "batch",
    "retries",
    "retry_interval",
    "timeout",
)
NODE_CONTENT = "_node_content"


def _endpoint(raw: str) -> tuple[str, str, int, bool]:
    """(url, host, port, https) of the REST endpoint ``raw``."""
    parts = http_url(
        raw,
        f"weaviate spec: write the REST URL, e.g. weaviate:http://localhost:8080"
        f"?collection=Docs (got '{raw}')",
        f"weaviate spec: remove credentials from the URL; the key goes in {KEY_ENV}",
    )
    assert parts.hostname is not None  # http_url refuses a URL without one
    https = parts.scheme == "https"
    port = parts.port or (443 if https else 80)
    return raw.rstrip("/"), parts.hostname, port, https


class WeaviateStore(HostedStore):
    """Read-only view of one collection (one named vector, one tenant) of a Weaviate."""

    scheme = "weaviate"
    label = "Weaviate"
    order_source = "Weaviate cursor order (uuid order, no build order)"
    params = {
        "collection": Str(),
        "grpc_host": Str(),
        "grpc_port": Int(min=1, max=65535),
        "target_vector": Str(),
        "score": Choice("distance", "certainty"),
        "tenant": Str(),
        "text_key": Str(),
        "batch": Int(min=1, max=MAX_RESULTS),
        **PACING_PARAMS,
    }
    param_hints = key_hint(KEY_ENV)
    fetch_batch = 200
    errors = WEAVIATE_ERRORS
    dimension_message = (
        "query vectors have dimension {got} but the Weaviate collection {store.collection} "
        "holds {want}; embed with the collection's model"
    )
    max_k = MAX_RESULTS
    max_k_message = (
        "Weaviate returns at most {max_k} objects per query (QUERY_MAXIMUM_RESULTS), asked for "
        "k={k}; ask for k <= {max_k}"
    )

    def __init__(
        self,
        url: str,
        values: dict[str, Any],
        api_key: str,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        try:
            import weaviate  # noqa: F401
        except ImportError as exc:
            raise MissingDependencyError(
                "the weaviate store", "weaviate", "weaviate-client"
            ) from exc
        self.url, self.host, self.port, self.https = _endpoint(url)
        self.collection = str(values["collection"])
        self.grpc_host = str(values.get("grpc_host") or self.host)
        self.grpc_port = int(values.get("grpc_port") or (443 if self.https else 50051))
        self.target = str(values.get("target_vector") or "") or None
        self.score_kind = str(values.get("score") or "distance")
        self.tenant = str(values.get("tenant") or "") or None
        self.text_key = str(values.get("text_key") or "text")
        self.page = int(values.get("batch", 200))
        self._pace(values)
        self.where = f"collection '{self.collection}' at {urlsplit(self.url).netloc}"
        self.spec = shown_spec(f"weaviate:{self.url}", values, PARAMS)
        self.requests = self.retries = 0
        self._sleep_fn = sleep
        self._key = api_key
        self._redact = redactor(api_key) if api_key else str
        self._client: Any = None
        self._coll: Any = None
        self._config: Any = None
        self._dim: int | None = None

    @classmethod
    def from_spec(
        cls, spec: StoreSpec, options: Any = None, sleep: Callable[[float], None] = time.sleep
    ) -> WeaviateStore:
        """Open ``weaviate:URL?collection=...``; the key comes from WEAVIATE_API_KEY."""
        values = cls.check_params(spec.params)
        url = spec.location.strip()
        _endpoint(url)
        if not values.get("collection"):
            raise SpecError(
                "weaviate spec: name the collection, e.g. weaviate:http://localhost:8080"
                "?collection=Docs"
            )
        return cls(url, values, env_secret(KEY_ENV), sleep=sleep)

    # -- requests ----------------------------------------------------------------------------
    def _connect(self) -> Any:
        import weaviate
        from weaviate.classes.init import AdditionalConfig, Auth, Timeout

        t = self.timeout
        client = weaviate.connect_to_custom(
            http_host=self.host,
            http_port=self.port,
            http_secure=self.https,
            grpc_host=self.grpc_host,
            grpc_port=self.grpc_port,
            grpc_secure=self.https,
            auth_credentials=Auth.api_key(self._key) if self._key else None,
            additional_config=AdditionalConfig(timeout=Timeout(init=t, query=t, insert=t)),
            skip_init_checks=True,  # no gRPC ping, no OIDC probe, no PyPI version check
        )
        return client

    def _collection(self) -> Any:
        """The collection handle and its config, read once (REST: meta, schema)."""
        if self._coll is None:
            self._client = self._call("connecting", self._connect)
            coll = self._client.collections.use(self.collection)
            config = self._call("reading the schema", coll.config.get)
            if config.multi_tenancy_config.enabled and not self.tenant:
                raise InputError(
                    f"the Weaviate collection '{self.collection}' is multi-tenant; pass "
                    "?tenant= with the tenant to read"
                )
            if self.tenant:
                coll = coll.with_tenant(self.tenant)
            named = dict(config.vector_config or {})
            if named:
                if self.target is None and len(named) > 1:
                    raise InputError(
                        f"the Weaviate collection '{self.collection}' has named vectors "
                        f"{', '.join(sorted(named))}; pass ?target_vector= with one of them"
                    )
                self.target = self.target or next(iter(named))
                if self.target not in named:
                    raise InputError(
                        f"the Weaviate collection '{self.collection}' has no named vector "
                        f"'{self.target}'; use one of: {', '.join(sorted(named))}"
                    )
            elif self.target is not None:
                raise InputError(
                    f"the Weaviate collection '{self.collection}' has no named vectors; "
                    "drop ?target_vector="
                )
            self._config, self._coll = config, coll
        return self._coll

    def _index_config(self) -> Any:
        self._collection()
        named = dict(self._config.vector_config or {})
        if named:
            return named[self.target].vector_index_config
        return self._config.vector_index_config

    @property
    def metric(self) -> str:
        return str(getattr(self._index_config().distance_metric, "value", "cosine"))

    def _vector_name(self) -> str:
        return self.target or "default"

    def properties(self) -> dict[str, tuple[str, str | None]]:
        """Property name -> (data type, tokenization) from the schema."""
        self._collection()
        out = {}
        for p in self._config.properties:
            tok = getattr(p.tokenization, "value", None) if p.tokenization else None
            out[str(p.name)] = (str(getattr(p.data_type, "value", p.data_type)), tok)
        return out

    def _checked_score(self) -> str:
        """The distance metric, once ``?score=certainty`` is known to be computable."""
        metric = self.metric
        if self.score_kind == "certainty" and metric != "cosine":
            raise InputError(
                f"Weaviate computes certainty for cosine only, and '{self.collection}' uses "
                f"{metric}; drop ?score=certainty to read the distance"
            )
        return metric

    # -- the VectorStore protocol ------------------------------------------------------------
    def info(self) -> StoreInfo:
        """Count, dimension, the distance metric and the score read (distance or certainty),
        and the search breadth (``ef``) in ``details``."""
        coll = self._collection()
        metric = self._checked_score()
        agg = self._call("counting", partial(coll.aggregate.over_all, total_count=True))
        cfg = self._index_config()
        ef = int(cfg.ef)
        breadth = (
            f"ef {ef}"
            if ef > 0
            else f"dynamic ef: limit*{cfg.dynamic_ef_factor} "
            f"in [{cfg.dynamic_ef_min}, {cfg.dynamic_ef_max}]"
        )
        details = {
            "collection": self.collection,
            "host": urlsplit(self.url).netloc,
            "target_vector": self._vector_name(),
            "tenant": self.tenant,
            "distance": metric,
            "score": self.score_kind,
            "index_type": str(type(self._index_config()).__name__),
            "search_breadth": breadth,
            "flat_search_cutoff": int(cfg.flat_search_cutoff),
            "requests": self.requests,
            "retries": self.retries,
        }
        name = f"{metric} certainty" if self.score_kind == "certainty" else metric
        count = int(agg.total_count or 0)
        return self.described(count, self._search_dimension() or 0, name, True, details)

    def _search_dimension(self) -> int | None:
        if self._dim is None:
            coll = self._collection()
            got = self._call(
                "reading",
                partial(
                    coll.query.fetch_objects,
                    limit=1,
                    include_vector=self._include(),
                    return_properties=[],
                ),
            )
            vecs = [self._vector(o) for o in got.objects]
            self._dim = len(vecs[0]) if vecs and vecs[0] is not None else None
        return self._dim

    def _include(self) -> Any:
        return [self.target] if self.target else True

    def _vector(self, obj: Any) -> list[float] | None:
        vec = (obj.vector or {}).get(self._vector_name())
        return list(vec) if vec is not None else None

    def fingerprint(self) -> str:
        """Collection, host, vector, count, dimension and metric, plus a hash of the ids and
        vectors of the first cursor page (up to 100 in uuid order)."""
        info = self.info()
        digest = self._page_hash(self._pages(FINGERPRINT_SAMPLE, once=True))
        return (
            f"weaviate:{self.collection}@{info.details['host']}/{self._vector_name()}"
            f"/{self.tenant or ''}:{info.count}:{info.dimension}:{info.metric}:{digest}"
        )

    def _text(self, props: dict[str, Any]) -> str | None:
        value = props.get(self.text_key)
        node = props.get(NODE_CONTENT)
        if isinstance(value, str) and isinstance(node, str):  # LlamaIndex's layout
            from ...inputs.formats.llamaindex import embedded_text_from_row

            return embedded_text_from_row(value, props, f"Weaviate row of {self.collection}")
        return value if isinstance(value, str) else None

    def _metadata(self, props: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in props.items() if k not in (self.text_key, NODE_CONTENT)}

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        """Stored vectors for ``ids`` (float32 (n, d)) in that order, in one request; an id
        that is no uuid cannot be in Weaviate and is reported missing."""
        from weaviate.classes.query import Filter

        dim = self._search_dimension() or 0
        canon: dict[str, str] = {}
        for i in ids:
            try:
                canon[i] = str(uuid.UUID(i))
            except ValueError:
                continue
        rows: dict[str, Any] = {}
        wanted = sorted(set(canon.values()))
        if wanted:
            coll = self._collection()
            got = self._call(
                "fetch",
                partial(
                    coll.query.fetch_objects,
                    filters=Filter.by_id().contains_any(wanted),
                    limit=len(wanted),
                    include_vector=self._include(),
                ),
            )
            rows = {str(o.uuid): o for o in got.objects}
        objs = [rows.get(canon.get(i, "")) for i in ids]
        vecs = [self._vector(o) if o is not None else None for o in objs]
        texts = [self._text(dict(o.properties)) if o is not None else None for o in objs]
        vectors, dims = pack_rows(vecs, dim)
        found = np.array([v is not None for v in vecs], dtype=bool)
        return Fetched(
            list(ids), vectors, found, dims, texts if any(t is not None for t in texts) else None
        )

    def _pages(self, size: int, once: bool = False) -> Iterator[VectorBatch]:
        coll = self._collection()
        dim = self._search_dimension() or 0
        after: Any = None
        while True:
            got = self._call(
                "listing",
                partial(
                    coll.query.fetch_objects,
                    limit=size,
                    after=after,
                    include_vector=self._include(),
                ),
            )
            objs = [o for o in got.objects if self._vector(o) is not None]
            if objs:
                props = [dict(o.properties) for o in objs]
                texts = [self._text(p) for p in props]
                metas = [self._metadata(p) for p in props]
                vectors, dims = pack_rows([self._vector(o) for o in objs], dim)
                yield VectorBatch(
                    [str(o.uuid) for o in objs],
                    vectors,
                    dims,
                    texts if any(t is not None for t in texts) else None,
                    metas if any(metas) else None,
                )
            if once or len(got.objects) < size:
                return
            after = got.objects[-1].uuid

    def _scan(self, batch: int) -> Iterator[VectorBatch]:
        """Every object with the vector read, through the cursor (``after``, uuid order),
        ``min(batch, ?batch=)`` per page; memory holds one page."""
        yield from self._pages(max(1, min(int(batch), self.page)))

    def _search(self, block: np.ndarray, k: int, native: Any) -> list[list[tuple[float, str]]]:
        from weaviate.classes.query import MetadataQuery

        coll, out = self._collection(), []
        certainty = self.score_kind == "certainty"
        meta = MetadataQuery(certainty=True) if certainty else MetadataQuery(distance=True)
        for v in block:
            res = self._call(
                "query",
                partial(
                    coll.query.near_vector,
                    near_vector=v.tolist(),
                    limit=k,
                    target_vector=self.target,
                    filters=native,
                    return_metadata=meta,
                    return_properties=[],
                ),
            )
            out.append(
                [
                    (float(o.metadata.certainty if certainty else o.metadata.distance), str(o.uuid))
                    for o in res.objects
                ]
            )
        return out

    def _knn(
        self, vectors: np.ndarray, k: int, native: Any, *how: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        """The HNSW top-k in Weaviate's distance (or certainty), once the certainty asked
        for is known to be computable."""
        if k <= self.max_k:
            self._checked_score()  # certainty on a non-cosine collection: refused before a search
        return super()._knn(vectors, k, native, *how)

    def _native_filter(self, node: Any) -> Any:
        """The client's ``Filter`` (:mod:`indexcheck.filters.weaviate`), typed by the schema."""
        from ...filters import translate

        cfg = self._collection() and self._config
        null_state = bool(getattr(cfg.inverted_index_config, "index_null_state", False))
        return translate(node, "weaviate", properties=self.properties(), null_state=null_state)

    def close(self) -> None:
        client, self._client, self._coll = self._client, None, None
        if client is not None:
            client.close()
