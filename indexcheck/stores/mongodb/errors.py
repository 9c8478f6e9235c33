"""MongoDB's rows of the one error table: pymongo's exceptions by class and server code.

pymongo raises ``OperationFailure`` for a reply ``{ok: 0, errmsg, code, codeName}`` (``code``
and ``details`` on the exception), ``ServerSelectionTimeoutError`` when no server answered in
time, ``AutoReconnect``/``NetworkTimeout`` for a dropped or slow connection, and
``ConfigurationError``/``InvalidURI`` for a URI it cannot use. Codes 18 and 13 are the
credentials; retryable codes (the ones the server labels retryable: not primary, shutting
down, host unreachable, exceeded time limit) are retried by the base; a ``$vectorSearch`` on
a path the index does not declare is bad input (exit 2). Texts are redacted of the password
first (``store._redact``; the opener passes ``redact``).
"""

from __future__ import annotations

from typing import Any

from ...errors import AuthError, BackendUnavailableError, InputError, SpecError, TransientError
from ...remote.translate import Caught, ErrorMap, Rule

URI_ENV, PASSWORD_ENV = "MONGODB_URI", "MONGODB_PASSWORD"
#: server codes a retry may fix (HostUnreachable, HostNotFound, NetworkTimeout,
#: ShutdownInProgress, PrimarySteppedDown, ExceededTimeLimit, SocketException,
#: NotWritablePrimary, InterruptedAtShutdown, InterruptedDueToReplStateChange,
#: NotPrimaryNoSecondaryOk, NotPrimaryOrSecondary, StaleConfig)
RETRYABLE = frozenset({6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436, 13388})
AUTH_CODES = frozenset({13, 18})


def _fields(c: Caught) -> dict[str, Any]:
    exc = c.exc
    code = getattr(exc, "code", None)
    details = getattr(exc, "details", None)
    message = details.get("errmsg") if isinstance(details, dict) else None
    text = str(message or exc).split(", full error:")[0]
    text = " ".join(text.split())
    if len(text) > 300:
        text = text[:297] + "..."
    store = c.store
    redact = store._redact if store is not None else c.__dict__.get("redact", str)
    return {"code": code if isinstance(code, int) else None, "message": redact(text)}


def _code_in(codes: frozenset[int]) -> Any:
    return lambda c: c.code in codes


def _filter_path(c: Caught) -> bool:
    return c.code is not None and "needs to be indexed as" in c.message


MONGODB_ERRORS = ErrorMap(
    Rule(
        ("ConfigurationError", "InvalidURI"),
        SpecError,
        f"pymongo cannot use the MongoDB URI ({{message}}); check the spec's URI, or {URI_ENV}",
    ),
    Rule(
        "OperationFailure",
        AuthError,
        "MongoDB at {where} refused the credentials (code {code}: {message}) while trying to "
        f"{{doing}}; put the user in the URI and the password in {PASSWORD_ENV} (or the whole "
        f"URI in {URI_ENV}), for a user that can read {{namespace}}",
        when=_code_in(AUTH_CODES),
    ),
    Rule(
        "OperationFailure",
        InputError,
        "MongoDB Atlas refused the vector search on {namespace} ({message}); the index "
        "definition does not declare that path: fix ?vector= or the index",
        when=_filter_path,
    ),
    Rule(
        "OperationFailure", TransientError, "code {code}: {message}", when=_code_in(RETRYABLE)
    ),  # fmt: skip
    Rule(
        "OperationFailure",
        BackendUnavailableError,
        "MongoDB at {where} refused the request to {doing} on {namespace} (code {code}: "
        "{message}); check the server version (Atlas Vector Search needs Atlas or "
        "MongoDB 7.0+ with search) and the spec",
    ),
    Rule(
        "ServerSelectionTimeoutError",
        BackendUnavailableError,
        "no MongoDB server answered at {where} while trying to {doing} ({message}); check the "
        "URI, that the cluster is up and that this machine's IP is on its access list",
    ),
    Rule(
        ("AutoReconnect", "NetworkTimeout", "ConnectionFailure"),
        TransientError,
        "{name} talking to {where}: {message}",
    ),  # fmt: skip
    fields=_fields,
    unavailable="MongoDB at {where}: {doing} failed after {attempts} retries ({err}); check "
    "the URI, that the cluster is up, and the network",
    service="mongodb",
)
