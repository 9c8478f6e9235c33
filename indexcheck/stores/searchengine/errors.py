"""Elasticsearch's and OpenSearch's rows of the one error table.

Both official clients raise an API error carrying the HTTP status (``status_code``) and the
server's JSON error (``body`` in elasticsearch-py 8, ``info`` in opensearch-py), and
transport errors (``ConnectionError``, ``ConnectionTimeout``) by the same names. 401/403
are the credentials, 429 and 5xx are retried by the base, a 4xx is the server refusing
what indexcheck asked (its reason shown); a 9.x Elasticsearch client talking to an 8.x
server is named, with the pip command that fixes it.
"""

from __future__ import annotations

from typing import Any

from ...errors import AuthError, BackendUnavailableError, InputError, TransientError
from ...remote.http import (
    RATE_LIMITED,
    RETRY_AFTER,
    retry_after,
    status_at_least,
    status_row,
)
from ...remote.translate import Caught, ErrorMap, Rule


def reason(exc: BaseException) -> str:
    """The server's ``error.reason`` (or type), else the exception's text, one line."""
    body: Any = getattr(exc, "body", None)
    if not isinstance(body, dict):
        body = getattr(exc, "info", None)
    text = ""
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            text = str(err.get("reason") or err.get("type") or "")
        elif isinstance(err, str):
            text = err
    text = text or str(getattr(exc, "message", "") or exc)
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def _fields(c: Caught) -> dict[str, Any]:
    status = getattr(c.exc, "status_code", None)
    if not isinstance(status, int):
        meta = getattr(c.exc, "meta", None)
        status = getattr(meta, "status", None)
    headers = getattr(getattr(c.exc, "meta", None), "headers", None) or {}
    return {
        "status": status if isinstance(status, int) else None,
        "reason": reason(c.exc),
        "retry_after": retry_after(headers),
    }


def _compat(c: Caught) -> bool:
    return c.status == 400 and "compatible-with" in c.reason.lower()


def engine_errors(label: str, service: str, credentials: str) -> ErrorMap:
    """The rows for one engine: ``label`` names it in messages, ``credentials`` says which
    environment variables hold its credentials. Fields used: ``where`` (the URL, no
    credentials) and ``index``."""
    return ErrorMap(
        Rule(
            Exception,
            InputError,
            f"{label} at {{where}} refused the client's media type ({{reason}}): an "
            "elasticsearch 9.x client cannot talk to an 8.x server; run: pip install "
            "'elasticsearch>=8.12,<9'",
            when=_compat,
        ),
        Rule(
            "UnsupportedProductError",
            InputError,
            f"the server at {{where}} did not answer as {label} ({{reason}}); if it is "
            "OpenSearch, use an opensearch: spec",
        ),
        status_row(
            AuthError,
            f"{label} at {{where}} refused the credentials (HTTP {{status}}) while trying to "
            f"{{doing}}; set {credentials} to a user or key that can read '{{index}}'",
            401,
            403,
        ),
        status_row(
            InputError,
            f"{label} at {{where}} has no index '{{index}}' ({{reason}}); fix ?index=",
            404,
        ),
        status_row(TransientError, "HTTP 429: {reason}", 429, options=RATE_LIMITED),
        Rule(
            Exception,
            TransientError,
            "HTTP {status}: {reason}",
            when=status_at_least(500),
            options=RETRY_AFTER,
        ),  # fmt: skip
        Rule(
            Exception,
            BackendUnavailableError,
            f"{label} at {{where}} refused the request to {{doing}} (HTTP {{status}}: "
            "{reason}); check the server version and the spec",
            when=status_at_least(400),
        ),
        Rule(
            ("ConnectionTimeout", "ConnectionError", "TransportError", "SerializationError"),
            TransientError,
            "{name} talking to {where}: {reason}",
        ),
        fields=_fields,
        rate_limited=f"{label} at {{where}} still rate-limited {{doing}} after {{attempts}} "
        "retries; wait and rerun",
        unavailable=f"{label} at {{where}}: {{doing}} failed after {{attempts}} retries "
        "({err}); check the URL, that the server is up, and the network",
        service=service,
    )
