"""HTTP in one place: statuses, ``Retry-After``, server messages and malformed requests, and
the rows of the one error table (:mod:`.translate`) built on them.

:data:`HTTP_ERRORS` (service ``"http"``) maps what the SDKs of hosted services (Mistral,
OpenAI-compatible) raise; :data:`FINAL_ERRORS` (service ``"final"``) names what no retry can
fix, asked by the retry loop before every retry whatever a provider's rows said; Upstash's
rows (:mod:`indexcheck.stores.upstash.errors`) use the predicates and the malformed row here.
"""

from __future__ import annotations

import email.utils
import json
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from ..errors import AuthError, BackendUnavailableError, InputError, TransientError
from .translate import Caught, ErrorMap, Message, Rule

Options = Mapping[str, Callable[[Caught], Any]]

# -- what no retry can fix: a malformed request, a final HTTP status ------------------------
#: exception class names (httpx, httpcore, h11, requests/urllib3, http.client) raised for a
#: request the client refused to build or send; by name so every SDK's copy matches
MALFORMED_REQUEST = frozenset(
    {
        "LocalProtocolError",
        "UnsupportedProtocol",
        "InvalidURL",
        "InvalidHeader",
        "InvalidSchema",
        "MissingSchema",
        "UnicodeEncodeError",
    }
)
#: HTTP statuses that say the request itself is wrong: the same request fails the same way
FINAL_STATUS = frozenset({400, 401, 403, 404, 405, 410, 413, 422})


def causes(exc: BaseException | None) -> Iterator[BaseException]:
    """``exc`` and every exception it was raised from or while handling, once each."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        if exc.__cause__ is not None:
            exc = exc.__cause__
        else:
            exc = None if exc.__suppress_context__ else exc.__context__


def malformed_request(exc: BaseException | None) -> str | None:
    """The class name of the malformed-request error in ``exc``'s chain, or None."""
    for e in causes(exc):
        for cls in type(e).__mro__:
            if cls.__name__ in MALFORMED_REQUEST:
                return cls.__name__
        if isinstance(e, ValueError) and "header" in str(e).lower():
            return type(e).__name__  # http.client: "Invalid header value b'...'"
    return None


def final_status(exc: BaseException | None) -> int | None:
    """An HTTP status in ``exc``'s chain that no retry changes (400, 401, ...), or None."""
    for e in causes(exc):
        status = getattr(e, "status_code", None)
        if status is None:
            status = getattr(getattr(e, "response", None), "status_code", None)
        if isinstance(status, int) and status in FINAL_STATUS:
            return status
    return None


def cannot_succeed(exc: BaseException | None) -> bool:
    """True when retrying the request that raised ``exc`` cannot help."""
    return malformed_request(exc) is not None or final_status(exc) is not None


def malformed_message(who: str, name: str, fix: str) -> str:
    """The one-line error for a request the HTTP client refused (never the request itself:
    its text holds the headers, the key among them)."""
    return (
        f"{who}: the HTTP client refused to send the request as malformed ({name}), which no "
        f"retry can fix; {fix}"
    )


def _malformed(c: Caught) -> str:
    return malformed_message(c.who, c.malformed, c.malformed_fix)


#: the row for a request the HTTP client refused to build: bad input, never retried, its
#: text (the headers, key included) never shown; needs the fields ``who``, ``malformed``
#: (:func:`malformed_request`) and ``malformed_fix`` (what to check)
MALFORMED_ROW = Rule(Exception, InputError, _malformed, when=lambda c: c.malformed is not None)


#: a 429 is retried (after ``Retry-After`` when sent); needs the field ``status`` (and
#: ``retry_after``): the row the stores reached through an SDK share (Upstash, Pinecone)
RATE_LIMITED_ROW = Rule(
    Exception, TransientError, "HTTP 429 rate limited", when=lambda c: c.status == 429,
    options={"rate_limited": lambda c: True, "retry_after": lambda c: c.retry_after},
)  # fmt: skip

