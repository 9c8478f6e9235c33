"""OpenSearch 2.x/3.x k-NN indexes: ``opensearch:URL?index=NAME[&vector=&text=&metadata=
&ef_search=N]``, read through the official ``opensearch-py`` client.

Credentials from the environment only: ``OPENSEARCH_USERNAME`` and ``OPENSEARCH_PASSWORD``.
The layout (knn_vector field, text, metadata, space_type, engine) is sniffed from the
mapping and the index settings (:mod:`..searchengine.layout`).

Scores: OpenSearch's ``_score`` per space, ``l2`` ``1/(1+l2^2)``, ``innerproduct``
``1+dot`` (dot >= 0) or ``1/(1-dot)``, ``cosinesimil`` ``(1+cos)/2`` on lucene and, from
2.19, on every engine; nmslib and faiss reported ``1/(2-cos)`` before 2.19 (k-NN PR 2357),
which silently moved thresholds. A mapping that names no engine gets the server's default
for its version (nmslib before 2.18; faiss from 2.18, except cosinesimil on 2.18; faiss
from 2.19; k-NN PRs 2221 and 2498): the details say it was not named. probe-scale
measures which score a server reports. The breadth is ``ef_search`` (``method_parameters``,
OpenSearch 2.16+; before that the index setting ``knn.algo_param.ef_search`` applies and
``?ef_search=`` is refused). Filters run
inside the knn query on lucene and faiss (efficient filtering) and after it on nmslib,
which then returns fewer than k. Scans page with a scroll sorted on ``_doc``.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

from ...errors import InputError
from ..base import import_sdk
from ..metric_table import OPENSEARCH_LEGACY_COSINE
from ..params import Int
from ..searchengine.errors import engine_errors
from ..searchengine.opening import Target, major_minor, secret
from ..searchengine.store import FIELD_PARAMS, SearchEngineStore

USER_ENV, PASSWORD_ENV = "OPENSEARCH_USERNAME", "OPENSEARCH_PASSWORD"
SCROLL = "2m"
OS_ERRORS = engine_errors("OpenSearch", "opensearch", f"{USER_ENV} and {PASSWORD_ENV}")


class OpenSearchStore(SearchEngineStore):
    """Read-only view of one OpenSearch index holding a knn_vector field."""

    scheme = "opensearch"
    label = "OpenSearch"
    errors = OS_ERRORS
    params = {**FIELD_PARAMS, "ef_search": Int(min=1, max=100_000)}
    param_hints = {"password": f"passwords go in {PASSWORD_ENV} only"}
    sweepable = ("ef_search",)
    breadth = "ef_search"

    @classmethod
    def _connect(cls, t: Target) -> Any:
        sdk = import_sdk("opensearchpy", "opensearch", "opensearch-py")
        user, password = secret(USER_ENV), secret(PASSWORD_ENV)
        auth: dict[str, Any] = {"http_auth": (user, password)} if user and password else {}
        return sdk.OpenSearch(hosts=[t.url], max_retries=0, retry_on_timeout=False, timeout=60,
                              **auth)  # fmt: skip

    def _check_version(self) -> None:
        if self.values.get("ef_search") is not None and major_minor(self.version) < (2, 16):
            raise InputError(
                f"OpenSearch {self.version} at {self.where} takes no ef_search per query "
                "(method_parameters came in 2.16); drop ?ef_search= (the index setting "
                "knn.algo_param.ef_search applies) or upgrade"
            )

    def _engine(self) -> str:
        """The mapping's engine, else the server's default for its version and space."""
        return self._lay.engine or default_engine(self.version, self._lay.similarity)

    def _metric(self) -> str:
        """cosinesimil's score depends on the version and engine (see the module)."""
        lay = self._lay
        if lay.similarity != "cosinesimil" or major_minor(self.version) >= (2, 19):
            return lay.similarity
        if self._engine() == "lucene":
            return "cosinesimil"
        return OPENSEARCH_LEGACY_COSINE

    def _pages(self, body: dict[str, Any]) -> Iterator[list[dict[str, Any]]]:
        """A scroll sorted on ``_doc``; cleared at the end."""
        first = dict(body, sort=["_doc"])
        got = self._search("scan", first, scroll=SCROLL)
        sid = got.get("_scroll_id")
        try:
            while True:
                hits = list(got["hits"]["hits"])
                if not hits:
                    return
                yield hits
                got = self._call("scan", partial(self._next_page, sid))
                sid = got.get("_scroll_id") or sid
        finally:
            client = self._client
            if client is not None and sid:
                self._call("clear the scroll",
                           lambda: client.clear_scroll(body={"scroll_id": [sid]}))  # fmt: skip

    def _next_page(self, sid: str | None) -> Any:
        return self._client.scroll(body={"scroll_id": sid, "scroll": SCROLL})

    def _knn(self, vector: list[float], k: int, native: Any) -> dict[str, Any]:
        lay = self._lay
        inner: dict[str, Any] = {"vector": vector, "k": k}
        ef = self.values.get("ef_search")
        if ef is not None:
            inner["method_parameters"] = {"ef_search": int(ef)}
        post = native is not None and self._engine() not in ("lucene", "faiss")
        if native is not None and not post:
            inner["filter"] = native  # efficient filtering inside the graph search
        query: dict[str, Any] = {"knn": {lay.vector: inner}}
        if post:  # nmslib: the filter runs on the k the graph returned
            query = {"bool": {"must": [query], "filter": [native]}}
        return {"size": k, "query": query, "_source": False}

    def _breadth(self) -> str:
        """Which ef_search the knn queries run with, and where it comes from."""
        ef = self.values.get("ef_search")
        if ef is not None:
            return f"ef_search = {ef} (method_parameters)"
        if self._engine() == "lucene":
            return "k (lucene searches k candidates); set ?ef_search= (2.16+) to measure another"
        setting = self._lay.index_options.get("ef_search_setting")
        where = (
            f"= {setting} (the index setting knn.algo_param.ef_search)"
            if setting
            else "from the server's default (the index sets no knn.algo_param.ef_search)"
        )
        return f"ef_search {where}; set ?ef_search= (2.16+) to measure another"

    def _details(self) -> dict[str, Any]:
        lay = self._lay
        return {
            "engine": lay.engine
            or f"{self._engine()} (not named in the mapping: OpenSearch {self.version}'s default)",
            "method": lay.index_options.get("method"),
            "search_breadth": self._breadth(),
            "filtering": (
                "inside the knn query (efficient filtering)"
                if self._engine() in ("lucene", "faiss")
                else "after the knn query (post-filter: fewer than k can come back)"
            ),
            "scan": "scroll sorted on _doc",
        }


def default_engine(version: str, space: str) -> str:
    """The engine OpenSearch ``version`` gives a knn_vector whose mapping names none."""
    v = major_minor(version)
    if v < (2, 18) or (v < (2, 19) and space == "cosinesimil"):
        return "nmslib"
    return "faiss"
