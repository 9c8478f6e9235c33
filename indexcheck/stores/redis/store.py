"""Redis (the Query Engine, RediSearch): ``redis:URL?index=NAME[&vector=F&text=F&ef_runtime=N]``.

``URL`` is ``redis://host:port[/db]`` (``rediss://`` for TLS); the password is read from
``REDIS_PASSWORD`` (``REDIS_USERNAME`` for an ACL user) or the URL's userinfo, and never
printed (:mod:`.opening`). The index's schema comes from ``FT.INFO`` (:mod:`.schema`):
langchain-redis, LlamaIndex and RedisVL indexes, hash or JSON, need no option. Ids are keys
without the index's prefix.

Scores: the KNN distance, lower is nearer: ``COSINE`` -> ``1-cos``, ``IP`` -> ``1-dot``,
``L2`` -> the squared Euclidean distance. The own search is ``FT.SEARCH`` with ``*=>[KNN k
@vector $vec EF_RUNTIME $ef AS d]``, ``DIALECT 2``; on an HNSW index ``EF_RUNTIME`` (10 by
default) is its breadth, ``&ef_runtime=`` sets it and compare-ann ``--sweep ef_runtime=``
varies it. A FLAT index is searched exactly. Filters go before ``=>`` in the query syntax
(:mod:`indexcheck.filters.redis`); Redis picks the hybrid policy (batches or an ad-hoc
brute force). Scans ``SCAN`` each prefix (``TYPE`` hash or ReJSON-RL) page by page and read
a page with pipelined ``HGETALL`` / one ``JSON.MGET``; they also find documents the index
rejected (a vector of another length), which FT.SEARCH cannot show. A scan keeps one
8-byte hash per key seen (SCAN may return a key twice) and one page. Read-only: no command
the client sends writes (the tests hold this from the server's command statistics).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

import numpy as np
import xxhash

from ...errors import DimensionMismatchError, IncompleteResultError, SpecError
from ...remote.retry import RetryPolicy
from ..base import BaseStore, Fetched, StoreInfo, StoreSpec, VectorBatch
from ..hits import Hits, gather
from ..metric_table import scores_of
from ..params import Choice, Int, Str
from .documents import Decoder, id_of, keys_of, parse_json_docs
from .opening import REDIS_ERRORS, connect
from .schema import DTYPES, Schema, parse_info

FETCH_BATCH = 256
QUERY_BATCH = 64
SCORE = "__indexcheck_distance"
JSON_TYPE = "ReJSON-RL"
DEFAULT_EF_RUNTIME = 10
SAMPLE_DOCS = 1024


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _glob(prefix: str) -> str:
    """``prefix*`` as a SCAN MATCH pattern (glob characters in the prefix escaped)."""
    return "".join("\\" + ch if ch in "*?[]\\" else ch for ch in prefix) + "*"


class RedisStore(BaseStore):
    """Read-only view of one Redis Query Engine vector index."""

    scheme = "redis"
    label = "Redis"
    errors = REDIS_ERRORS
    ordered = False
    order_source = "SCAN order (Redis hash-table order, no build order)"
    params = {
        "index": Str(),
        "vector": Str(),
        "text": Str(),
        "metric": Choice(*scores_of("redis")),
        "ef_runtime": Int(min=1),
    }
    param_hints = {
        "password": "put no password in the spec's options: set REDIS_PASSWORD",
        "db": "give the database number in the URL's path: redis://host:6379/2",
    }
    sweepable = ("ef_runtime",)
    fetch_batch = FETCH_BATCH
    query_batch = QUERY_BATCH
    retry = RetryPolicy(max_retries=3, base_delay=0.2, max_delay=5.0, max_wait=60.0)
    dimension_message = (
        "query vectors have dimension {got} but the Redis index holds {want}; embed with the "
        "model that built the index"
    )
    dimension_error = DimensionMismatchError

    def __init__(self, spec: StoreSpec, client: Any, where: str, schema: Schema) -> None:
        super().__init__(spec)
        self._client, self._schema, self.where = client, schema, where
        self._decoder = Decoder(schema)
        self._ef: int | None = self.values.get("ef_runtime")
        extra = "".join(
            f"&{k}={v}" for k, v in spec.params.items() if k != "index" and v not in (None, "")
        )
        self.spec = f"redis:{where}?index={schema.index}{extra}"

    @classmethod
    def from_spec(cls, spec: StoreSpec, options: Any = None) -> RedisStore:
        client, where = connect(spec)
        try:
            index = spec.params.get("index") or _only_index(client, where)
            with REDIS_ERRORS.mapping("read the index", where=where, index=index):
                info = client.ft(index).info()
            schema = parse_info(index, info, dict(spec.params))
            if spec.params.get("ef_runtime") and schema.algorithm != "HNSW":
                raise SpecError(
                    f"redis: index '{index}' is {schema.algorithm or 'not HNSW'}; EF_RUNTIME "
                    "applies to HNSW indexes only: drop &ef_runtime="
                )
        except BaseException:
            client.close()
            raise
        return cls(spec, client, where, schema)

    # -- helpers -------------------------------------------------------------------------

    def _error_fields(self, doing: str) -> dict[str, Any]:
        return {"where": self.where, "index": self._schema.index}

    def _ft_info(self) -> dict[str, Any]:
        info: dict[str, Any] = self._call(
            "read the index", lambda: self._client.ft(self._schema.index).info()
        )
        return info

    def _docs(self, keys: list[str], doing: str) -> list[Any]:
        """The documents under ``keys`` in order (None where absent or of another type)."""
        if not keys:
            return []
        client = self._client
        if self._schema.key_type == "JSON":
            replies = self._call(doing, lambda: client.execute_command("JSON.MGET", *keys, "$"))
            return parse_json_docs(replies)

        def run() -> list[Any]:
            pipe = client.pipeline(transaction=False)
            for key in keys:
                pipe.hgetall(key)
            return list(pipe.execute(raise_on_error=False))

        return [r if isinstance(r, dict) and r else None for r in self._call(doing, run)]

    def _batch(self, keys: list[str]) -> VectorBatch:
        docs = self._docs(keys, "read documents")
        dec = self._decoder
        vectors, dims = dec.rows(docs)
        return VectorBatch(
            ids=[id_of(k, self._schema) for k in keys],
            vectors=vectors,
            dims=dims,
            texts=[dec.text(d) for d in docs] if self._schema.text else None,
            metadata=[dec.metadata(d) for d in docs],
        )

    # -- Protocol ------------------------------------------------------------------------

    def info(self) -> StoreInfo:
        """Count (``num_docs``), dimension, metric and its distance; details say the
        layout, where the documents are and how the index searches."""
        s = self._schema
        live = self._ft_info()
        count = int(float(_text(live.get("num_docs", 0))))
        details: dict[str, Any] = {
            "layout": s.layout,
            "index": s.index,
            "key_type": s.key_type,
            "prefixes": list(s.prefixes),
            "vector_field": s.vector.name,
            "data_type": s.data_type,
            "algorithm": s.algorithm,
            "text_field": s.text,
            "filter_fields": {
                a.name: a.type for a in s.attributes.values() if a.type in ("TAG", "NUMERIC")
            },
            "indexing_failures": int(float(_text(live.get("hash_indexing_failures", 0)))),
            "read_only_by": "read commands only (FT.INFO, FT.SEARCH, SCAN, HGETALL, JSON.MGET)",
        }
        if s.algorithm == "HNSW":
            details["hnsw"] = s.hnsw
            details["ef_runtime"] = self._ef or DEFAULT_EF_RUNTIME
            details["search"] = (
                f"FT.SEARCH KNN on HNSW, EF_RUNTIME {self._ef or DEFAULT_EF_RUNTIME}"
                + ("" if self._ef else " (the index's default)")
            )
        else:
            details["search"] = f"FT.SEARCH KNN on {s.algorithm or 'the index'}"
        return self.described(count, s.dimension, s.metric, s.algorithm != "FLAT", details)

    def fingerprint(self) -> str:
        """Digest of the schema, ``num_docs``, the indexing failures and the ids and
        vectors of the first 1024 documents a scan reads (FT.INFO's ``max_doc_id`` moves
        without writes, so it is not used); a change beyond those shows through the count."""
        live = self._ft_info()
        h = xxhash.xxh3_128()
        for key in ("num_docs", "hash_indexing_failures"):
            h.update(f"{key}={_text(live.get(key, ''))};".encode())
        h.update(repr(sorted((a.name, a.path, a.type) for a in self._schema.attributes.values()))
                 .encode())  # fmt: skip
        for b in self._scan(SAMPLE_DOCS):
            for i, vid in enumerate(b.ids):
                h.update(vid.encode() + b"\0" + b.vectors[i].tobytes())
            break
        return f"redis:{self._schema.index}:{h.hexdigest()}"

    def _scan(self, batch: int) -> Iterator[VectorBatch]:
        """Every document under the index's prefixes once: SCAN pages, read a page at a time."""
        seen: set[int] = set()
        kind = JSON_TYPE if self._schema.key_type == "JSON" else "hash"
        client = self._client
        pending: list[str] = []
        for prefix in self._schema.prefixes:
            cursor: Any = 0
            while True:
                cursor, page = self._call(
                    "scan keys", partial(client.scan, cursor, match=_glob(prefix), count=batch,
                                         _type=kind),
                )  # fmt: skip
                for raw in page:
                    key = _text(raw)
                    h = xxhash.xxh64_intdigest(raw if isinstance(raw, bytes) else key.encode())
                    if h in seen:
                        continue
                    seen.add(h)
                    pending.append(key)
                    if len(pending) >= batch:
                        yield self._batch(pending)
                        pending = []
                if int(cursor) == 0:
                    break
        if pending:
            yield self._batch(pending)

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        """Stored vectors for ``ids`` in the order asked (each under its prefix's key)."""
        s = self._schema
        wanted = list(dict.fromkeys(ids))
        candidates = {vid: keys_of(vid, s) for vid in wanted}
        keys = [k for ks in candidates.values() for k in ks]
        docs = dict(zip(keys, self._docs(keys, "fetch documents"), strict=True))
        found_doc = {
            vid: next((docs[k] for k in ks if docs.get(k) is not None), None)
            for vid, ks in candidates.items()
        }
        rows = [found_doc[v] for v in ids]
        vectors, dims = self._decoder.rows(rows)
        found = np.array([d is not None and dim > 0 for d, dim in zip(rows, dims, strict=True)])
        texts = [self._decoder.text(d) for d in rows] if s.text else None
        return Fetched(list(ids), vectors, found.astype(bool), dims, texts)

    def _search_dimension(self) -> int:
        return self._schema.dimension

    def _query_batch(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """FT.SEARCH KNN per query, pipelined: (D float32 (q, k) distance, I ids)."""
        return self._knn(vectors, k, "*")

    def _native_filter(self, node: Any) -> Any:
        """The query text before ``=>`` (:mod:`indexcheck.filters.redis`)."""
        from ...filters import translate

        fields = {a.name: (a.type, a.flags) for a in self._schema.attributes.values()}
        return translate(node, "redis", fields=fields)

    def _filtered_query_batch(
        self, vectors: np.ndarray, k: int, native: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        return self._knn(vectors, k, f"({native})")

    def _knn(self, xq: np.ndarray, k: int, where: str) -> tuple[np.ndarray, np.ndarray]:
        s = self._schema
        ef = " EF_RUNTIME $ef" if self._ef else ""
        query = f"{where}=>[KNN {k} @{s.vector.name} $vec{ef} AS {SCORE}]"
        dtype = DTYPES[s.data_type]
        client = self._client

        def search(block: np.ndarray) -> Hits:
            def run() -> list[Any]:
                pipe = client.pipeline(transaction=False)
                for row in block:
                    params: list[Any] = ["vec", np.ascontiguousarray(row, dtype=dtype).tobytes()]
                    if self._ef:
                        params += ["ef", self._ef]
                    pipe.execute_command(
                        "FT.SEARCH", s.index, query, "PARAMS", len(params), *params,
                        "SORTBY", SCORE, "ASC", "RETURN", 1, SCORE, "LIMIT", 0, k,
                        "DIALECT", 2,
                    )  # fmt: skip
                return list(pipe.execute())

            return [self._hits(reply) for reply in self._call("search", run)]

        return gather(xq, k, QUERY_BATCH, search)

    def _hits(self, reply: Any) -> list[tuple[float, str]]:
        """One FT.SEARCH reply -> (distance, id), nearest first. RESP3 (redis-py 8's
        default) gives a map with ``results`` and ``warning``; RESP2 ``[total, key,
        [field, value...], ...]``. A warning (the query timeout was reached, so Redis
        returned what it had) ends the search: a partial list would read as a miss."""
        pairs: list[tuple[Any, dict[str, Any]]] = []
        if isinstance(reply, dict):
            got = {_text(k): v for k, v in reply.items()}
            warnings = [_text(w) for w in got.get("warning") or []]
            if warnings:
                raise IncompleteResultError(
                    f"Redis at {self.where} answered a search with a warning "
                    f"({'; '.join(warnings)}), so its list may be partial; raise the "
                    "server's query TIMEOUT (FT.CONFIG SET TIMEOUT) or search fewer vectors"
                )
            for row in got.get("results") or []:
                row = {_text(k): v for k, v in row.items()}
                extra = row.get("extra_attributes") or {}
                pairs.append((row.get("id"), {_text(k): v for k, v in extra.items()}))
        else:
            for i in range(1, len(reply) - 1, 2):
                fields = reply[i + 1]
                pairs.append(
                    (
                        reply[i],
                        {_text(fields[j]): fields[j + 1] for j in range(0, len(fields) - 1, 2)},
                    )
                )
        out = []
        for key, fields in pairs:
            value = fields.get(SCORE)
            if value is not None and key is not None:
                out.append((float(_text(value)), id_of(_text(key), self._schema)))
        return out

    def close(self) -> None:
        """Close the connection pool; closing twice is fine."""
        client, self._client = getattr(self, "_client", None), None
        if client is not None:
            client.close()


def _only_index(client: Any, where: str) -> str:
    """The one index ``FT._LIST`` names, or SpecError listing them."""
    with REDIS_ERRORS.mapping("list the indexes", where=where, index="?"):
        names = sorted(_text(n) for n in client.execute_command("FT._LIST"))
    if len(names) == 1:
        return names[0]
    listing = ", ".join(names) if names else "none"
    raise SpecError(
        f"redis: name the index with ?index= (indexes at {where}: {listing}); e.g. "
        f"redis:{where}?index={names[0] if names else 'docs'}"
    )
