"""Chroma collections: ``chroma:PATH?collection=C`` or ``chroma:http://host:port?collection=C``.

``PATH`` is a ``PersistentClient`` directory (the one holding ``chroma.sqlite3``); an
``http://`` or ``https://`` location is a Chroma server reached through ``HttpClient``.
Optional parameters: ``&tenant=T&database=D`` (Chroma's defaults otherwise). Server
credentials are never part of the spec: Chroma's client reads them from its own
environment variables (``CHROMA_CLIENT_AUTH_PROVIDER``, ``CHROMA_CLIENT_AUTH_CREDENTIALS``).

Read-only by snapshot. Chroma writes to a persistent directory whenever a client opens
it, even if the caller only reads: it inserts a row into the ``acquire_write`` table of
``chroma.sqlite3`` on every client start, and it replays the collection's write-ahead
log into the HNSW segment and rewrites ``data_level0.bin``/``length.bin`` on the first
read of a collection whose index has not been flushed (fewer than ``sync_threshold`` new
rows). So a local store is opened on a private copy in a temporary directory: the
SQLite file is copied with SQLite's online-backup API from a ``mode=ro`` connection (a
consistent snapshot that never writes the source), plus the segment folders of the asked
collection; the copy is deleted on :meth:`ChromaStore.close`. The cost is disk space and
time proportional to the collection's size.

Scores are Chroma's distances (lower is nearer), from the collection's ``space``:
``l2`` -> ``l2^2`` (squared Euclidean), ``ip`` -> ``1-dot``, ``cosine`` -> ``1-cos``.
Normal query is HNSW (approximate); Chroma offers no exact search, so ``has_exact`` is
False. No embedding function is ever instantiated or called: the collection is opened
with ``embedding_function=None`` and queried with vectors only.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import numpy as np

from ..errors import (
    AuthError,
    BackendError,
    BackendUnavailableError,
    IncompleteResultError,
    InputError,
    MissingDependencyError,
    RateLimitError,
    SpecError,
)
from ._node_rows import embedded_texts
from .base import (
    BaseStore,
    Fetched,
    StoreInfo,
    StoreSpec,
    VectorBatch,
    as_float32_matrix,
    empty_result,
    pack_rows,
)
from .chroma_filter import ChromaFilter
from .chroma_snapshot import SQLITE_FILE, _remove_tree, _snapshot
from .metric_table import scores_of
from .params import Str

#: Chroma space -> (score formula over cos/dot/l2, higher_is_better)
SPACE_SCORES = scores_of("chroma")
DEFAULT_SPACE = "l2"
FETCH_BATCH = 500
QUERY_BATCH = 100
SAMPLE_ROWS = 256
_SPEC_HINT = (
    "e.g. chroma:./chroma_db?collection=docs or chroma:http://127.0.0.1:8000?collection=docs"
)


def _import_chromadb() -> Any:
    try:
        import chromadb
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError("the chroma store", "chroma", "chromadb") from exc
    return chromadb


def _settings() -> Any:
    from chromadb.config import Settings

    # Telemetry off: nothing leaves the machine; reset stays forbidden.
    return Settings(anonymized_telemetry=False, allow_reset=False)


def _space_of(collection: Any) -> str:
    """The collection's distance space: schema, then configuration, then legacy metadata."""
    try:
        schema = collection.get_model().serialized_schema or {}
    except Exception:  # older clients have no schema
        schema = {}
    emb = (schema.get("keys") or {}).get("#embedding") or {}
    for holder in (emb, schema.get("defaults") or {}):
        space = ((holder.get("float_list") or {}).get("vector_index") or {}).get("config") or {}
        if isinstance(space.get("space"), str):
            return str(space["space"])
    conf = getattr(collection, "configuration_json", None) or {}
    for key in ("hnsw", "spann"):
        sub = conf.get(key) or {}
        if isinstance(sub.get("space"), str):
            return str(sub["space"])
    meta = collection.metadata or {}
    if isinstance(meta.get("hnsw:space"), str):
        return str(meta["hnsw:space"])
    return DEFAULT_SPACE


def _index_params(collection: Any) -> dict[str, Any]:
    conf = getattr(collection, "configuration_json", None) or {}
    for key in ("hnsw", "spann"):
        if conf.get(key):
            params = {k: v for k, v in dict(conf[key]).items() if k != "space"}
            return {"index": key, "index_params": params}
    return {"index": "hnsw", "index_params": {}}


