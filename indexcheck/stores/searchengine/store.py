"""The read-only store both search engines share: scan, fetch, knn, filters, info.

A subclass (:mod:`indexcheck.stores.elasticsearch`, :mod:`indexcheck.stores.opensearch`)
builds its official client and says only what differs: how a scan pages (a point in time
with ``search_after`` on ``_shard_doc``, or a scroll), the knn request with its breadth
knob, and which score a similarity reports on its version. Every request is a read
(``_mapping``, ``_search``, ``_count``, ``_settings``, opening and closing a point in time
or a scroll); no method writes.

Scans hold one page at a time (``PAGE``) and never use ``from`` past a page, nor sort on
``_id``. Search engines keep no build order (segments merge), so ``ordered`` is False:
positions come from ``--chunks``. Rows LlamaIndex wrote (the node under
``metadata._node_content``) give the text LlamaIndex embedded: its metadata header and the
text (:mod:`..node_rows`), so a correct LlamaIndex index passes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any, ClassVar, Self

import numpy as np

from ...errors import DimensionMismatchError, InputError
from ...filters.evaluate import value_at
from ...remote.retry import RetryPolicy
from ..arrays import fetched_in_order
from ..base import BaseStore, Fetched, StoreInfo, StoreSpec, VectorBatch, pack_rows
from ..hits import Hits, gather
from ..node_rows import embedded_texts
from ..params import Str
from .layout import Layout
from .opening import Target, caller, sniffed, target, version_of

PAGE = 1000  # documents per scan page
FETCH_BATCH = 500  # ids per ``ids`` query
QUERY_BATCH = 32
#: the options both engines take: the index, and the fields when the mapping holds several
FIELD_PARAMS = {"index": Str(), "vector": Str(), "text": Str(), "metadata": Str()}


def dotted(source: dict[str, Any], path: str) -> Any:
    """``source[a][b]`` for ``a.b`` (or the flat key ``a.b`` when a writer used one)."""
    return source[path] if path in source else value_at(source, path.split("."))


class SearchEngineStore(BaseStore):
    """Read-only view of one Elasticsearch or OpenSearch index."""

    ordered = False
    order_source = "index order (segments merge: no build order)"
    fetch_batch = FETCH_BATCH
    query_batch = QUERY_BATCH
    dimension_error = DimensionMismatchError
    dimension_message = (
        "query vectors have dimension {got} but {store._where} holds {want}; embed with the "
        "model that built the index"
    )
    #: the search-breadth option (``num_candidates``, ``ef_search``)
    breadth: ClassVar[str] = ""

    def __init__(self, client: Any, layout: Layout, spec: str, where: str, version: str) -> None:
        self._client, self._lay, self.spec, self.where = client, layout, spec, where
        self.version = version
        self._where = f"index '{layout.index}' at {where}"
        self.retry = RetryPolicy(max_retries=3, base_delay=0.5, max_delay=8.0)
        self.requests = 0
        self._vectors_hidden = False

    @classmethod
    def from_spec(cls, spec: StoreSpec, options: Any = None) -> Self:
        """Open ``scheme:URL?index=NAME``: the options and the URL checked, the client built
        (:meth:`_connect`), the server's version and the index's layout read; the client is
        closed when any of it fails."""
        values = cls.check_params(spec.params)
        t = target(spec, (cls.breadth,))
        client = cls._connect(t)
        assert cls.errors is not None  # every engine sets its rows
        call = caller(cls.errors, t)
        try:
            version = version_of(call("read the server version", client.info))
            layout = sniffed(cls.scheme, call, client, t, spec.params)
            store = cls(client, layout, t.spec, t.url, version)
            store.values = values
            store._check_version()
        except BaseException:
            client.close()
            raise
        return store

    # -- what differs per engine ------------------------------------------------------------
    @classmethod
    def _connect(cls, t: Target) -> Any:
        """The engine's official client for ``t.url``, credentials from the environment."""
        raise TypeError(f"{cls.__name__} must implement _connect")

    def _check_version(self) -> None:
        """Refuse (exit 2) options this server's version does not take; none by default."""

    def _pages(self, body: dict[str, Any]) -> Iterator[list[dict[str, Any]]]:
        """Every hit of ``body`` (query, _source), a page at a time, in index order."""
        raise TypeError(f"{type(self).__name__} must implement _pages")

    def _knn(self, vector: list[float], k: int, native: Any) -> dict[str, Any]:
        """The search body of the engine's own knn for one query, under ``native``."""
        raise TypeError(f"{type(self).__name__} must implement _knn")

    def _metric(self) -> str:
        """The metric-table name of the index's score on this server."""
        return self._lay.similarity

    def _details(self) -> dict[str, Any]:
        return {}

    def _source(self, fields: list[str]) -> Any:
        """The ``_source`` filter that returns ``fields``."""
        return fields

    # -- helpers ----------------------------------------------------------------------------
    def _error_fields(self, doing: str) -> dict[str, Any]:
        return {"where": self.where, "index": self._lay.index}

    def _before_call(self) -> None:
        self.requests += 1

    def _search(self, doing: str, body: dict[str, Any], index: bool = True, **kw: Any) -> Any:
        name = self._lay.index if index else None
        return self._call(doing, lambda: self._client.search(index=name, body=body, **kw))

    def _wanted(self) -> list[str]:
        lay = self._lay
        return [f for f in (lay.vector, lay.text, lay.metadata) if f]

    def _rows(self, hits: list[dict[str, Any]]) -> VectorBatch:
        lay = self._lay
        sources = [h.get("_source") or {} for h in hits]
        raw = [dotted(s, lay.vector) for s in sources]
        if hits and all(r is None for r in raw):
            self._hidden()
        vectors, dims = pack_rows([r if isinstance(r, list) else None for r in raw],
                                  lay.dimension)  # fmt: skip
        texts = None
        if lay.text:
            texts = [t if isinstance(t := dotted(s, lay.text), str) else None for s in sources]
        metas = []
        for s in sources:
            m = dotted(s, lay.metadata) if lay.metadata else None
            metas.append(dict(m) if isinstance(m, dict) else {})
        if texts is not None:
            texts = embedded_texts(texts, metas, self._where)
        return VectorBatch([str(h["_id"]) for h in hits], vectors, dims, texts, metas)

    def _hidden(self) -> None:
        """No vector came back in ``_source``: say exactly why and what to do."""
        lay = self._lay
        if lay.vector in lay.source_excludes or any(
            lay.vector.startswith(x.rstrip("*")) for x in lay.source_excludes if x.endswith("*")
        ):
            raise InputError(
                f"{self._where} leaves '{lay.vector}' out of _source (mappings._source."
                "excludes), so its stored vectors cannot be read back; indexcheck needs them: "
                "reindex without the exclusion, or check a copy that keeps them"
            )
        self._vectors_hidden = True

    # -- the Protocol -----------------------------------------------------------------------
    def info(self) -> StoreInfo:
        """Count, dimension, metric (the mapping's similarity, per version and engine) and
        the score it reports; details say the fields, version and search breadth."""
        lay = self._lay
        got = self._call("count", lambda: self._client.count(index=lay.index))
        details: dict[str, Any] = {
            "index": lay.index,
            "version": self.version,
            "vector_field": lay.vector,
            "text_field": lay.text,
            "metadata_field": lay.metadata,
            "similarity": lay.similarity,
            "id_source": "_id",
            "order": self.order_source,
            "read_only_by": "search and mapping reads only (no write request is made)",
            **self._details(),
        }
        return self.described(int(got["count"]), lay.dimension, self._metric(), True, details)

    def fingerprint(self) -> str:
        """sha256 prefix over version, index, count, mapping of the vector field, and the
        ids and vectors of the first scan page (changes beyond it show through the count)."""
        lay = self._lay
        h = hashlib.sha256()
        count = self._call("count", lambda: self._client.count(index=lay.index))["count"]
        h.update(f"{self.version}|{lay.index}|{count}|{lay.vector}|{lay.similarity}".encode())
        for page in self._pages({"_source": self._source([lay.vector]), "size": 100}):
            b = self._rows(page)
            for i, vid in enumerate(b.ids):
                h.update(vid.encode() + b"\0" + b.vectors[i].tobytes())
            break
        return h.hexdigest()[:16]

    def _scan(self, batch: int) -> Iterator[VectorBatch]:
        """Every document once, ``batch`` at a time, in index order (not build order)."""
        body = {"_source": self._source(self._wanted()), "size": min(batch, 10_000)}
        for page in self._pages(body):
            yield self._rows(page)

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        """Stored vectors for ``ids`` in order (an ``ids`` query): float32 (n, d), found."""
        unique = list(dict.fromkeys(ids))
        body = {
            "query": {"ids": {"values": unique}},
            "size": len(unique),
            "_source": self._source(self._wanted()),
        }
        got = self._search("fetch", body)
        b = self._rows(list(got["hits"]["hits"]))
        return fetched_in_order(b, ids, self._lay.dimension, bool(self._lay.text))

    def _search_dimension(self) -> int:
        return self._lay.dimension

    def _hits(self, block: np.ndarray, k: int, native: Any) -> Hits:
        out = []
        for row in block:
            body = self._knn([float(x) for x in row], k, native)
            got = self._search("search", body)
            out.append([(float(h["_score"]), str(h["_id"])) for h in got["hits"]["hits"]])
        return out

    def _query_batch(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The engine's own knn at this depth (one request per query and depth, never a
        slice of a deeper answer): D float32 (q, k) in its ``_score``, I ids."""
        return gather(vectors, k, QUERY_BATCH, lambda b: self._hits(b, k, None))

    def _native_filter(self, node: Any) -> Any:
        from ...filters import translate

        lay = self._lay
        prefix = f"{lay.metadata}." if lay.metadata else ""
        return translate(node, self.scheme, types=lay.types, prefix=prefix,
                         ignore_above=lay.ignore_above)  # fmt: skip

    def _filtered_query_batch(
        self, vectors: np.ndarray, k: int, native: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        return gather(vectors, k, QUERY_BATCH, lambda b: self._hits(b, k, native))

    def close(self) -> None:
        client, self._client = getattr(self, "_client", None), None
        if client is not None:
            client.close()