#: a 5xx is retried like a 429 (after ``Retry-After`` when sent); needs ``status`` and
#: ``message`` (and ``retry_after``)
SERVER_ERROR_ROW = Rule(
    Exception, TransientError, "HTTP {status}: {message}", when=lambda c: (c.status or 0) >= 500,
    options={"retry_after": lambda c: c.retry_after},
)  # fmt: skip

#: the last row of a store reached through an SDK: any other HTTP status is the service's
#: answer, shown with ``who`` (what was being done, where) and its ``message``
OTHER_STATUS_ROW = Rule(
    Exception, BackendUnavailableError, "{who}: HTTP {status}: {message}",
    when=lambda c: c.status is not None,
)  # fmt: skip


def _final_fields(c: Caught) -> dict[str, Any]:
    return {
        "malformed": malformed_request(c.exc),
        "malformed_fix": "check the API key, token and server URL in the environment",
        "final": final_status(c.exc),
    }


#: what no retry can fix, whatever a provider's rows said: a malformed request is bad input
#: (exit 2: a key or URL in the environment holds stray characters); a final HTTP status is
#: the backend refusing the request (exit 3: AuthError for 401/403)
FINAL_ERRORS = ErrorMap(
    MALFORMED_ROW,
    Rule(
        Exception,
        AuthError,
        "{who}: the server refused the credentials (HTTP {final}), which no retry can fix; "
        "check the API key or token in the environment",
        when=lambda c: c.final in (401, 403),
    ),
    Rule(
        Exception,
        BackendUnavailableError,
        "{who}: HTTP {final} refused the request, which no retry can fix; check the URL and "
        "the model or index name",
        when=lambda c: c.final is not None,
    ),
    fields=_final_fields,
    service="final",
)


def final_error(who: str, exc: BaseException) -> Exception | None:
    """The error to raise at once, instead of retrying, when ``exc`` (a TransientError or an
    SDK exception) carries a cause no retry can fix (:data:`FINAL_ERRORS`); None when a
    retry may help."""
    return FINAL_ERRORS.translate(exc, who=who)


# -- HTTP: the hosted services reached through an SDK (Mistral, OpenAI-compatible) ----------
#: statuses worth a retry besides 429 (with ``Retry-After`` when the server sends one)
TRANSIENT_STATUS = frozenset({408, 409, 500, 502, 503, 504})
#: transport failures worth a retry, by class name: httpx, httpx2 (mistralai 3.x) and openai
TRANSIENT_TRANSPORT = (
    "TimeoutException",
    "NetworkError",
    "RemoteProtocolError",
    "NoResponseError",
    "APIConnectionError",
    "APITimeoutError",
)
#: a reply whose bytes cannot be read at all: a Content-Encoding that lies (httpx
#: DecodingError, requests ContentDecodingError), a cut chunked body, text that is not in its
#: charset; retried like a 5xx by every table that names it
UNREADABLE_REPLY = (
    "DecodingError",
    "ContentDecodingError",
    "ChunkedEncodingError",
    "IncompleteRead",
    "UnicodeDecodeError",
)
#: a 200 whose body does not parse (truncated JSON, wrong shape), by class name across SDKs
MALFORMED_REPLY = (
    "ResponseValidationError",
    "ValidationError",
    "JSONDecodeError",
    *UNREADABLE_REPLY,
)


def where(url: str | None, default: str) -> str:
    """The server for messages, without any user:password part of its URL."""
    if not url:
        return default
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()


def _http_fields(c: Caught) -> dict[str, Any]:
    """``status`` (an int or None), the server's ``message``, ``retry_after`` (seconds),
    ``malformed`` (a refused request's class name) and ``limit`` (the timeout named)."""
    status = getattr(c.exc, "status_code", None)
    timeout_s = c.__dict__.get("timeout_s")
    out: dict[str, Any] = {
        "status": status if isinstance(status, int) else None,
        "malformed": malformed_request(c.exc),
        "limit": "" if timeout_s is None else f" (--timeout {timeout_s:g} s per request)",
        "message": "",
        "retry_after": None,
    }
    if isinstance(status, int):
        response = getattr(c.exc, "response", None)
        headers = getattr(c.exc, "headers", None) or getattr(response, "headers", None) or {}
        out["message"] = server_message(_body_text(getattr(c.exc, "body", "")))
        out["retry_after"] = retry_after(headers)
    return out


