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

from ...remote.http import server_message
from ...remote.translate import Caught
from ..hosted import Vendor

KEY_ENV = "PINECONE_API_KEY"
PINECONE = Vendor(
    name="Pinecone",
    key_env=KEY_ENV,
    key_owner="project that holds the index",
    noun="the index",
    endpoint="?host=",
    not_found_fix="check the index name (pinecone:INDEX, as listed in the Pinecone console) "
    "and the project of the key",
    refused=(400, 422),
    transport=("urllib3.*", "PineconeProtocolError"),
    network_fix=" and ?host=",
)


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
    exc = c.exc
    body = getattr(exc, "body", None)
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")
    message = _message(text) if text else c.line
    return PINECONE.fields(c, getattr(exc, "status", None), getattr(exc, "headers", None), message)


PINECONE_ERRORS = PINECONE.errors(_fields)