class ChromaStore(ChromaFilter, BaseStore):
    """A read-only view of one Chroma collection (local snapshot or HTTP server).

    Scores: Chroma's distance for the collection space (``l2^2``, ``1-dot`` or ``1-cos``),
    lower is nearer; ids are Chroma's string ids.
    """

    scheme = "chroma"
    #: Chroma returns rows in its own storage order, not insertion order: no build order
    ordered = False
    order_source = "chroma order (no build order)"
    params = {"collection": Str(), "tenant": Str(), "database": Str()}
    fetch_batch = FETCH_BATCH
    query_batch = QUERY_BATCH

    def __init__(
        self,
        spec: str,
        client: Any,
        collection: Any,
        *,
        mode: str,
        snapshot_dir: str | None,
        seq: int | None,
        tenant: str,
        database: str,
    ) -> None:
        self.spec = spec
        self._client = client
        self._col = collection
        self._mode = mode
        self._snapshot_dir = snapshot_dir
        self._seq = seq
        self._tenant = tenant
        self._database = database
        self._space = _space_of(collection)
        self._dimension = self._find_dimension()
        self._finalizer = (
            weakref.finalize(self, _remove_tree, snapshot_dir) if snapshot_dir else None
        )

    # -- helpers -----------------------------------------------------------------------

    def _sdk(self, what: str, fn: Any, **kwargs: Any) -> Any:
        return self._call(what, partial(fn, **kwargs))

    def _translate(self, exc: BaseException, doing: str = "reading") -> Exception | None:
        name = getattr(getattr(self, "_col", None), "name", "?")
        return _map_error(exc, f"chroma {doing} on collection '{name}'")

    def _find_dimension(self) -> int:
        dim = None
        try:
            dim = self._col.get_model().dimension
        except Exception:
            dim = None
        if isinstance(dim, int) and dim > 0:
            return dim
        got = self._sdk("get", self._col.get, limit=1, include=["embeddings"])
        embs = got.get("embeddings")
        if embs is not None and len(embs):
            return int(len(embs[0]))
        return 0

    def _rows(self, got: dict[str, Any]) -> tuple[list[str], list[Any], list[Any], list[Any]]:
        ids = [str(i) for i in got.get("ids") or []]
        n = len(ids)
        embs = got.get("embeddings")
        docs = list(got.get("documents") or [None] * n)
        metas = list(got.get("metadatas") or [None] * n)
        where = f"chroma collection '{self._col.name}'"  # LlamaIndex rows: the embedded text
        return (
            ids,
            list(embs) if embs is not None else [None] * n,
            embedded_texts(docs, metas, where),
            metas,
        )

    # -- Protocol ----------------------------------------------------------------------

    def info(self) -> StoreInfo:
        """Count, dimension and score scale; ``score`` is Chroma's documented distance."""
        count = int(self._sdk("count", self._col.count))
        score, higher = SPACE_SCORES.get(self._space, ("unknown", None))
        details: dict[str, Any] = {
            "collection": self._col.name,
            "collection_id": str(self._col.id),
            "tenant": self._tenant,
            "database": self._database,
            "mode": self._mode,
            **_index_params(self._col),
        }
        if self._mode == "persistent":
            details["read_only_by"] = "snapshot copy in a temporary directory"
        return StoreInfo(
            backend="chroma",
            count=count,
            dimension=self._dimension,
            metric=self._space,
            score=score,
            higher_is_better=higher,
            approximate=True,
            details=details,
        )

    def fingerprint(self) -> str:
        """sha256 prefix over collection id, count, dimension, space, the ids and vectors of
        the first and last 256 rows, and (local) the collection's last log sequence id."""
        h = hashlib.sha256()
        count = int(self._sdk("count", self._col.count))
        h.update(f"{self._col.id}|{count}|{self._dimension}|{self._space}|{self._seq}".encode())
        offsets = {0, max(0, count - SAMPLE_ROWS)} if count else set()
        for off in sorted(offsets):
            got = self._sdk(
                "get", self._col.get, limit=SAMPLE_ROWS, offset=off, include=["embeddings"]
            )
            ids, embs, _, _ = self._rows(got)
            for vid, emb in zip(ids, embs, strict=True):
                h.update(vid.encode() + b"\0")
                if emb is not None:
                    h.update(np.asarray(emb, dtype=np.float32).tobytes())
        return h.hexdigest()[:16]

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        """Stored vectors for ``ids`` in the order asked: float32 (n, d), found (n,), dims
        (n,); texts are the stored documents (None when no fetched row has one)."""
        asked = ids
        rows: dict[str, tuple[Any, Any]] = {}
        unique = list(dict.fromkeys(asked))
        if unique:
            got = self._sdk(
                "get", self._col.get, ids=unique, include=["embeddings", "documents", "metadatas"]
            )
            rid, embs, docs, _ = self._rows(got)
            for vid, emb, doc in zip(rid, embs, docs, strict=True):
                rows[vid] = (emb, doc)
        found = np.array([i in rows for i in asked], dtype=bool)
        vectors, dims = pack_rows(
            [rows[i][0] if i in rows else None for i in asked], self._dimension
        )
        texts: list[str | None] = [rows[i][1] if i in rows else None for i in asked]
        return Fetched(
            ids=asked,
            vectors=vectors,
            found=found,
            dims=dims,
            texts=texts if any(t is not None for t in texts) else None,
        )

    def _scan(self, batch: int) -> Iterator[VectorBatch]:
        """Every row once, in Chroma's storage order, paged with limit/offset: float32
        (n, d) blocks with documents and metadata."""
        total = int(self._sdk("count", self._col.count))
        seen: set[str] = set()
        offset = 0
        while True:
            got = self._sdk(
                "get",
                self._col.get,
                limit=batch,
                offset=offset,
                include=["embeddings", "documents", "metadatas"],
            )
            ids, embs, docs, metas = self._rows(got)
            if not ids:
                break
            if seen.intersection(ids):
                raise IncompleteResultError(
                    f"chroma collection '{self._col.name}' changed while it was read (a page "
                    "repeated ids); run the check again when no writer is active"
                )
            seen.update(ids)
            offset += len(ids)
            vectors, dims = pack_rows(embs, self._dimension)
            yield VectorBatch(
                ids=ids,
                vectors=vectors,
                dims=dims,
                texts=[d if isinstance(d, str) else None for d in docs],
                metadata=[dict(m) if m else {} for m in metas],
            )
        if len(seen) != total:
            raise IncompleteResultError(
                f"chroma collection '{self._col.name}' returned {len(seen)} of {total} rows "
                "while paging; run the check again when no writer is active"
            )

    def query(self, vectors: np.ndarray, k: int, filter: Any = None) -> tuple[Any, Any]:
        """HNSW search (under ``filter``: ChromaFilter): float32 (q, d) -> D float32 (q, k)
        distances (lower is nearer; NaN where missing), I object (q, k) ids or None."""
        q = as_float32_matrix(vectors, self._dimension or None)
        if k < 1 or q.shape[0] == 0:
            return empty_result(q.shape[0], k)
        return super().query(q, k, filter)

    def _query_batch(self, part: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        D, I = empty_result(part.shape[0], k)
        got = self._sdk(
            "query",
            self._col.query,
            query_embeddings=part,
            n_results=k,
            include=["distances"],
        )
        for row, (rid, dist) in enumerate(
            zip(got.get("ids") or [], got.get("distances") or [], strict=True)
        ):
            m = min(len(rid), k)
            D[row, :m] = np.asarray(dist[:m], dtype=np.float32)
            I[row, :m] = [str(x) for x in rid[:m]]
        return D, I

    def exact_query(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Chroma has no exact search; use an exact reference computed outside the store."""
        raise InputError(
            "chroma offers no exact search; compute the exact neighbours from fetched "
            "vectors instead (has_exact is False)"
        )

    @classmethod
    def from_spec(cls, spec: StoreSpec, options: Any = None) -> ChromaStore:
        return _open(spec, options)

    def close(self) -> None:
        """Release the client and delete the snapshot copy, if any."""
        client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception:  # closing twice or a dead server is not an error here
                pass
        if self._finalizer is not None:
            self._finalizer()


def _map_error(exc: BaseException, what: str) -> Exception:
    """Turn a chromadb/httpx exception into an IndexcheckError subclass."""
    if isinstance(exc, BackendError | InputError):
        return exc
    name = type(exc).__name__
    text = str(exc)
    if name in {"ChromaAuthError", "AuthorizationError"}:
        return AuthError(
            f"{what}: the server refused the credentials; set CHROMA_CLIENT_AUTH_PROVIDER "
            "and CHROMA_CLIENT_AUTH_CREDENTIALS"
        )
    if name == "RateLimitError":
        return RateLimitError(f"{what}: rate limited by the server; try again later")
    if name == "NotFoundError":
        return InputError(f"{what}: not found ({text}); check ?collection= and the tenant")
    module = type(exc).__module__ or ""
    if module.startswith(("httpx", "httpcore")) or isinstance(exc, ConnectionError | TimeoutError):
        return BackendUnavailableError(f"{what}: the server is unreachable ({name}); check it runs")
    if "Could not connect" in text:
        return BackendUnavailableError(f"{what}: {text}")
    return BackendUnavailableError(f"{what} failed: {name}: {text}")


def _remote_client(chromadb: Any, location: str, tenant: str, database: str) -> Any:
    parts = urlsplit(location)
    if parts.username or parts.password:
        raise SpecError(
            "chroma: do not put credentials in the store spec; set "
            "CHROMA_CLIENT_AUTH_PROVIDER and CHROMA_CLIENT_AUTH_CREDENTIALS instead"
        )
    if not parts.hostname or parts.path not in {"", "/"}:
        raise SpecError(f"chroma: expected http(s)://HOST[:PORT] as location; {_SPEC_HINT}")
    ssl = parts.scheme == "https"
    try:
        port = parts.port or (443 if ssl else 8000)
    except ValueError as exc:
        raise SpecError(f"chroma: bad port in '{location}'; {_SPEC_HINT}") from exc
    try:
        return chromadb.HttpClient(
            host=parts.hostname,
            port=port,
            ssl=ssl,
            settings=_settings(),
            tenant=tenant,
            database=database,
        )
    except Exception as exc:
        raise _map_error(exc, f"chroma server at {parts.scheme}://{parts.hostname}:{port}") from exc


def _missing_collection(client: Any, name: str, where: str) -> InputError:
    try:
        names = sorted(str(c.name) for c in client.list_collections(limit=50))
    except Exception:
        names = []
    listing = ", ".join(names) if names else "none"
    return InputError(
        f"chroma: no collection '{name}' in {where}; existing collections: {listing}; "
        "pass one of them as ?collection="
    )


def open_store(spec: StoreSpec, options: Any = None) -> ChromaStore:
    """Open ``chroma:PATH?collection=C`` (snapshot of a PersistentClient directory) or
    ``chroma:http(s)://host:port?collection=C`` (HttpClient), read-only."""
    return ChromaStore.open(spec, options)


def _open(spec: StoreSpec, options: Any = None) -> ChromaStore:
    name = spec.require("collection", _SPEC_HINT)
    chromadb = _import_chromadb()
    from chromadb.config import DEFAULT_DATABASE, DEFAULT_TENANT

    tenant = spec.params.get("tenant") or DEFAULT_TENANT
    database = spec.params.get("database") or DEFAULT_DATABASE
    location = spec.location.strip()
    if not location:
        raise SpecError(f"chroma: the spec has no location; {_SPEC_HINT}")
    extra = {k: v for k, v in spec.params.items() if k in {"tenant", "database"}}
    safe_spec = f"chroma:{location}?" + urlencode({"collection": name, **extra})

    snapshot_dir: str | None = None
    seq: int | None = None
    if location.lower().startswith(("http://", "https://")):
        client = _remote_client(chromadb, location, tenant, database)
        mode, where = "http", location
    else:
        src = Path(location).expanduser()
        if not src.exists():
            raise InputError(
                f"chroma: no such directory '{src}'; pass the folder a Chroma PersistentClient "
                "wrote (it holds chroma.sqlite3)"
            )
        if not (src / SQLITE_FILE).is_file():
            raise InputError(
                f"chroma: '{src}' is not a Chroma database (no {SQLITE_FILE} in it); pass the "
                "folder a Chroma PersistentClient wrote"
            )
        snapshot_dir, seq = _snapshot(src, name)
        try:
            client = chromadb.PersistentClient(
                path=snapshot_dir, settings=_settings(), tenant=tenant, database=database
            )
        except Exception as exc:
            _remove_tree(snapshot_dir)
            raise InputError(
                f"chroma: cannot open '{src}' with chromadb {chromadb.__version__} "
                f"({type(exc).__name__}: {exc}); check the tenant/database and the Chroma version "
                "that wrote it"
            ) from exc
        mode, where = "persistent", str(src)

    try:
        collection = client.get_collection(name, embedding_function=None)
    except Exception as exc:
        missing = type(exc).__name__ == "NotFoundError" or "does not exist" in str(exc)
        err: Exception = (
            _missing_collection(client, name, where)
            if missing
            else _map_error(exc, f"chroma get_collection '{name}'")
        )
        try:
            client.close()
        finally:
            if snapshot_dir:
                _remove_tree(snapshot_dir)
        raise err from exc
    return ChromaStore(
        safe_spec,
        client,
        collection,
        mode=mode,
        snapshot_dir=snapshot_dir,
        seq=seq,
        tenant=tenant,
        database=database,
    )
