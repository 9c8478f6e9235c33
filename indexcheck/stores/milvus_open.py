"""Milvus: opening a server or Milvus Lite data, and pymilvus/grpc exceptions mapped to
indexcheck errors (split from milvus.py by job)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from ..errors import (
    AuthError,
    BackendUnavailableError,
    DataFileError,
    InputError,
    MissingDependencyError,
    RateLimitError,
    SpecError,
)
from ..noise import library_noise
from ..redact import redact_url
from ..secrets import env_secret
from .base import StoreSpec, call_translated
from .milvus import _LITE_USERS, TIMEOUT_S, MilvusStore

T = TypeVar("T")


def translate_error(exc: BaseException, where: str, doing: str) -> Exception | None:
    """The IndexcheckError for what pymilvus/grpc raised while ``doing``; None if not theirs."""
    import grpc
    from pymilvus import MilvusException

    if not isinstance(exc, MilvusException | grpc.RpcError):
        return None
    cause: Any = exc if isinstance(exc, grpc.RpcError) else exc.__cause__
    status = cause.code() if isinstance(cause, grpc.RpcError) else None
    code = getattr(exc, "code", None)
    message = str(getattr(exc, "message", "") or exc)
    low = message.lower()
    if status in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED) or (
        "auth check failure" in low or "permission deny" in low
    ):
        return AuthError(
            f"{where} refused the credentials while trying to {doing}; set MILVUS_TOKEN "
            "to a token (or user:password) that can read the collection"
        )
    if status == grpc.StatusCode.RESOURCE_EXHAUSTED or "rate limit" in low:
        return RateLimitError(
            f"{where} kept refusing requests (rate limit) while trying to {doing}; wait and retry"
        )
    if code == 2 or status in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return BackendUnavailableError(
            f"cannot reach {where} to {doing}; check the URI and that the server is up"
        )
    return BackendUnavailableError(
        f"{where} failed to {doing} ({message[:200]}); check the server's log"
    )


def _call(where: str, fn: Callable[[], T], doing: str) -> T:
    """One pymilvus call made before the store exists, translated like the store's own."""
    return call_translated(doing, fn, lambda exc, what: translate_error(exc, where, what))


def open_milvus(spec: StoreSpec, options: Any) -> MilvusStore:
    """Connect (server) or start Milvus Lite, check the collection, build the store."""
    try:
        from pymilvus import MilvusClient
    except ImportError:
        raise MissingDependencyError("the milvus store", "milvus", "pymilvus") from None

    collection = spec.require("collection", "name the Milvus collection, e.g. ?collection=docs")
    vector = spec.params.get("vector") or None
    id_field = spec.params.get("id") or None
    text_field = spec.params.get("text") or None
    db_name = spec.params.get("db") or ""
    location = spec.location.strip()
    if not location:
        raise SpecError("milvus spec needs a Milvus Lite .db path or a server URI before '?'")
    lite = not location.lower().startswith(("http://", "https://", "tcp://"))
    extras = "".join(
        f"&{k}={v}"
        for k, v in (("vector", vector), ("id", id_field), ("text", text_field), ("db", db_name))
        if v
    )
    release: Callable[[], None] | None = None
    if lite:
        path = _lite_path(Path(location).expanduser())
        shown = str(path)
        where = f"Milvus Lite at {shown}"
        client, release = _open_lite(path, db_name, where, MilvusClient)
    else:
        parts = urlsplit(location)
        if parts.username or parts.password:
            raise SpecError(
                "put no credentials in the milvus URI; set MILVUS_TOKEN in the environment"
            )
        shown = redact_url(location)
        where = f"Milvus at {shown}"
        token = env_secret("MILVUS_TOKEN", header=False)  # base64-coded by pymilvus
        with library_noise():  # gRPC's channel set-up may print to fd 2
            client = _call(
                where,
                lambda: MilvusClient(uri=location, token=token, db_name=db_name, timeout=TIMEOUT_S),
                "connect",
            )
    safe_spec = f"milvus:{shown}?collection={collection}{extras}"
    try:
        if not _call(where, lambda: client.has_collection(collection), "find the collection"):
            names = _call(where, client.list_collections, "list collections")
            listed = ", ".join(sorted(names)) if names else "none"
            raise InputError(
                f"no Milvus collection '{collection}' in {where} (collections there: {listed}); "
                "fix ?collection= in the spec"
            )
        store = MilvusStore(
            client,
            spec=safe_spec,
            where=where,
            lite=lite,
            collection=collection,
            vector=vector,
            id_field=id_field,
            text_field=text_field,
        )
    except Exception:
        client.close()
        if release is not None:
            release()
        raise
    store._release_lite = release
    return store


def _lite_path(path: Path) -> Path:
    """Check a Milvus Lite data path before pymilvus would create one there."""
    path = path.absolute()
    if path.suffix != ".db":
        raise SpecError(
            f"'{path}' is neither an http(s):// URI nor a Milvus Lite path ending in .db"
        )
    if not path.exists():
        raise DataFileError(
            f"no Milvus Lite data at '{path}'; pass the path given to MilvusClient('....db')"
        )
    if not path.is_dir() or not (path / "collections").is_dir():
        raise DataFileError(
            f"'{path}' is not a milvus-lite 3 data folder (no collections/ inside); files "
            "written by milvus-lite 2.x need that version to read them"
        )
    return path


def _open_lite(
    path: Path, db_name: str, where: str, client_cls: Any
) -> tuple[Any, Callable[[], None] | None]:
    """Connect to Lite data through pymilvus's in-process server; returns (client, release)."""
    try:
        from milvus_lite.server_manager import server_manager_instance as manager
    except ImportError:
        raise MissingDependencyError("Milvus Lite", "milvus", "milvus-lite") from None
    from pymilvus.exceptions import ConnectionConfigException

    key = str(path)
    running = getattr(manager, "_servers", {})
    started_here = key in _LITE_USERS or key not in running
    try:
        with library_noise():  # Lite logs its own traceback when the folder is locked
            client = client_cls(uri=key, db_name=db_name, timeout=TIMEOUT_S)
    except ConnectionConfigException:
        raise BackendUnavailableError(
            f"cannot open {where}; milvus-lite lets one process hold a .db at a time, so "
            "stop the process using it or point at a copy"
        ) from None
    if not started_here:
        return client, None  # someone else in this process runs that server: leave it be
    _LITE_USERS[key] = _LITE_USERS.get(key, 0) + 1

    def release() -> None:
        _LITE_USERS[key] -= 1
        if _LITE_USERS[key] <= 0:
            del _LITE_USERS[key]
            with library_noise():
                manager.release_server(key)  # flushes nothing new; frees the folder lock

    return client, release
