"""turbopuffer's rows of the one error table: the SDK's ``APIStatusError`` family by HTTP
status, and its transport failures.

The store builds the SDK client with ``max_retries=0``, so every failed request surfaces
here once and the base retries it: 429 (with Retry-After) and 5xx are transient, 401/403
are the key, 404 the namespace (or region), 400/422 a request turbopuffer refused (its
``{"status": "error", "error": ...}`` message shown). Texts are redacted of the key first.
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

KEY_ENV = "TURBOPUFFER_API_KEY"


def _message(body: Any) -> str:
    """turbopuffer's ``{"status": "error", "error": "..."}``, or what :func:`server_message`
    reads from another body."""
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return server_message(json.dumps({"message": body["error"]}))
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    return server_message(body if isinstance(body, str) else json.dumps(body))


def _fields(c: Caught) -> dict[str, Any]:
    store, exc = c.store, c.exc
    status = getattr(exc, "status_code", None)
    response = getattr(exc, "response", None)
    redact = store._redact if store is not None else str
    body = getattr(exc, "body", None)
    return {
        "status": status if isinstance(status, int) else None,
        "retry_after": retry_after(getattr(response, "headers", None) or {}),
        "message": redact(_message(body))
        if body
        else redact(c.text.splitlines()[0] if c.text else c.name),  # fmt: skip
        "malformed": malformed_request(exc),
        "who": f"turbopuffer {c.doing} on {store.where if store is not None else 'the namespace'}",
        "malformed_fix": f"check {KEY_ENV} and ?base_url= for stray characters",
    }


TURBOPUFFER_ERRORS = ErrorMap(
    MALFORMED_ROW,
    Rule(
        Exception,
        AuthError,
        "turbopuffer refused the API key for {store.where} (HTTP {status}); set "
        f"{KEY_ENV} to a key of the organisation that holds the namespace",
        when=status_in(401, 403),
    ),
    Rule(
        Exception,
        InputError,
        "{who}: not found (HTTP 404: {message}); check the namespace name "
        "(turbopuffer:NAMESPACE) and ?region= (the region the namespace lives in)",
        when=status_in(404),
    ),
    RATE_LIMITED_ROW,
    SERVER_ERROR_ROW,
    Rule(
        Exception,
        InputError,
        "{who}: turbopuffer refused the request (HTTP {status}: {message})",
        when=status_in(400, 409, 422),
    ),
    Rule(
        ("APIConnectionError", "APITimeoutError", "httpx.*", "urllib3.*", "aiohttp.*"),
        TransientError,
        "could not reach {store.where} ({name})",
    ),
    Rule("APIResponseValidationError", TransientError, "a malformed reply from {store.where}"),
    OTHER_STATUS_ROW,
    fields=_fields,
    rate_limited="turbopuffer still rate-limited {doing} on {store.where} after {attempts} "
    "retries; wait and rerun, or raise ?retries=",
    unavailable="turbopuffer {doing} on {store.where} failed after {attempts} retries ({err}); "
    "check the network, ?region= and ?base_url=, or rerun later",
    service="turbopuffer",
)
