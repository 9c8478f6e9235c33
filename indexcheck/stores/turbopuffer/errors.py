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

from ...errors import TransientError
from ...remote.http import server_message
from ...remote.translate import Caught, Rule
from ..hosted import Vendor

KEY_ENV = "TURBOPUFFER_API_KEY"
TURBOPUFFER = Vendor(
    name="turbopuffer",
    key_env=KEY_ENV,
    key_owner="organisation that holds the namespace",
    noun="the namespace",
    endpoint="?base_url=",
    not_found_fix="check the namespace name (turbopuffer:NAMESPACE) and ?region= (the region "
    "the namespace lives in)",
    refused=(400, 409, 422),
    transport=("APIConnectionError", "APITimeoutError", "httpx.*", "urllib3.*", "aiohttp.*"),
    network_fix=", ?region= and ?base_url=",
)


def _message(body: Any) -> str:
    """turbopuffer's ``{"status": "error", "error": "..."}``, or what :func:`server_message`
    reads from another body."""
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return server_message(json.dumps({"message": body["error"]}))
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    return server_message(body if isinstance(body, str) else json.dumps(body))


def _fields(c: Caught) -> dict[str, Any]:
    exc = c.exc
    body = getattr(exc, "body", None)
    message = _message(body) if body else c.line
    headers = getattr(getattr(exc, "response", None), "headers", None)
    return TURBOPUFFER.fields(c, getattr(exc, "status_code", None), headers, message)


TURBOPUFFER_ERRORS = TURBOPUFFER.errors(
    _fields,
    Rule("APIResponseValidationError", TransientError, "a malformed reply from {store.where}"),
)
