"""Qdrant: opening a server collection or a local folder, and qdrant-client's exceptions
mapped to indexcheck errors (split from qdrant.py by job)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from ..errors import (
    AuthError,
    BackendUnavailableError,
    DataFileError,
    IndexcheckError,
    InputError,
    MissingDependencyError,
    RateLimitError,
    SpecError,
)
from ..redact import redact_url
from ..secrets import env_secret
from .base import StoreSpec, call_translated
from .qdrant import TIMEOUT_S, QdrantStore

T = TypeVar("T")


def translate_error(
    exc: BaseException, location: str, collection: str, doing: str
) -> Exception | None:
    """The IndexcheckError for what qdrant-client raised while ``doing``; None if not its."""
    from qdrant_client.common.client_exceptions import ResourceExhaustedResponse
    from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

    if isinstance(exc, UnexpectedResponse):
        status = exc.status_code or 0
        if status in (401, 403):
            return AuthError(
                f"Qdrant at {location} refused the credentials (HTTP {status}) "
                f"while trying to {doing}; set QDRANT_API_KEY to a key that can read "
                f"'{collection}'"
            )
        if status == 429:
            return RateLimitError(
                f"Qdrant at {location} kept answering 429 while trying to {doing}; "
                "wait and retry, or raise the rate limit"
            )
        if status >= 500 or status == 0:
            return BackendUnavailableError(
                f"Qdrant at {location} failed (HTTP {status}) while trying to "
                f"{doing}; check the server's health and retry"
            )
        return InputError(
            f"Qdrant at {location} rejected the request to {doing} (HTTP {status}: "
            f"{exc.content[:160].decode('utf-8', 'replace')}); check the spec"
        )
    if isinstance(exc, ResourceExhaustedResponse):
        return RateLimitError(
            f"Qdrant at {location} kept answering 429 while trying to {doing}; "
            "wait and retry, or raise the rate limit"
        )
    if isinstance(exc, ResponseHandlingException):
        return BackendUnavailableError(
            f"cannot reach Qdrant at {location} to {doing} "
            f"({type(exc.source).__name__}); check the URL and that the server is up"
        )
    if isinstance(exc, OSError | TimeoutError):
        return BackendUnavailableError(
            f"cannot reach Qdrant at {location} to {doing} ({type(exc).__name__}); "
            "check the URL and that the server is up"
        )
    return None


def _call(location: str, collection: str, fn: Callable[[], T], doing: str) -> T:
    """One client call made before the store exists, translated like the store's own."""
    return call_translated(doing, fn, partial(_translate_at, location, collection))


def _translate_at(
    location: str, collection: str, exc: BaseException, doing: str
) -> Exception | None:
    return translate_error(exc, location, collection, doing)


def open_qdrant(spec: StoreSpec, options: Any) -> QdrantStore:
    """Connect (server) or open the folder (local mode), check the collection, build the store."""
    try:
        from qdrant_client import QdrantClient, models
    except ImportError:
        raise MissingDependencyError("the qdrant store", "qdrant", "qdrant-client") from None

    collection = spec.require("collection", "name the Qdrant collection, e.g. ?collection=docs")
    vector = spec.params.get("vector") or None
    id_field = spec.params.get("id_field") or None
    text_field = spec.params.get("text_field") or "text"
    location = spec.location.strip()
    if not location:
        raise SpecError("qdrant spec needs a server URL or a local folder before '?'")
    local = not location.lower().startswith(("http://", "https://"))
    extras = "".join(
        f"&{k}={v}"
        for k, v in (("vector", vector), ("id_field", id_field), ("text_field", text_field))
        if v and not (k == "text_field" and v == "text")
    )
    shown = location if local else redact_url(location)
    safe_spec = f"qdrant:{shown}?collection={collection}{extras}"

    if local:
        client = _open_local(Path(location).expanduser(), options, QdrantClient)
        names = [c.name for c in client.get_collections().collections]
        aliases = [a.alias_name for a in client.get_aliases().aliases]
        try:
            if collection not in names and collection not in aliases:
                raise InputError(_missing(collection, shown, names))
            return QdrantStore(
                client,
                models,
                spec=safe_spec,
                collection=collection,
                location=str(Path(location).expanduser()),
                local=True,
                vector=vector,
                id_field=id_field,
                text_field=text_field,
            )
        except IndexcheckError:
            client.close()
            raise

    api_key = env_secret("QDRANT_API_KEY") or None
    parts = urlsplit(location)
    if parts.username or parts.password:
        raise SpecError(
            "put no credentials in the qdrant URL; set QDRANT_API_KEY in the environment instead"
        )
    client = QdrantClient(
        url=location, api_key=api_key, timeout=TIMEOUT_S, check_compatibility=False
    )
    try:
        call = partial(_call, shown, collection)
        exists = call(lambda: client.collection_exists(collection), "find the collection")
        if not exists:
            aliases = call(client.get_aliases, "list aliases").aliases
            if collection not in {a.alias_name for a in aliases}:
                listing = call(client.get_collections, "list collections")
                names = [c.name for c in listing.collections]
                raise InputError(_missing(collection, shown, names))
        return QdrantStore(
            client,
            models,
            spec=safe_spec,
            collection=collection,
            location=shown,
            local=False,
            vector=vector,
            id_field=id_field,
            text_field=text_field,
        )
    except IndexcheckError:
        client.close()
        raise


def _missing(collection: str, where: str, names: list[str]) -> str:
    listed = ", ".join(sorted(names)) if names else "none"
    return (
        f"no Qdrant collection '{collection}' at {where} (collections there: {listed}); "
        "fix ?collection= in the spec"
    )


def _open_local(path: Path, options: Any, client_cls: Any) -> Any:
    """Open a qdrant-client local folder without letting it create or change anything."""
    # QdrantClient(path=...) creates meta.json (and the folder) when absent: refuse first.
    if not (path / "meta.json").is_file():
        raise DataFileError(
            f"no Qdrant local storage at '{path}' (no meta.json); pass the folder that was "
            "given to QdrantClient(path=...), or an http(s):// URL for a server"
        )
    if not getattr(options, "trust_pickle", False):
        raise InputError(
            f"Qdrant local storage at '{path}' keeps each point as a Python pickle, which can "
            "run code when loaded; pass --trust-pickle if you trust who wrote the folder"
        )
    try:
        return client_cls(path=str(path))
    except RuntimeError as err:
        if "already accessed" in str(err):
            raise BackendUnavailableError(
                f"Qdrant local storage at '{path}' is locked by another process; stop that "
                "process (local mode allows one at a time) or point at a copy of the folder"
            ) from None
        raise
    except (ValueError, OSError) as err:
        raise DataFileError(
            f"cannot read Qdrant local storage at '{path}' ({err}); check the folder"
        ) from None
