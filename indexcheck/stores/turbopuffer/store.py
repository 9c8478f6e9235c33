"""turbopuffer, read through the official ``turbopuffer`` SDK.

Spec: ``turbopuffer:NAMESPACE[?region=R&base_url=URL&text_key=K&metric=M&batch=N
&retries=N&retry_interval=S&timeout=S]``

- ``region`` (e.g. ``gcp-us-central1``; else ``TURBOPUFFER_REGION``) picks
  ``https://{region}.turbopuffer.com``; ``base_url`` names another endpoint (a local one). The
  API key comes only from ``TURBOPUFFER_API_KEY`` and never appears in ``spec`` or messages.
- ``text_key``: the attribute holding the chunk text; by default ``text`` (the vendor's
  examples) when the schema has it, else ``content`` (LangChain's
  ``TurbopufferVectorStore``). Every other attribute is metadata (LangChain's ``_meta_``
  prefix for a reserved name is taken off).
- ``metric``: only for a namespace whose schema names no ``distance_metric``.
- ``batch``: rows per scan page and ids per fetch (default 1,000; at most 10,000, the
  documented ``top_k`` limit).

Scores are turbopuffer's ``$dist`` (turbopuffer.com/docs/query): ``cosine_distance`` is
1-cos, ``euclidean_squared`` the squared distance, both lower is better. Search is
``rank_by ["vector", "ANN", q]``; exact search is ``["vector", "kNN", q]`` (the SDK's
``RankByKnn``). A full read pages by id (``rank_by ["id", "asc"]`` and ``["id", "Gt",
last]``, the documented export), so there is no build order: positions for a shift come
from ``--chunks``.
"""

from __future__ import annotations

import base64
import os
import re
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from ...errors import IncompleteResultError, InputError, MissingDependencyError, SpecError
from ...safety.redact import redactor
from ..base import Fetched, StoreInfo, VectorBatch, pack_rows
from ..hosted import PACING_PARAMS, HostedStore, Naming, api_key, key_hint, shown_spec
from ..metric_table import scores_of
from ..params import Choice, Int, Str, endpoint_url
from .errors import KEY_ENV, TURBOPUFFER_ERRORS

__all__ = ["KEY_ENV", "TurbopufferStore"]

MAX_TOP_K = 10_000  # top_k / limit.total of one query
FINGERPRINT_SAMPLE = 100  # rows of the first id page hashed by fingerprint()
REGION_ENV = "TURBOPUFFER_REGION"
REGION_URL = "https://{region}.turbopuffer.com"
PARAMS = ("region", "base_url", "text_key", "metric", "batch", "retries", "retry_interval",
          "timeout")  # fmt: skip
_REGION = re.compile(r"[a-z0-9-]{1,64}\Z")
_VECTOR_TYPE = re.compile(r"\[(\d+)\]f(16|32)\Z")
_OWN = frozenset({"id", "vector", "$dist"})
_META_PREFIX = "_meta_"  # LangChain's prefix for a metadata key that is a reserved name


def _vector_of(raw: Any) -> list[float] | None:
    """A row's vector: a float list, or base64 little-endian float32."""
    if raw is None:
        return None
    if isinstance(raw, str):
        return np.frombuffer(base64.b64decode(raw), dtype="<f4").tolist()  # type: ignore[no-any-return]
    return [float(x) for x in raw]