def status_in(*statuses: int) -> Callable[[Caught], bool]:
    """A ``when`` for a row that holds for these HTTP statuses (``c.status``)."""
    return lambda c: c.status in statuses


def status_row(
    error: type[Exception], message: Message, *statuses: int, options: Options | None = None
) -> Rule:
    """The row raising ``error`` with ``message`` for an SDK error of these HTTP statuses."""
    return Rule(Exception, error, message, when=status_in(*statuses), options=options or {})


def status_at_least(low: int) -> Callable[[Caught], bool]:
    """A ``when`` for a row that holds for HTTP statuses of ``low`` and above."""
    return lambda c: c.status is not None and c.status >= low


def status_between(low: int, high: int) -> Callable[[Caught], bool]:
    """A ``when`` for a row that holds for HTTP statuses in ``[low, high)``."""
    return lambda c: c.status is not None and low <= c.status < high


#: the retry reads ``retry_after`` off a TransientError
RETRY_AFTER: Mapping[str, Callable[[Caught], Any]] = {"retry_after": lambda c: c.retry_after}
RATE_LIMITED: Mapping[str, Callable[[Caught], Any]] = {
    "rate_limited": lambda c: True,
    **RETRY_AFTER,
}

#: a request the HTTP client refused to build is bad input, never retried (its text holds the
#: headers, key included, so it is never shown); timeouts, dropped connections, a 200 whose
#: body is cut or not the documented shape, 429 and TRANSIENT_STATUS are retried; 401/403 are
#: the key, other 4xx the request. Fields given by the caller: ``who`` (the model in
#: messages), ``server`` (no credentials), ``key_env``, ``malformed_fix``, ``reject_fix``
#: (what to check) and ``timeout_s``.
HTTP_ERRORS = ErrorMap(
    MALFORMED_ROW,
    Rule(TRANSIENT_TRANSPORT, TransientError, "{name} talking to {server}{limit}"),
    Rule(MALFORMED_REPLY, TransientError, "a malformed reply from {server} ({name})"),
    Rule(
        Exception,
        TransientError,
        "a malformed reply from {server} ({name})",
        when=status_between(200, 300),
    ),
    status_row(TransientError, "HTTP 429: {message}", 429, options=RATE_LIMITED),
    status_row(
        TransientError,
        "HTTP {status} from {server}: {message}",
        *TRANSIENT_STATUS,
        options=RETRY_AFTER,
    ),
    status_row(
        AuthError,
        "{who}: the server refused the API key (HTTP {status}); set {key_env} to a valid key "
        "for {server}",
        401,
        403,
    ),
    Rule(
        Exception,
        InputError,
        "{who} rejected the request (HTTP {status}): {message}; {reject_fix}",
        when=status_between(400, 500),
    ),
    Rule(
        Exception,
        BackendUnavailableError,
        "{who}: HTTP {status} from {server}: {message}",
        when=lambda c: c.status is not None,
    ),
    fields=_http_fields,
    service="http",
    chained=(TransientError, BackendUnavailableError),
)


def _body_text(body: Any) -> str:
    if body is None:
        return ""
    return body if isinstance(body, str) else json.dumps(body)


def server_message(body: str, limit: int = 300) -> str:
    """The human part of an error body: ``message``, or ``detail`` (a string or FastAPI's
    list of ``{loc, msg}``), else the raw text, cut to ``limit`` characters."""
    try:
        payload = json.loads(body)
    except ValueError:
        payload = None
    text = body.strip()
    if isinstance(payload, dict):
        detail = payload.get("detail")
        if isinstance(payload.get("message"), str):
            text = payload["message"]
        elif isinstance(detail, str):
            text = detail
        elif isinstance(detail, list):
            parts = []
            for item in detail:
                if isinstance(item, dict):
                    loc = ".".join(str(p) for p in item.get("loc") or [])
                    parts.append(f"{loc}: {item.get('msg', '')}" if loc else str(item.get("msg")))
            text = "; ".join(parts) or text
    text = " ".join(text.split()) or "no message"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``Retry-After`` (seconds or HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(when.tzinfo)).total_seconds())
