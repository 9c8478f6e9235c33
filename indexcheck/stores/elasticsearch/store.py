"""Elasticsearch 8/9 indexes: ``elasticsearch:URL?index=NAME[&vector=&text=&metadata=
&num_candidates=N]``, read through the official ``elasticsearch`` 8.x client.

Credentials from the environment only: ``ELASTIC_API_KEY``, or ``ELASTICSEARCH_USERNAME``
and ``ELASTICSEARCH_PASSWORD``. The layout (vector, text, metadata fields, similarity) is
sniffed from the mapping (:mod:`..searchengine.layout`).

Scores: Elasticsearch's knn ``_score`` per similarity, ``cosine`` ``(1+cos)/2``,
``dot_product`` ``(1+dot)/2``, ``l2_norm`` ``1/(1+l2^2)``, ``max_inner_product``
``1+dot`` (dot >= 0) or ``1/(1-dot)``; an ``int8_hnsw``/``int4``/``bbq`` index (the default
for float vectors from 8.14) scores its quantised vectors, so near these, not exactly:
probe-scale measures which. The breadth is ``num_candidates`` (sent as max(N, k); without
it, Elasticsearch's default ``1.5*k`` is sent explicitly). Scans open a point in time and
page with ``search_after`` on ``_shard_doc``; from 9.x, where vectors leave ``_source`` by
default, scans ask ``exclude_vectors: false``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..base import import_sdk
from ..params import Int
from ..searchengine.errors import engine_errors
from ..searchengine.opening import Target, major_minor, secret
from ..searchengine.store import FIELD_PARAMS, SearchEngineStore

API_KEY_ENV = "ELASTIC_API_KEY"
USER_ENV, PASSWORD_ENV = "ELASTICSEARCH_USERNAME", "ELASTICSEARCH_PASSWORD"
KEEP_ALIVE = "2m"
MAX_CANDIDATES = 10_000
QUANTISED = ("int8_hnsw", "int4_hnsw", "bbq_hnsw", "int8_flat", "int4_flat", "bbq_flat",
             "bbq_disk")  # fmt: skip
ES_ERRORS = engine_errors(
    "Elasticsearch", "elasticsearch", f"{API_KEY_ENV} (or {USER_ENV} and {PASSWORD_ENV})"
)


class ElasticsearchStore(SearchEngineStore):
    """Read-only view of one Elasticsearch index holding a dense_vector field."""

    scheme = "elasticsearch"
    label = "Elasticsearch"
    errors = ES_ERRORS
    params = {**FIELD_PARAMS, "num_candidates": Int(min=1, max=MAX_CANDIDATES)}
    param_hints = {
        "api_key": f"keys go in {API_KEY_ENV} only",
        "password": f"passwords go in {PASSWORD_ENV} only",
    }
    sweepable = ("num_candidates",)
    breadth = "num_candidates"

    @classmethod
    def _connect(cls, t: Target) -> Any:
        sdk = import_sdk("elasticsearch", "elasticsearch", "elasticsearch")
        auth: dict[str, Any] = {}
        key = secret(API_KEY_ENV)
        user, password = secret(USER_ENV), secret(PASSWORD_ENV)
        if key:
            auth["api_key"] = key
        elif user and password:
            auth["basic_auth"] = (user, password)
        return sdk.Elasticsearch(t.url, max_retries=0, retry_on_timeout=False,
                                 request_timeout=60, **auth)  # fmt: skip

    def _new_source(self) -> bool:
        return major_minor(self.version)[0] >= 9

    def _source(self, fields: list[str]) -> Any:
        if self._new_source():  # 9.x may leave vectors out of _source unless asked
            return {"includes": fields, "exclude_vectors": False}
        return fields

    def _pages(self, body: dict[str, Any]) -> Iterator[list[dict[str, Any]]]:
        """A point in time, paged by ``search_after`` on ``_shard_doc``; closed at the end."""
        index = self._lay.index
        opened = self._call(
            "open a point in time",
            lambda: self._client.open_point_in_time(index=index, keep_alive=KEEP_ALIVE),
        )
        pit = str(opened["id"])
        after: list[Any] | None = None
        try:
            while True:
                page = dict(body, pit={"id": pit, "keep_alive": KEEP_ALIVE},
                            sort=[{"_shard_doc": "asc"}], track_total_hits=False)  # fmt: skip
                if after is not None:
                    page["search_after"] = after
                got = self._search("scan", page, index=False)
                pit = str(got.get("pit_id") or pit)
                hits = list(got["hits"]["hits"])
                if not hits:
                    return
                yield hits
                after = hits[-1]["sort"]
        finally:
            client = self._client
            if client is not None:
                self._call("close the point in time", lambda: client.close_point_in_time(id=pit))

    def candidates(self, k: int) -> int:
        """``num_candidates`` sent with a knn of depth ``k``."""
        given = self.values.get("num_candidates")
        if given is None:
            return min(MAX_CANDIDATES, max(k, round(1.5 * k)))
        return min(MAX_CANDIDATES, max(int(given), k))

    def _knn(self, vector: list[float], k: int, native: Any) -> dict[str, Any]:
        knn: dict[str, Any] = {
            "field": self._lay.vector,
            "query_vector": vector,
            "k": k,
            "num_candidates": self.candidates(k),
        }
        if native is not None:
            knn["filter"] = native  # applied during the graph search (a pre-filter)
        return {"knn": knn, "size": k, "_source": False}

    def _details(self) -> dict[str, Any]:
        lay = self._lay
        opts = lay.index_options
        kind = opts.get("type")
        given = self.values.get("num_candidates")
        out: dict[str, Any] = {
            "index_options": opts or None,
            "search_breadth": (
                f"num_candidates = max({given}, k)"
                if given is not None
                else "num_candidates = 1.5*k (Elasticsearch's default when a request names none; "
                "LangChain sends 50): set ?num_candidates= to measure the app's"
            ),  # fmt: skip
            "scan": "point in time + search_after on _shard_doc",
            "element_type": lay.element_type,
        }
        if kind in QUANTISED:
            out["scores"] = (
                f"{kind}: knn scores come from quantised vectors, so near the similarity's "
                "formula, not exactly; run probe-scale to measure"
            )
        elif not kind and major_minor(self.version) >= (8, 14):
            out["scores"] = (
                "index_options not in the mapping: from 8.14 float vectors default to "
                "int8_hnsw (bbq_hnsw from 9.1 for 384+ dims), whose knn scores come from "
                "quantised vectors; run probe-scale to measure"
            )
        return out