class TurbopufferStore(HostedStore):
    """Read-only view of one turbopuffer namespace."""

    scheme = "turbopuffer"
    order_source = "turbopuffer id order (no build order)"
    params = {
        "region": Str(),
        "base_url": Str(),
        "text_key": Str(),
        "metric": Choice(*scores_of("turbopuffer")),
        "batch": Int(min=1, max=MAX_TOP_K),
        **PACING_PARAMS,
    }
    param_hints = key_hint(KEY_ENV)
    has_exact = True
    errors = TURBOPUFFER_ERRORS
    dimension_message = (
        "query vectors have dimension {got} but the turbopuffer namespace {store.name} holds "
        "{want}; embed with the namespace's model"
    )
    max_k = MAX_TOP_K
    naming = Naming(
        re.compile(r"[A-Za-z0-9_.-]{1,128}\Z"), "/",
        "turbopuffer spec: write the namespace, turbopuffer:NAMESPACE (got '{name}'); an "
        "endpoint goes in ?region= or ?base_url=",
        "turbopuffer spec: a namespace is 1-128 letters, digits, '-', '_' or '.', e.g. "
        "turbopuffer:docs?region=gcp-us-central1 (got '{name}')",
    )  # fmt: skip
    max_k_message = (
        "turbopuffer returns at most {max_k} rows per query, asked for k={k}; ask for k <= {max_k}"
    )

    def __init__(self, name: str, api_key: str, base: str, values: dict[str, Any], *,
                 sleep: Callable[[float], None] = time.sleep) -> None:  # fmt: skip
        try:
            import turbopuffer
        except ImportError as exc:
            raise MissingDependencyError(
                "the turbopuffer store", "turbopuffer", "turbopuffer"
            ) from exc
        self.name, self.base = name, base
        self.text_key = str(values["text_key"]) if values.get("text_key") else None
        self.metric_given = str(values["metric"]) if values.get("metric") else None
        self.fetch_batch = int(values.get("batch", 1000))  # type: ignore[misc]
        self._pace(values)
        self.where = f"namespace '{name}' ({urlsplit(base).netloc})"
        self.spec = shown_spec(f"turbopuffer:{name}", values, PARAMS)
        self._sleep_fn = sleep
        self._redact = redactor(api_key)
        # SDK retries off: one failed request reaches the base, which retries it per policy.
        # The SDK reads TURBOPUFFER_REGION whenever region is None, and refuses it beside a
        # base_url without a {region} placeholder: a region goes in through the template,
        # and a given base_url is built with the variable out of the SDK's sight
        region = values.get("region") or (None if values.get("base_url") else
                                          os.environ.get(REGION_ENV))  # fmt: skip
        build = partial(turbopuffer.Turbopuffer, api_key=api_key, max_retries=0,
                        timeout=self.timeout)  # fmt: skip
        if region:
            client = build(region=str(region), base_url=REGION_URL)
        else:
            saved = os.environ.pop(REGION_ENV, None)
            try:
                client = build(base_url=base)
            finally:
                if saved is not None:
                    os.environ[REGION_ENV] = saved
        self._ns: Any = client.namespace(name)
        self._client: Any = client
        self._schema: dict[str, Any] | None = None

    @classmethod
    def named(cls, name: str, values: dict[str, Any],
              sleep: Callable[[float], None]) -> TurbopufferStore:  # fmt: skip
        """Open ``turbopuffer:NAMESPACE?...``; the key comes from TURBOPUFFER_API_KEY."""
        if values.get("region") and values.get("base_url"):
            raise SpecError("turbopuffer spec: give ?region= or ?base_url=, not both")
        if values.get("base_url"):
            base = endpoint_url(str(values["base_url"]), "turbopuffer spec: ?base_url=",
                                "http://localhost:8080", KEY_ENV)  # fmt: skip
        else:
            region = str(values.get("region") or os.environ.get(REGION_ENV, "")).strip()
            if not region:
                raise InputError(
                    "turbopuffer needs the namespace's region: add ?region= (e.g. "
                    f"turbopuffer:{name}?region=gcp-us-central1) or set {REGION_ENV}"
                )
            if not _REGION.match(region):
                raise SpecError(f"turbopuffer spec: ?region= is a region name such as "
                                f"gcp-us-central1 (got '{region}')")  # fmt: skip
            base = REGION_URL.format(region=region)
        key = api_key(KEY_ENV, "export an API key of the organisation")
        return cls(name, key, base, values, sleep=sleep)

    # -- requests ----------------------------------------------------------------------------
    def _query(self, doing: str, **body: Any) -> Any:
        return self._call(doing, partial(self._ns.query, **body))

    def _described(self) -> dict[str, Any]:
        """The namespace schema, once: attribute -> its type and ANN settings."""
        if self._schema is None:
            got = self._call("schema", self._ns.schema)
            self._schema = {str(k): v for k, v in dict(got).items()}
        return self._schema

    def _types(self) -> dict[str, str]:
        return {k: str(getattr(v, "type", "")) for k, v in self._described().items()}

    def _vector(self) -> tuple[int, str]:
        """Dimension and distance metric of the namespace's ``vector`` attribute."""
        conf = self._described().get("vector")
        m = _VECTOR_TYPE.match(str(getattr(conf, "type", "")))
        if conf is None or m is None:
            raise InputError(
                f"the turbopuffer namespace '{self.name}' holds no vectors (its schema has no "
                "'vector' attribute); indexcheck checks vector indexes"
            )
        ann = getattr(conf, "ann", None)
        metric = getattr(ann, "distance_metric", None) if ann is not None else None
        if metric and self.metric_given and metric != self.metric_given:
            raise InputError(
                f"the turbopuffer namespace '{self.name}' uses {metric}, not the "
                f"?metric={self.metric_given} given; drop ?metric="
            )
        metric = metric or self.metric_given
        if not metric:
            raise InputError(
                f"the schema of the turbopuffer namespace '{self.name}' names no distance "
                "metric; add ?metric=cosine_distance or ?metric=euclidean_squared"
            )
        return int(m.group(1)), str(metric)

    def _text_attr(self) -> str | None:
        if self.text_key is not None:
            return self.text_key
        schema = self._described()
        return next((k for k in ("text", "content") if k in schema), None)

    # -- the VectorStore protocol ------------------------------------------------------------
    def info(self) -> StoreInfo:
        """Row count (an exact Count aggregation), dimension, metric and its score."""
        dim, metric = self._vector()
        got = self._query("count", aggregate_by={"count": ("Count",)})
        count = int((got.aggregations or {}).get("count", 0))
        details = {
            "namespace": self.name,
            "server": urlsplit(self.base).netloc,
            "text_attribute": self._text_attr(),
            "requests": self.requests,
            "retries": self.retries,
        }
        return self.described(count, dim, metric, True, details)

    def _search_dimension(self) -> int:
        return self._vector()[0]

    def fingerprint(self) -> str:
        """Namespace, server, count, dimension and metric, plus a hash of the ids and vectors
        of the first id page (up to 100). A change that keeps the count and misses that page
        goes unseen."""
        info = self.info()
        digest = self._page_hash(self._pages(FINGERPRINT_SAMPLE, once=True))
        return (
            f"turbopuffer:{self.name}@{info.details['server']}:{info.count}:{info.dimension}:"
            f"{info.metric}:{digest}"
        )

    def _id_values(self, ids: list[str]) -> list[Any]:
        """Ids as the namespace types them (numbers for a ``uint`` id column)."""
        if self._types().get("id") in ("uint", "int"):
            return [int(i) for i in ids if i.isdigit()]
        return list(ids)

    def _split(self, row: Any) -> tuple[str, list[float] | None, str | None, dict[str, Any]]:
        """A row's id, vector, text and metadata (every other attribute)."""
        attrs = dict(getattr(row, "model_extra", None) or {})
        text_attr = self._text_attr()
        text = attrs.get(text_attr) if text_attr else None
        meta: dict[str, Any] = {}
        for key, value in attrs.items():
            if key in _OWN or key == text_attr:
                continue
            meta[key[len(_META_PREFIX) :] if key.startswith(_META_PREFIX) else key] = value
        return (str(row.id), _vector_of(getattr(row, "vector", None)),
                text if isinstance(text, str) else None, meta)  # fmt: skip

    def _rows(self, doing: str, top_k: int, filters: Any) -> list[Any]:
        body: dict[str, Any] = {
            "rank_by": ("id", "asc"), "top_k": top_k, "include_attributes": True,
            "vector_encoding": "base64",
        }  # fmt: skip
        if filters is not None:
            body["filters"] = filters
        return list(self._query(doing, **body).rows or [])

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        """Stored vectors for ``ids`` (float32 (n, d)), in that order, in one ``id In``
        query; texts from the text attribute."""
        dim = self._search_dimension()
        wanted = self._id_values(list(dict.fromkeys(ids)))
        found: dict[str, tuple[list[float] | None, str | None]] = {}
        if wanted:
            for row in self._rows("fetch", len(wanted), ("id", "In", wanted)):
                vid, vec, text, _ = self._split(row)
                found[vid] = (vec, text)
        vecs = [found[i][0] if i in found else None for i in ids]
        texts = [found[i][1] if i in found else None for i in ids]
        vectors, dims = pack_rows(vecs, dim)
        hit = np.array([i in found and found[i][0] is not None for i in ids], dtype=bool)
        return Fetched(list(ids), vectors, hit, dims,
                       texts if any(t is not None for t in texts) else None)  # fmt: skip

    def _pages(self, size: int, once: bool = False) -> Iterator[VectorBatch]:
        dim = self._search_dimension()
        last: Any = None
        while True:
            flt = None if last is None else ("id", "Gt", last)
            rows = self._rows("scan", size, flt)
            parts = [self._split(r) for r in rows]
            with_vec = [p for p in parts if p[1] is not None]
            if with_vec:
                texts = [p[2] for p in with_vec]
                metas = [p[3] for p in with_vec]
                vectors, dims = pack_rows([p[1] for p in with_vec], dim)
                yield VectorBatch([p[0] for p in with_vec], vectors, dims,
                                  texts if any(t is not None for t in texts) else None,
                                  metas if any(metas) else None)  # fmt: skip
            if once or len(rows) < size:
                return
            nxt = rows[-1].id
            if last is not None and nxt == last:
                raise IncompleteResultError(
                    f"turbopuffer returned the same last id twice paging {self.where}; the scan "
                    "would loop, rerun when the namespace is not being written to"
                )
            last = nxt

    def _scan(self, batch: int) -> Iterator[VectorBatch]:
        """Every row with a vector, paged by id (``batch`` rows a page, at most ``?batch=``);
        memory holds one page."""
        yield from self._pages(max(1, min(int(batch), self.fetch_batch)))

    def _search(self, block: np.ndarray, k: int, native: Any,
                how: str = "ANN") -> list[list[tuple[float, str]]]:  # fmt: skip
        out = []
        where = {} if native is None else {"filters": native}
        for v in block:
            res = self._query("query", rank_by=("vector", how, v.tolist()), top_k=k, **where)
            out.append([(float(getattr(r, "$dist")), str(r.id)) for r in res.rows or []])
        return out

    def _exact_batch(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """turbopuffer's exhaustive kNN, same shapes and scale as :meth:`_query_batch` (its
        ``$dist``: 1-cos or squared l2)."""
        return self._knn(vectors, k, None, "kNN")

    def _native_filter(self, node: Any) -> Any:
        """turbopuffer's ``filters`` array (:mod:`indexcheck.filters.turbopuffer`), typed by
        the namespace schema."""
        from ...filters import translate

        return translate(node, "turbopuffer", types=self._types())

    def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            client.close()
