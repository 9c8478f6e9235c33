"""Pinecone's rows of the one error table: the SDK's ``PineconeApiException`` family by HTTP
status, and urllib3's transport failures.

The store builds the SDK with urllib3 retries off, so every failed request surfaces here
once and the base retries it: 429 (with Retry-After) and 5xx are transient, 401/403 are the
key, 404 the index name or host, 400 a request Pinecone refused (its message shown). Texts
are redacted of the key first (``store._redact``).
"""

from __future__ import annotations

import json
from typing import Any

from ...errors import AuthError, InputError, TransientError
from ...remote.http import (
    MALFORMED_ROW,
    OTHER_STATUS_ROW,
    RATE_LIMITED_ROW,
    SERVER_ERROR_ROW,
    malformed_request,
    retry_after,
    server_message,
    status_in,
)
from ...remote.translate import Caught, ErrorMap, Rule

KEY_ENV = "PINECONE_API_KEY"


def _message(body: str) -> str:
    """Pinecone's ``{"error": {"code", "message"}}``, or what :func:`server_message` reads."""
    try:
        payload = json.loads(body)
    except ValueError:
        payload = None
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return server_message(json.dumps({"message": error["message"]}))
    return server_message(body)


def _fields(c: Caught) -> dict[str, Any]:
    store, exc = c.store, c.exc
    status = getattr(exc, "status", None)
    body = getattr(exc, "body", None)
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")
    redact = store._redact if store is not None else str
    return {
        "status": status if isinstance(status, int) else None,
        "retry_after": retry_after(getattr(exc, "headers", None) or {}),
        "message": redact(_message(text)) if text else redact(c.text.splitlines()[0]),
        "malformed": malformed_request(exc),
        "who": f"Pinecone {c.doing} on {store.where if store is not None else 'the index'}",
        "malformed_fix": f"check {KEY_ENV} and ?host= for stray characters",
    }


PINECONE_ERRORS = ErrorMap(
    MALFORMED_ROW,
    Rule(
        Exception,
        AuthError,
        "Pinecone refused the API key for {store.where} (HTTP {status}); set "
        f"{KEY_ENV} to a key of the project that holds the index",
        when=status_in(401, 403),
    ),
    Rule(
        Exception,
        InputError,
        "{who}: not found (HTTP 404: {message}); check the index name (pinecone:INDEX, as "
        "listed in the Pinecone console) and the project of the key",
        when=status_in(404),
    ),
    RATE_LIMITED_ROW,
    SERVER_ERROR_ROW,
    Rule(
        Exception,
        InputError,
        "{who}: Pinecone refused the request (HTTP {status}: {message})",
        when=status_in(400, 422),
    ),
    Rule(
        ("urllib3.*", "PineconeProtocolError"),
        TransientError,
        "could not reach {store.where} ({name})",
    ),
    OTHER_STATUS_ROW,
    fields=_fields,
    rate_limited="Pinecone still rate-limited {doing} on {store.where} after {attempts} "
    "retries; wait and rerun, or raise ?retries=",
    unavailable="Pinecone {doing} on {store.where} failed after {attempts} retries ({err}); "
    "check the network and ?host=, or rerun later",
    service="pinecone",
)
