"""Upstash Vector's rows of the one error table: HTTP statuses and httpx failures.

The SDK hides HTTP statuses, so the store records the status and Retry-After of every reply
through a response hook on the SDK's httpx client (``store._status``,
``store._retry_after``) and the rows below read them: 401/403 are the token, 429 and 5xx
are retried (TransientError), other statuses are final. Every text is redacted of the
token first (``store._redact``).
"""

from __future__ import annotations

from typing import Any

from ...errors import AuthError, BackendUnavailableError, TransientError
from ...remote.http import (
    MALFORMED_ROW,
    RATE_LIMITED_ROW,
    RETRY_AFTER,
    UNREADABLE_REPLY,
    malformed_request,
    status_at_least,
)
from ...remote.translate import Caught, ErrorMap, Rule

URL_ENV = "UPSTASH_VECTOR_REST_URL"
TOKEN_ENV = "UPSTASH_VECTOR_REST_TOKEN"


def _fields(c: Caught) -> dict[str, Any]:
    store = c.store
    return {
        "status": store._status,
        "retry_after": store._retry_after,
        "text": store._redact(c.text)[:200],
        # h11 refused a header: final, and its text holds the token, so it is never shown
        "malformed": malformed_request(c.exc),
        "who": f"Upstash {c.doing} on {store.host}",
        "malformed_fix": f"check {TOKEN_ENV} and {URL_ENV} for stray characters",
    }


def _token_refused(c: Caught) -> bool:
    return c.status in (401, 403) or (c.status is None and c.text.startswith("Unauthorized"))


UPSTASH_ERRORS = ErrorMap(
    MALFORMED_ROW,
    Rule(
        Exception,
        AuthError,
        lambda c: (
            f"Upstash refused the token for {c.store.host} (HTTP {c.status or 401}); set "
            f"{TOKEN_ENV} to this index's REST token from the Upstash console"
        ),
        when=_token_refused,
    ),
    RATE_LIMITED_ROW,
    Rule(
        Exception,
        TransientError,
        "HTTP {status}",
        when=status_at_least(500),
        options=RETRY_AFTER,
    ),
    Rule("httpx:TimeoutException", TransientError, "no reply within {store.timeout:g} s"),
    Rule("httpx:ConnectError", TransientError, "could not connect"),
    Rule("httpx:TransportError", TransientError, "connection failed ({name})"),
    Rule(UNREADABLE_REPLY, TransientError, "an unreadable reply ({name})"),
    Rule(
        ValueError,
        TransientError,
        "the reply was not valid JSON (truncated?)",
        when=lambda c: c.status is not None and c.status < 300,
    ),
    Rule(
        Exception,
        BackendUnavailableError,
        "Upstash rejected the {doing} request to {store.host} (HTTP {status}: {text}); "
        f"check that {URL_ENV} is a dense vector index's REST URL",
        when=status_at_least(300),
    ),
    Rule(
        Exception,
        BackendUnavailableError,
        "Upstash sent an unexpected reply to {doing} from {store.host} ({name}: {text}); "
        "check the URL and upstash-vector version",
    ),
    fields=_fields,
    rate_limited="Upstash still rate-limited {doing} on {store.host} after {attempts} "
    "retries; wait and rerun, raise ?retries=, or raise the plan's request limit",
    unavailable="Upstash {doing} on {store.host} failed after {attempts} retries ({err}); "
    f"check {URL_ENV} and the network, or rerun later",
    service="upstash",
)
