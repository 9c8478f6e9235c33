"""Weaviate's rows of the one error table: the v4 client's exceptions, by HTTP status for
REST (schema, meta) and by the server's message for gRPC (search, aggregate), whose status
code the client folds into ``WeaviateQueryError``'s text.

401/403 (or a gRPC ``unauthorized``/``anonymous access`` refusal) are the key, a missing
class the collection name, 429 and 5xx (or gRPC ``UNAVAILABLE``/``RESOURCE_EXHAUSTED``)
transient, a request the server refused (a filter on a property it lacks, a data type
mismatch) bad input with its message shown. Texts are redacted of the key first.
"""

from __future__ import annotations

import re
from typing import Any

from ...errors import AuthError, BackendUnavailableError, InputError, TransientError
from ...remote.http import RATE_LIMITED_ROW, server_message, status_at_least, status_in
from ...remote.translate import Caught, ErrorMap, Rule

KEY_ENV = "WEAVIATE_API_KEY"
_AUTH = re.compile(r"unauthori[sz]ed|anonymous access|invalid api key|UNAUTHENTICATED", re.I)
_GONE = re.compile(r"could not find class|class .* not found|collection .* not found", re.I)
_BUSY = re.compile(r"UNAVAILABLE|RESOURCE_EXHAUSTED|DEADLINE_EXCEEDED|rate limit", re.I)


def _fields(c: Caught) -> dict[str, Any]:
    store, exc = c.store, c.exc
    status = getattr(exc, "status_code", None)
    redact = store._redact if store is not None else str
    text = redact(c.text)
    # the client wraps the server's reply: "Query call with protocol GRPC search failed
    # with message <details>." or "... Unexpected status code: 404, with response body: ..."
    found = re.search(r"with (?:message|response body:?)\s*(.*)", text, re.S)
    message = server_message((found.group(1) if found else text).strip().rstrip("."))
    return {
        "status": status if isinstance(status, int) else None,
        "retry_after": None,
        "message": message,
        "who": f"Weaviate {c.doing} on {store.where if store is not None else 'the server'}",
    }


def _text(pattern: re.Pattern[str]) -> Any:
    return lambda c: bool(pattern.search(c.text))


WEAVIATE_ERRORS = ErrorMap(
    Rule(
        (
            "InsufficientPermissionsError",
            "AuthenticationFailedError",
            "UnexpectedStatusCodeError",
            "WeaviateQueryError",
        ),
        AuthError,
        f"Weaviate refused the API key for {{store.where}} ({{message}}); set {KEY_ENV} to a "
        "key of the cluster that holds the collection",
        when=lambda c: (
            c.status in (401, 403)
            or c.name != "UnexpectedStatusCodeError"
            and bool(_AUTH.search(c.text))
            or c.name in ("InsufficientPermissionsError", "AuthenticationFailedError")
        ),
    ),
    Rule(
        ("UnexpectedStatusCodeError", "WeaviateQueryError"),
        InputError,
        "{who}: the collection was not found ({message}); check ?collection= (the class "
        "name, as GET /v1/schema lists it)",
        when=lambda c: c.status == 404 or bool(_GONE.search(c.text)),
    ),
    RATE_LIMITED_ROW,
    Rule(
        "UnexpectedStatusCodeError",
        TransientError,
        "HTTP {status}: {message}",
        when=status_at_least(500),
    ),
    Rule(
        ("WeaviateQueryError", "WeaviateRetryError"), TransientError, "{message}", when=_text(_BUSY)
    ),
    Rule(
        (
            "WeaviateConnectionError",
            "WeaviateStartUpError",
            "WeaviateGRPCUnavailableError",
            "WeaviateTimeoutError",
            "httpx.*",
            "grpc.*",
        ),
        TransientError,
        "could not reach {store.where} ({name})",
    ),
    Rule(
        "UnexpectedStatusCodeError",
        InputError,
        "{who}: Weaviate refused the request (HTTP {status}: {message})",
        when=status_in(400, 405, 409, 413, 422),
    ),
    Rule("WeaviateQueryError", InputError, "{who}: Weaviate refused the query ({message})"),
    Rule(("WeaviateBaseError",), BackendUnavailableError, "{who}: {message}"),
    fields=_fields,
    rate_limited="Weaviate still rate-limited {doing} on {store.where} after {attempts} "
    "retries; wait and rerun, or raise ?retries=",
    unavailable="Weaviate {doing} on {store.where} failed after {attempts} retries ({err}); "
    "check the network, the URL and ?grpc_port=, or rerun later",
    service="weaviate",
)
