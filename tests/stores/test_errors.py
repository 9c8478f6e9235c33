"""Every store's error translation, run through the exception classes its SDK raises.

Like httpx's tests/test_exceptions.py: for each engine, instantiate the SDK's own
exceptions for auth, not found, timeout, connection, rate limit and server errors, raise
them inside the store's ``_call`` and check which IndexcheckError (and exit code) comes
out. Stores are built with ``__new__`` and the few attributes ``_translate`` reads, so no
server is needed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from indexcheck.errors import (
    EXIT_COULD_NOT_FINISH,
    EXIT_INPUT,
    AuthError,
    BackendUnavailableError,
    DimensionMismatchError,
    IndexcheckError,
    InputError,
    RateLimitError,
)
from indexcheck.remote.retry import RetryPolicy
from indexcheck.stores.base import BaseStore

REQUEST = httpx.Request("GET", "http://127.0.0.1:1/x")


def _raise(exc: BaseException, before: Callable[[], None] | None = None) -> Callable[[], Any]:
    def fn() -> Any:
        if before is not None:
            before()
        raise exc

    return fn


def _outcome(store: BaseStore, exc: BaseException, before: Callable[[], None] | None = None) -> Any:
    with pytest.raises(IndexcheckError) as info:
        store._call("read", _raise(exc, before))
    assert info.value.__cause__ is None or not isinstance(info.value.__cause__, IndexcheckError)
    return info.value


# -- Upstash (upstash-vector SDK over httpx; statuses seen by the response hook) ----------


def _upstash() -> Any:
    from indexcheck.safety.redact import redactor
    from indexcheck.stores.upstash.store import UpstashStore

    store = UpstashStore.__new__(UpstashStore)
    store.host, store.timeout, store._httpx = "x.upstash.io", 5.0, httpx
    store._redact = redactor("tok")
    store.retry = RetryPolicy(max_retries=2, base_delay=0.0)
    store._sleep_fn = lambda s: None
    store.requests = store.retries = 0
    store._status = store._retry_after = None
    return store


def _with_status(store: Any, status: int) -> Callable[[], None]:
    def set_status() -> None:
        store._status = status

    return set_status


@pytest.mark.parametrize(
    ("status", "exc", "expected"),
    [
        (401, "UpstashError", AuthError),
        (403, "UpstashError", AuthError),
        (None, "Unauthorized", AuthError),
        (404, "UpstashError", BackendUnavailableError),
        (429, "UpstashError", RateLimitError),
        (500, "UpstashError", BackendUnavailableError),
        (503, "UpstashError", BackendUnavailableError),
        (None, httpx.ReadTimeout("timed out", request=REQUEST), BackendUnavailableError),
        (None, httpx.ConnectError("refused", request=REQUEST), BackendUnavailableError),
        (None, httpx.RemoteProtocolError("eof", request=REQUEST), BackendUnavailableError),
    ],
)
def test_upstash_translation(status: int | None, exc: Any, expected: type) -> None:
    from upstash_vector.errors import UpstashError

    store = _upstash()
    if exc == "UpstashError":
        exc = UpstashError("some message")
    elif exc == "Unauthorized":
        exc = UpstashError("Unauthorized: invalid token tok")
    err = _outcome(store, exc, _with_status(store, status) if status else None)
    assert type(err) is expected
    assert "tok" not in str(err).replace("token", "")
    if expected in (RateLimitError, BackendUnavailableError) and status != 404:
        assert store.retries == 2  # transient: retried per policy, then given up


# -- pgvector (psycopg 3) -------------------------------------------------------------------


def _pgvector(connected: bool = True) -> Any:
    import psycopg

    from indexcheck.stores.pgvector.store import PgvectorStore

    store = PgvectorStore.__new__(PgvectorStore)
    store._psycopg, store._password, store._user = psycopg, "hush", "app"
    store._qualified, store._vec_col, store._dimension = "public.t", "embedding", 3
    store._where, store._dbname = "127.0.0.1:5432", "db"
    store._conn = object() if connected else None  # type: ignore[assignment]
    return store


def _pg_cases() -> list[Any]:
    import psycopg
    from psycopg import errors as e

    return [
        (False, psycopg.OperationalError("password authentication failed for user app"), AuthError),
        (False, psycopg.OperationalError('database "db" does not exist'), InputError),
        (False, psycopg.OperationalError("connection refused"), BackendUnavailableError),
        (True, e.InsufficientPrivilege("permission denied for table t"), AuthError),
        (True, e.UndefinedTable('relation "t" does not exist'), InputError),
        (True, e.UndefinedColumn('column "embedding" does not exist'), InputError),
        (
            True,
            e.QueryCanceled("canceling statement due to statement timeout"),
            BackendUnavailableError,
        ),
        (True, e.TooManyConnections("too many clients already"), BackendUnavailableError),
        (True, e.AdminShutdown("terminating connection hush"), BackendUnavailableError),
        (True, e.DataException("different vector dimensions 3 and 4"), DimensionMismatchError),
        (True, e.InternalError_("server error"), BackendUnavailableError),
    ]


@pytest.mark.parametrize("case", range(11))
def test_pgvector_translation(case: int) -> None:
    connected, exc, expected = _pg_cases()[case]
    err = _outcome(_pgvector(connected), exc)
    assert type(err) is expected
    assert "hush" not in str(err)


# -- Chroma (chromadb client; httpx underneath for HttpClient) ------------------------------


def _chroma() -> Any:
    from indexcheck.stores.chroma.store import ChromaStore

    store = ChromaStore.__new__(ChromaStore)

    class Col:
        name = "docs"

    store._col = Col()
    return store


def _chroma_cases() -> list[Any]:
    from chromadb import errors as e

    return [
        (e.ChromaAuthError("bad credentials"), AuthError),
        (e.AuthorizationError("forbidden"), AuthError),
        (e.NotFoundError("collection docs does not exist"), InputError),
        (e.RateLimitError("slow down"), RateLimitError),
        (e.InternalError("boom"), BackendUnavailableError),
        (httpx.ConnectError("refused", request=REQUEST), BackendUnavailableError),
        (httpx.ReadTimeout("timed out", request=REQUEST), BackendUnavailableError),
        (ConnectionError("Could not connect to a Chroma server"), BackendUnavailableError),
    ]


@pytest.mark.parametrize("case", range(8))
def test_chroma_translation(case: int) -> None:
    exc, expected = _chroma_cases()[case]
    assert type(_outcome(_chroma(), exc)) is expected


# -- Qdrant (qdrant-client) ------------------------------------------------------------------


def _qdrant_cases() -> list[Any]:
    from qdrant_client.common.client_exceptions import ResourceExhaustedResponse
    from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

    def status(code: int) -> UnexpectedResponse:
        return UnexpectedResponse(code, "reason", b'{"status":"x"}', httpx.Headers())

    return [
        (status(401), AuthError),
        (status(403), AuthError),
        (status(404), InputError),
        (status(429), RateLimitError),
        (ResourceExhaustedResponse("rate limited", 3), RateLimitError),
        (status(500), BackendUnavailableError),
        (status(503), BackendUnavailableError),
        (ResponseHandlingException(httpx.ConnectError("refused")), BackendUnavailableError),
        (ResponseHandlingException(httpx.ReadTimeout("slow")), BackendUnavailableError),
        (TimeoutError("timed out"), BackendUnavailableError),
        (ConnectionRefusedError("refused"), BackendUnavailableError),
    ]


@pytest.mark.parametrize("case", range(11))
def test_qdrant_translation(case: int) -> None:
    from indexcheck.stores.qdrant.store import QdrantStore

    store = QdrantStore.__new__(QdrantStore)
    store._location, store._collection = "http://127.0.0.1:6333", "docs"
    exc, expected = _qdrant_cases()[case]
    assert type(_outcome(store, exc)) is expected


# -- Milvus (pymilvus over grpc) --------------------------------------------------------------


def _rpc(code_name: str) -> BaseException:
    import grpc

    class Rpc(grpc.RpcError, grpc.Call):  # the shape grpc raises: an RpcError with code()
        def code(self) -> grpc.StatusCode:
            return getattr(grpc.StatusCode, code_name)

        def details(self) -> str:
            return code_name

        def initial_metadata(self) -> Any: ...
        def trailing_metadata(self) -> Any: ...
        def is_active(self) -> bool:
            return False

        def time_remaining(self) -> Any: ...
        def cancel(self) -> bool:
            return False

        def add_callback(self, callback: Any) -> bool:
            return False

    return Rpc()


def _milvus_cases() -> list[Any]:
    from pymilvus import MilvusException

    def wrapped(code_name: str) -> BaseException:
        exc = MilvusException(code=1, message="rpc failed")
        exc.__cause__ = _rpc(code_name)
        return exc

    return [
        (_rpc("UNAUTHENTICATED"), AuthError),
        (
            MilvusException(code=1100, message="auth check failure, please check username"),
            AuthError,
        ),
        (wrapped("PERMISSION_DENIED"), AuthError),
        (
            MilvusException(code=100, message="collection not found[collection=docs]"),
            BackendUnavailableError,
        ),
        (_rpc("RESOURCE_EXHAUSTED"), RateLimitError),
        (MilvusException(code=8, message="rate limit exceeded"), RateLimitError),
        (_rpc("DEADLINE_EXCEEDED"), BackendUnavailableError),
        (_rpc("UNAVAILABLE"), BackendUnavailableError),
        (MilvusException(code=2, message="Fail connecting to server"), BackendUnavailableError),
        (MilvusException(code=65535, message="internal error"), BackendUnavailableError),
    ]


@pytest.mark.parametrize("case", range(10))
def test_milvus_translation(case: int) -> None:
    from indexcheck.stores.milvus.store import MilvusStore

    store = MilvusStore.__new__(MilvusStore)
    store._where = "Milvus at http://127.0.0.1:19530"
    exc, expected = _milvus_cases()[case]
    assert type(_outcome(store, exc)) is expected


# -- LanceDB (local files: lancedb and pyarrow errors all mean unreadable data) ---------------


def _lancedb_cases() -> list[Any]:
    import pyarrow as pa

    return [
        FileNotFoundError("data/0.lance missing"),
        OSError("Permission denied"),
        pa.ArrowIOError("cannot read"),
        pa.ArrowInvalid("corrupt page"),
        RuntimeError("lance error: Dataset at path was not found"),
        ValueError("Table 'docs' was not found"),
        TimeoutError("object store timed out"),
    ]


@pytest.mark.parametrize("case", range(7))
def test_lancedb_translation(case: int) -> None:
    from indexcheck.stores.lancedb.store import LanceDBStore

    store = LanceDBStore.__new__(LanceDBStore)
    store._name = "docs"
    assert type(_outcome(store, _lancedb_cases()[case])) is BackendUnavailableError


# -- the shared contract -----------------------------------------------------------------------


def test_exit_codes_of_every_class_used() -> None:
    for cls in (InputError, DimensionMismatchError):
        assert cls.exit_code == EXIT_INPUT
    for cls in (AuthError, BackendUnavailableError, RateLimitError):
        assert cls.exit_code == EXIT_COULD_NOT_FINISH


def test_foreign_exceptions_pass_through_untranslated() -> None:
    """A bug in indexcheck (not an SDK error) must not be disguised as a backend failure."""
    from indexcheck.stores.qdrant.store import QdrantStore

    store = QdrantStore.__new__(QdrantStore)
    store._location, store._collection = "http://127.0.0.1:6333", "docs"
    with pytest.raises(KeyError):
        store._call("read", _raise(KeyError("bug")))


def test_remote_stores_translate_and_local_ones_need_not() -> None:
    from indexcheck.stores import BACKENDS, store_class

    remote = {"upstash", "pgvector", "chroma", "qdrant", "milvus", "lancedb", "sqlitevec"}
    remote |= {
        "pinecone",
        "redis",
        "elasticsearch",
        "opensearch",
        "weaviate",
        "turbopuffer",
        "mongodb",
    }
    for scheme in BACKENDS:
        cls = store_class(scheme)
        # an SDK error table (BaseStore.errors), applied by the base: no store translates itself
        assert cls._translate is BaseStore._translate, scheme
        translates = cls.errors is not None
        assert translates == (scheme in remote), scheme
