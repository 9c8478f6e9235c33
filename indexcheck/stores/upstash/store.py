"""Upstash Vector (hosted, REST), read through the official ``upstash-vector`` SDK.

Spec: ``upstash:[URL][?namespace=NS&text_field=F&retries=N&retry_interval=S&timeout=S&batch=N]``

- ``URL`` is the index REST URL; when empty, ``UPSTASH_VECTOR_REST_URL`` is used. The token
  comes only from ``UPSTASH_VECTOR_REST_TOKEN`` (a read-only token is enough), checked by
  :func:`indexcheck.safety.secrets.env_secret`, and never appears in ``spec``, messages or reprs.
- ``namespace``: the namespace to read (default: the default namespace ``""``).
- ``text_field``: metadata key holding the chunk text when the ``data`` field is empty
  (default ``text``).
- ``retries`` (default 5), ``retry_interval`` (seconds, default 0.5: exponential backoff with
  jitter, or the server's Retry-After), ``timeout`` (seconds per request, default 60),
  ``batch`` (vectors per fetch/range request, at most 1000, Upstash's max reads per request).

Scores are Upstash's own, higher is better (upstash.com/docs/vector/features/
similarityfunctions): COSINE ``(1+cos)/2``, EUCLIDEAN ``1/(1+l2^2)``, DOT_PRODUCT
``(1+dot)/2``. Queries are approximate (DiskANN); Upstash has no exact search.

The SDK is built with ``retries=0`` (it retries only transport errors and hides HTTP
statuses): the base retries; a response hook records each reply's status and Retry-After."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from typing import Any, Unpack
from urllib.parse import urlsplit

import numpy as np

from ...errors import (
    DimensionMismatchError,
    IncompleteResultError,
    InputError,
    MissingDependencyError,
)
from ...remote.http import retry_after
from ...remote.retry import RetryPolicy
from ...remote.waiting import Pacing, PacingKeywords
from ...safety.redact import redactor
from ..base import Fetched, StoreInfo, StoreSpec, VectorBatch, empty_result, pack_rows
from ..hosted import PACING_PARAMS, HostedStore, api_key, pacing, shown_spec
from ..params import Int, Str, http_url
from .errors import TOKEN_ENV, UPSTASH_ERRORS, URL_ENV

__all__ = ["TOKEN_ENV", "URL_ENV", "UpstashStore"]

MAX_READS = 1000  # Upstash's max_reads_per_request: ids per fetch, limit per range
FINGERPRINT_SAMPLE = 100  # vectors of the first range page hashed by fingerprint()
SCORES = {"COSINE": "(1+cos)/2", "EUCLIDEAN": "1/(1+l2^2)", "DOT_PRODUCT": "(1+dot)/2"}
PARAMS = ("namespace", "text_field", "retries", "retry_interval", "timeout", "batch")


class UpstashStore(HostedStore):
    """Read-only view of one namespace of an Upstash Vector index."""

    scheme = "upstash"
    #: Upstash ranges by id: no build order
    order_source = "upstash order (no build order)"
    params = {
        "namespace": Str(),
        "text_field": Str(),
        **PACING_PARAMS,
        "batch": Int(min=1, max=MAX_READS),
    }
    param_hints = {"token": "tokens go in UPSTASH_VECTOR_REST_TOKEN only"}
    fetch_batch = MAX_READS
    errors = UPSTASH_ERRORS
    label = "Upstash"
    k_message = "k must be at least 1 for an Upstash query, got {k}"
    dimension_error = DimensionMismatchError
    dimension_message = (
        "query vectors have dimension {got} but the Upstash index at {store.host} holds "
        "{want}; embed with the index's model"
    )

    def __init__(
        self,
        url: str,
        token: str,
        *,
        namespace: str = "",
        text_field: str = "text",
        batch: int = MAX_READS,
        spec: str | None = None,
        pacing: Pacing | None = None,
        **given: Unpack[PacingKeywords],
    ) -> None:
        """``pacing`` (or ``retry=``, ``timeout=``, ``sleep=``): default 5 retries from
        0.5 s, 60 s per request."""
        pace = replace(pacing or Pacing(), **given)
        try:
            import httpx
            from upstash_vector import Index
        except ImportError as exc:
            raise MissingDependencyError("the upstash store", "upstash", "upstash-vector") from exc
        self.url = url.rstrip("/")
        self.host = urlsplit(self.url).netloc or self.url
        self.namespace = namespace
        self.text_field = text_field
        self.retry = pace.retry or RetryPolicy(max_retries=5, base_delay=0.5, max_delay=20.0)
        self.timeout = 60.0 if pace.timeout is None else pace.timeout
        self.batch = max(1, min(int(batch), MAX_READS))
        self.fetch_batch = self.batch  # type: ignore[misc]
        self.spec = spec or f"upstash:{self.url}"
        self.requests = 0
        self.retries = 0
        self._sleep_fn = pace.sleep
        self._redact = redactor(token)
        self._dim: int | None = None
        self._status: int | None = None
        self._retry_after: float | None = None
        try:
            self._index: Any = Index(url=self.url, token=token, retries=0, allow_telemetry=False)
        except TypeError:  # SDKs before allow_telemetry
            self._index = Index(url=self.url, token=token, retries=0)
        # The SDK owns its httpx client; setting its timeout and a response hook is the
        # only way to bound waits and to see HTTP statuses the SDK otherwise discards.
        client = getattr(self._index, "_client", None)
        if isinstance(client, httpx.Client):
            client.timeout = httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0))
            client.event_hooks = {"response": [self._on_response]}

    @classmethod
    def from_spec(
        cls, spec: StoreSpec, options: Any = None, sleep: Callable[[float], None] = time.sleep
    ) -> UpstashStore:
        """Open from a parsed ``upstash:`` spec and the environment."""
        values = cls.check_params(spec.params)
        url = spec.location.strip() or os.environ.get(URL_ENV, "").strip()
        if not url:
            raise InputError(
                f"no Upstash URL: write upstash:https://<index>.upstash.io or set {URL_ENV}"
            )
        http_url(
            url,
            "upstash spec: the URL must look like https://<index>.upstash.io; "
            "copy UPSTASH_VECTOR_REST_URL from the Upstash console "
            f"(got '{urlsplit(url).scheme}:')",
            "upstash spec: remove credentials and query strings from the URL; "
            f"the token goes in {TOKEN_ENV}",
        )
        # stray whitespace stripped (warned), controls refused
        token = api_key(TOKEN_ENV, "export the index's REST token (read-only is enough)")
        p = spec.params
        retry, timeout = pacing(values)  # --timeout / --max-wait; the spec's own keys win
        return cls(
            url,
            token,
            namespace=p.get("namespace", ""),
            text_field=p.get("text_field") or "text",
            batch=int(values.get("batch", MAX_READS)),
            spec=shown_spec(f"upstash:{url.rstrip('/')}", p, PARAMS),
            pacing=Pacing(retry=retry, timeout=timeout, sleep=sleep),
        )

    # -- requests: statuses for the error table, counts -------------------------------------
    def _on_response(self, response: Any) -> None:
        self._status = int(response.status_code)
        self._retry_after = retry_after(response.headers)

    def _sleep(self, seconds: float) -> None:
        self._sleep_fn(seconds)

    def _before_call(self) -> None:
        self._status, self._retry_after = None, None
        self.requests += 1

    # -- the VectorStore protocol -----------------------------------------------------------
    def info(self) -> StoreInfo:
        """Count, dimension and score of the namespace; ``count`` includes pending vectors."""
        res = self._call("info", self._index.info)
        similarity = str(res.similarity_function).upper()
        dimension = int(res.dimension)
        if dimension <= 0:
            raise InputError(
                f"the Upstash index at {self.host} has no dense vectors (a sparse index); "
                "indexcheck checks dense indexes"
            )
        entry = res.namespaces.get(self.namespace)
        if entry is None and self.namespace:
            names = ", ".join(repr(n) for n in sorted(res.namespaces)) or "none"
            raise InputError(
                f"the Upstash index at {self.host} has no namespace '{self.namespace}'; "
                f"use ?namespace= with one of: {names}"
            )
        ready = int(entry.vector_count) if entry else 0
        pending = int(entry.pending_vector_count) if entry else 0
        self._dim = dimension
        return StoreInfo(
            backend="upstash",
            count=ready + pending,
            dimension=dimension,
            metric=similarity,
            score=SCORES.get(similarity, "unknown"),
            higher_is_better=True,
            approximate=True,
            details={
                "host": self.host,
                "namespace": self.namespace,
                "ready_vector_count": ready,
                "pending_vector_count": pending,
                "index_vector_count": int(res.vector_count),
                "index_size_bytes": int(res.index_size),
                "namespaces": sorted(res.namespaces),
                "requests": self.requests,
                "retries": self.retries,
            },
        )

    def _dimension(self) -> int:
        if self._dim is None:
            self.info()
        assert self._dim is not None
        return self._dim

    _search_dimension = _dimension

    def fingerprint(self) -> str:
        """Namespace, count (ready + pending), dimension and similarity, plus a hash of the
        ids and vectors of the first range page (up to 100 vectors in Upstash's id order).
        Two requests; a change that keeps the count and misses that page goes unseen."""
        info = self.info()
        page = self._call("range", partial(self._range, "0", FINGERPRINT_SAMPLE))
        h = hashlib.sha256()
        for item in page.vectors:
            h.update(str(item.id).encode() + b"\0")
            h.update(np.asarray(item.vector or [], dtype=np.float32).tobytes())
        return (
            f"upstash:{self.namespace}:{info.count}:{info.dimension}:{info.metric}:"
            f"{h.hexdigest()[:16]}"
        )

    def _range(self, cursor: str, limit: int) -> Any:
        return self._index.range(
            cursor=cursor,
            limit=limit,
            include_vectors=True,
            include_metadata=True,
            include_data=True,
            namespace=self.namespace,
        )

    def _fetch(self, ids: list[str]) -> Any:
        return self._index.fetch(
            ids,
            include_vectors=True,
            include_metadata=True,
            include_data=True,
            namespace=self.namespace,
        )

    def _text(self, item: Any) -> str | None:
        if isinstance(item.data, str) and item.data:
            return item.data
        value = (item.metadata or {}).get(self.text_field)
        return value if isinstance(value, str) else None

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        """Stored vectors for ``ids`` (float32 (n, d)), in that order, in one request;
        texts from ``data``, else from ``metadata[text_field]``."""
        dim = self._dimension()
        rows: list[Any] = []
        texts: list[str | None] = []
        got = self._call("fetch", partial(self._fetch, ids))
        if not isinstance(got, list) or len(got) != len(ids):
            n = len(got) if isinstance(got, list) else 0
            raise IncompleteResultError(
                f"Upstash fetch from {self.host} answered {n} entries for {len(ids)} ids; "
                "rerun, and report it if it persists"
            )
        for want, item in zip(ids, got, strict=True):
            if item is not None and (str(item.id) != want or item.vector is None):
                raise IncompleteResultError(
                    f"Upstash fetch from {self.host} returned '{item.id}' without the "
                    f"vector asked for '{want}'; rerun, and report it if it persists"
                )
            rows.append(None if item is None else item.vector)
            texts.append(None if item is None else self._text(item))
        vectors, dims = pack_rows(rows, dim)
        found = np.array([r is not None for r in rows], dtype=bool)
        has_text = any(t is not None for t in texts)
        return Fetched(ids, vectors, found, dims, texts if has_text else None)

    def _scan(self, batch: int) -> Iterator[VectorBatch]:
        """Every vector of the namespace via ``range``, in pages of ``min(batch, 1000)``."""
        dim = self._dimension()
        limit = max(1, min(int(batch), self.batch))
        cursor, seen = "0", {"0", ""}
        while True:
            page = self._call("range", partial(self._range, cursor, limit))
            items = list(page.vectors)
            if items:
                vectors, dims = pack_rows([v.vector for v in items], dim)
                texts = [self._text(v) for v in items]
                metadata = [dict(v.metadata or {}) for v in items]
                yield VectorBatch(
                    ids=[str(v.id) for v in items],
                    vectors=vectors,
                    dims=dims,
                    texts=texts if any(t is not None for t in texts) else None,
                    metadata=metadata if any(metadata) else None,
                )
            nxt = str(page.next_cursor or "")
            if not nxt:
                return
            if nxt in seen:
                raise IncompleteResultError(
                    f"Upstash range on {self.host} returned cursor '{nxt}' again; "
                    "the scan would loop, rerun when the index is not being written to"
                )
            seen.add(nxt)
            cursor = nxt

    def _query_block(self, block: np.ndarray, k: int, filter: str = "") -> Any:
        where = {"filter": filter} if filter else {}
        queries = [{"vector": v.tolist(), "top_k": k, **where} for v in block]
        return self._index.query_many(queries=queries, namespace=self.namespace)

    def _filtered_query_batch(
        self, block: np.ndarray, k: int, native: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        return self._query_batch(block, k, native)

    def _query_batch(
        self, block: np.ndarray, k: int, filter: str = ""
    ) -> tuple[np.ndarray, np.ndarray]:
        """Approximate top-k: float32 (q, d) -> (D float32 (q, k) in Upstash's score,
        higher is better, NaN where missing; I object (q, k) of ids, None where missing);
        under Upstash's filter string when given."""
        D, I = empty_result(block.shape[0], k)
        results = self._call("query", partial(self._query_block, block, k, filter))
        if len(results) != len(block):
            raise IncompleteResultError(
                f"Upstash answered {len(results)} result lists for {len(block)} queries "
                f"on {self.host}; rerun, and report it if it persists"
            )
        for r, hits in enumerate(results):
            for j, hit in enumerate(hits[:k]):
                D[r, j] = float(hit.score)
                I[r, j] = str(hit.id)
        return D, I

    def close(self) -> None:
        client = getattr(self._index, "_client", None)
        if client is not None:
            client.close()
