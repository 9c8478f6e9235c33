"""Pinecone (serverless and pod-based), read through the official ``pinecone`` SDK.

Spec: ``pinecone:INDEX[?namespace=NS&host=URL&text_key=K&batch=N&retries=N&retry_interval=S
&timeout=S]``

- ``INDEX`` is the index name; its host, metric, dimension and kind come from
  ``describe_index`` (the control plane, ``api.pinecone.io``; or ``host=``, the endpoint of a
  local deployment such as Pinecone Local, whose describe_index names the index's own host).
  The API key comes only from ``PINECONE_API_KEY`` and never appears in ``spec`` or messages.
- ``namespace``: the namespace read (default: the default namespace, ``""``, which the
  namespace APIs call ``__default__``; both spellings work). Two namespaces of one index are
  two indexes to indexcheck: the spec and the fingerprint name the namespace.
- ``text_key``: the metadata key holding the chunk text (LangChain's ``text``, the default);
  rows LlamaIndex wrote (``_node_content``) give the text LlamaIndex embedded.
- ``batch``: ids per fetch (default 200, at most 1,000, Pinecone's limit; ids travel in the
  URL of a GET).

Scores are Pinecone's (docs: indexing-overview, similarity metrics): ``cosine`` the cosine,
``dotproduct`` the dot product (higher is better), ``euclidean`` the SQUARED distance (lower
is better). Queries are approximate; Pinecone has no exact search. A full read lists ids
(serverless only: pod-based indexes have no ``list``; sorted bytewise, so no build order:
positions for a shift come from ``--chunks``) and fetches them page by page (float32).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from ...errors import IncompleteResultError, InputError, MissingDependencyError
from ...safety.redact import redactor
from ..base import Fetched, StoreInfo, VectorBatch, pack_rows
from ..hosted import PACING_PARAMS, HostedStore, Naming, api_key, key_hint, shown_spec
from ..node_rows import payload_text
from ..params import Int, Str, endpoint_url
from .errors import KEY_ENV, PINECONE_ERRORS

__all__ = ["KEY_ENV", "PineconeStore"]

MAX_FETCH = 1000  # ids per fetch request
LIST_PAGE = 100  # ids per list page (Pinecone's default)
MAX_TOP_K = 10000  # topK of a query that includes neither values nor metadata
FINGERPRINT_SAMPLE = 100  # vectors of the first list page hashed by fingerprint()
DEFAULT_NAMESPACE = "__default__"  # the namespace APIs' name for ""
PARAMS = ("namespace", "host", "text_key", "batch", "retries", "retry_interval", "timeout")


class PineconeStore(HostedStore):
    """Read-only view of one namespace of a Pinecone index."""

    scheme = "pinecone"
    label = "Pinecone"
    order_source = "Pinecone list order (ids sorted bytewise, no build order)"
    params = {
        "namespace": Str(),
        "host": Str(),
        "text_key": Str(),
        "batch": Int(min=1, max=MAX_FETCH),
        **PACING_PARAMS,
    }
    param_hints = key_hint(KEY_ENV)
    errors = PINECONE_ERRORS
    dimension_message = (
        "query vectors have dimension {got} but the Pinecone index {store.name} holds {want}; "
        "embed with the index's model"
    )
    max_k = MAX_TOP_K
    naming = Naming(
        re.compile(r"[a-z0-9][a-z0-9-]{0,44}\Z"), ".",
        "pinecone spec: write the index name, pinecone:INDEX (got '{name}'); a local endpoint "
        "goes in ?host=",
        "pinecone spec: an index name is 1-45 lowercase letters, digits or hyphens, e.g. "
        "pinecone:docs?namespace=prod (got '{name}')",
    )  # fmt: skip
    max_k_message = (
        "Pinecone returns at most {max_k} matches per query, asked for k={k}; ask for k <= {max_k}"
    )

    def __init__(self, name: str, api_key: str, values: dict[str, Any], *,
                 sleep: Callable[[float], None] = time.sleep) -> None:  # fmt: skip
        try:
            import urllib3
            from pinecone import Pinecone
        except ImportError as exc:
            raise MissingDependencyError("the pinecone store", "pinecone", "pinecone") from exc
        self.name = name
        ns = str(values.get("namespace", ""))
        self.namespace = "" if ns == DEFAULT_NAMESPACE else ns
        self.control = (
            endpoint_url(
                str(values["host"]), "pinecone spec: ?host=", "http://localhost:5080", KEY_ENV
            )
            if values.get("host")
            else None
        )
        self.text_key = str(values.get("text_key") or "text")
        self.fetch_batch = int(values.get("batch", 200))  # type: ignore[misc]
        self._pace(values)
        self.where = f"index '{name}'" + (f" at {self.control}" if self.control else "")
        self.spec = shown_spec(f"pinecone:{name}", values, PARAMS)
        self._sleep_fn = sleep
        self._redact = redactor(api_key)
        self._pc: Any = Pinecone(api_key=api_key, host=self.control)
        # urllib3 retries off: one failed request reaches the base, which retries it once
        # per policy (the SDK's own 5 retries would hide 5xx and ignore Retry-After)
        self._pc._openapi_config.retries = urllib3.Retry(
            total=0, connect=0, read=0, redirect=0, status=0, raise_on_status=False
        )
        self._desc: Any = None
        self._index: Any = None

    @classmethod
    def named(cls, name: str, values: dict[str, Any],
              sleep: Callable[[float], None]) -> PineconeStore:  # fmt: skip
        """Open ``pinecone:INDEX?...``; the key comes from PINECONE_API_KEY."""
        return cls(name, api_key(KEY_ENV, "export the API key of the index's project"), values,
                   sleep=sleep)  # fmt: skip

    # -- requests ----------------------------------------------------------------------------
    def _opts(self) -> dict[str, Any]:
        return {"_request_timeout": self.timeout}

    def _described(self) -> Any:
        """describe_index, once: host, metric, dimension, kind."""
        if self._desc is None:
            desc = self._call("describe_index", partial(self._pc.describe_index, self.name))
            if str(getattr(desc, "vector_type", "dense") or "dense") != "dense":
                raise InputError(
                    f"the Pinecone index '{self.name}' is a sparse index; indexcheck checks "
                    "dense vectors"
                )
            host = str(desc.host)
            if "://" not in host:  # a local deployment names its host without a scheme
                scheme = urlsplit(self.control).scheme if self.control else "https"
                host = f"{scheme}://{host}"
            self._desc = desc
            self.host = host
            self.where = f"index '{self.name}' ({urlsplit(host).netloc})"
            self._index = self._pc.Index(host=host)
        return self._desc

    @property
    def serverless(self) -> bool:
        spec = self._described().spec
        return "serverless" in (spec.to_dict() if hasattr(spec, "to_dict") else dict(spec))

    def _data(self) -> Any:
        self._described()
        return self._index

    # -- the VectorStore protocol ------------------------------------------------------------
    def info(self) -> StoreInfo:
        """Count and dimension of the namespace, the metric and its score (Pinecone's own)."""
        desc = self._described()
        stats = self._call("describe_index_stats",
                           partial(self._data().describe_index_stats, **self._opts()))  # fmt: skip
        spaces = {str(k): int(v.vector_count) for k, v in (stats.namespaces or {}).items()}
        if self.namespace not in spaces:
            names = ", ".join(repr(n) if n else "'' (default)" for n in sorted(spaces)) or "none"
            raise InputError(
                f"the Pinecone index '{self.name}' has no vectors in namespace "
                f"'{self.namespace or DEFAULT_NAMESPACE}'; use ?namespace= with one of: {names}"
            )
        details = {
            "index": self.name,
            "host": urlsplit(self.host).netloc,
            "namespace": self.namespace,
            "kind": "serverless" if self.serverless else "pod",
            "index_vector_count": int(stats.total_vector_count or 0),
            "namespaces": sorted(spaces),
            "requests": self.requests,
            "retries": self.retries,
        }
        metric = str(desc.metric)
        return self.described(spaces[self.namespace], int(desc.dimension), metric, True, details)

    def _search_dimension(self) -> int:
        return int(self._described().dimension)

    def fingerprint(self) -> str:
        """Index, host, namespace, count, dimension and metric, plus a hash of the ids and
        vectors of the first list page (serverless; up to 100 in id order). A change that
        keeps the count and misses that page goes unseen."""
        info = self.info()
        ids = self._list_page(None, FINGERPRINT_SAMPLE)[0] if self.serverless else []
        digest = self._page_hash([self._fetch_batch(ids)] if ids else [])
        return (
            f"pinecone:{self.name}@{info.details['host']}/{self.namespace!r}:{info.count}:"
            f"{info.dimension}:{info.metric}:{digest}"
        )

    def _text(self, meta: dict[str, Any]) -> str | None:
        return payload_text(meta, self.text_key, f"Pinecone row of {self.name}")

    def _fetched(self, ids: list[str]) -> dict[str, Any]:
        index = self._data()
        got = self._call("fetch", partial(index.fetch, ids=ids, namespace=self.namespace,
                                          **self._opts()))  # fmt: skip
        return dict(got.vectors or {})

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        """Stored vectors for ``ids`` (float32 (n, d)), in that order, in one request; texts
        from ``metadata[text_key]``."""
        dim = self._search_dimension()
        rows = self._fetched(list(dict.fromkeys(ids)))
        vecs = [list(rows[i].values) if i in rows else None for i in ids]
        texts = [self._text(dict(rows[i].metadata or {})) if i in rows else None for i in ids]
        vectors, dims = pack_rows(vecs, dim)
        found = np.array([v is not None for v in vecs], dtype=bool)
        return Fetched(list(ids), vectors, found, dims,
                       texts if any(t is not None for t in texts) else None)  # fmt: skip

    def _list_page(self, token: str | None, limit: int) -> tuple[list[str], str | None]:
        index = self._data()
        page = self._call("list", partial(index.list_paginated, namespace=self.namespace,
                                          limit=limit, pagination_token=token,
                                          **self._opts()))  # fmt: skip
        nxt = getattr(getattr(page, "pagination", None), "next", None)
        return [str(v.id) for v in page.vectors or []], (str(nxt) if nxt else None)

    def _scan(self, batch: int) -> Iterator[VectorBatch]:
        """Every vector of the namespace: ids listed 100 at a time, fetched ``batch`` at a
        time (at most ``?batch=``); memory holds one block."""
        if not self.serverless:
            raise InputError(
                f"the Pinecone index '{self.name}' is pod-based, and Pinecone lists ids on "
                "serverless indexes only; check a sample with --chunks FILE (its ids are "
                "fetched) instead of reading the whole index"
            )
        dim = self._search_dimension()
        size = max(1, min(int(batch), self.fetch_batch))
        token: str | None = None
        seen: set[str] = set()
        pending: list[str] = []
        while True:
            ids, token = self._list_page(token, min(LIST_PAGE, size))
            pending.extend(ids)
            while len(pending) >= size or (token is None and pending):
                block, pending = pending[:size], pending[size:]
                rows = self._fetched(block)
                block = [i for i in block if i in rows]  # deleted between list and fetch
                metas = [dict(rows[i].metadata or {}) for i in block]
                texts = [self._text(m) for m in metas]
                vectors, dims = pack_rows([list(rows[i].values) for i in block], dim)
                yield VectorBatch(block, vectors, dims,
                                  texts if any(t is not None for t in texts) else None,
                                  metas if any(metas) else None)  # fmt: skip
            if token is None:
                return
            if token in seen:
                raise IncompleteResultError(
                    f"Pinecone list on {self.where} returned a pagination token again; the "
                    "scan would loop, rerun when the index is not being written to"
                )
            seen.add(token)

    def _search(self, block: np.ndarray, k: int, native: Any) -> list[list[tuple[float, str]]]:
        index, out = self._data(), []
        where = {} if native is None else {"filter": native}
        for v in block:
            res = self._call("query", partial(
                index.query, vector=v.tolist(), top_k=k, namespace=self.namespace,
                include_values=False, include_metadata=False, **where, **self._opts()))  # fmt: skip
            out.append([(float(m.score), str(m.id)) for m in res.matches or []])
        return out

    def close(self) -> None:
        index, self._index = self._index, None
        if index is not None:
            index.close()
