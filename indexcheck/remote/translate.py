"""SDK and HTTP exceptions -> IndexcheckErrors: one table for every store, embedder and judge.

httpx's ``map_httpcore_exceptions`` over one mapping, as rows per service. :data:`TABLE`
holds each service's :class:`ErrorMap` under its name (``"chroma"``, ``"pgvector"``,
``"upstash"``, ``"ray"``, ``"http"`` for the hosted services reached through an SDK: Mistral,
OpenAI-compatible; ``"final"`` for what no retry can fix), registered by the module that
knows the SDK (``service=``). A service declares rows only; :func:`translate` is the one
translator and :func:`translating` the one context manager every SDK boundary runs in (the
store, embedder and judge bases, openers through :meth:`ErrorMap.call`). Most specific wins:
rows are read in order, specific rows before the catch-alls, the first match decides. HTTP
statuses, ``Retry-After`` and malformed requests are read here only.

A :class:`Rule` matches by class, by a lazily resolved ``"module:Attr.path"`` (looked up in
``sys.modules`` only: matching never imports an SDK), by a bare class name along the MRO, or
by a module prefix ``"httpx.*"``; ``when`` tests what was caught (:func:`doing` for one
phase). Its message is a ``str.format`` template over :class:`Caught`'s fields or a function
of it. ``gave_up`` sentences end a :class:`TransientError` that outlived every retry.
"""

from __future__ import annotations

import email.utils
import json
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import urlsplit

from ..errors import (
    AuthError,
    BackendUnavailableError,
    IndexcheckError,
    InputError,
    RateLimitError,
    TransientError,
)

T = TypeVar("T")
Pattern = type[BaseException] | str
Message = str | Callable[["Caught"], str]


class Caught:
    """What a rule sees: ``exc``, ``name`` (its class name), ``text`` (``str(exc)``),
    ``doing``, ``store`` (None while opening) and the extra fields given; attribute access."""

    def __init__(self, exc: BaseException, **fields: Any) -> None:
        self.exc = exc
        self.name = type(exc).__name__
        self.text = str(exc)
        self.doing = "reading"
        self.store: Any = None
        self.__dict__.update(fields)

    def __getattr__(self, name: str) -> Any:  # the extra fields, typed loosely for rules
        raise AttributeError(f"no field '{name}' where an error rule looked for it")

    def format(self, message: Message) -> str:
        return message(self) if callable(message) else message.format_map(self.__dict__)


def _resolve(path: str) -> Any:
    module, _, attrs = path.partition(":")
    obj: Any = sys.modules.get(module)
    for attr in attrs.split("."):
        obj = getattr(obj, attr, None) if obj is not None else None
    return obj


def matches(pattern: Pattern, exc: BaseException) -> bool:
    """True when ``exc`` is what ``pattern`` names (see the module docstring)."""
    if isinstance(pattern, type):
        return isinstance(exc, pattern)
    if ":" in pattern:
        cls = _resolve(pattern)
        return isinstance(cls, type) and isinstance(exc, cls)
    mro = type(exc).__mro__
    if pattern.endswith(".*"):
        prefix = pattern[:-2]
        return any(c.__module__ == prefix or c.__module__.startswith(prefix + ".") for c in mro)
    return any(c.__name__ == pattern for c in mro)


@dataclass(frozen=True)
class Rule:
    """One row: what it matches, the error raised in its place, and its message.

    ``error`` may also be another :class:`ErrorMap`, which then decides (a phase with its
    own table, e.g. connecting). ``options`` are further keyword arguments of the error,
    each a function of :class:`Caught` (``retry_after=lambda c: c.retry_after``).
    """

    match: Pattern | tuple[Pattern, ...]
    error: type[Exception] | ErrorMap
    message: Message = ""
    when: Callable[[Caught], bool] | None = None
    options: Mapping[str, Callable[[Caught], Any]] = field(default_factory=dict)

    def applies(self, caught: Caught) -> bool:
        patterns = self.match if isinstance(self.match, tuple) else (self.match,)
        if not any(matches(p, caught.exc) for p in patterns):
            return False
        return self.when is None or bool(self.when(caught))

    def build(self, caught: Caught) -> Exception | None:
        if isinstance(self.error, ErrorMap):
            return self.error.lookup(caught)
        extra = {key: fn(caught) for key, fn in self.options.items()}
        return self.error(caught.format(self.message), **extra)


GAVE_UP_RATE = "{label} still rate-limited {doing} after {attempts} retries; wait and rerun"
GAVE_UP_DOWN = (
    "{label} {doing} failed after {attempts} retries ({err}); check the network "
    "and the server, or rerun later"
)


class ErrorMap:
    """One service's rows of the table, in order, plus its give-up sentences.

    ``fields`` derives more fields from what was caught, for every row (a scrubbed first
    line, an HTTP status the store recorded). ``service`` registers the rows in
    :data:`TABLE` under that name. ``chained`` names the errors raised chained to the SDK's
    (a TransientError: the retry loop reads its HTTP status); others are raised from None,
    since an SDK's error may hold the request, key included."""

    def __init__(
        self,
        *rules: Rule,
        fields: Callable[[Caught], Mapping[str, Any]] | None = None,
        rate_limited: Message = GAVE_UP_RATE,
        unavailable: Message = GAVE_UP_DOWN,
        service: str | None = None,
        chained: tuple[type[Exception], ...] = (TransientError,),
    ) -> None:
        self.rules = rules
        self.fields = fields
        self.rate_limited = rate_limited
        self.unavailable = unavailable
        self.chained = chained
        if service is not None:
            TABLE[service] = self

    def translate(self, exc: BaseException, **fields: Any) -> Exception | None:
        """The error for ``exc`` (a TransientError when a retry may help), or None when no
        row matches (the exception is not the SDK's: it propagates unchanged)."""
        return self.lookup(Caught(exc, **fields))

    def lookup(self, caught: Caught) -> Exception | None:
        if self.fields is not None:
            caught.__dict__.update(self.fields(caught))
        for rule in self.rules:
            if rule.applies(caught):
                return rule.build(caught)
        return None

    def gave_up(
        self, err: TransientError, attempts: int, **fields: Any
    ) -> RateLimitError | BackendUnavailableError:
        """The error once ``err`` outlived ``attempts`` retries."""
        caught = Caught(err, attempts=attempts, err=err, **fields)
        if err.rate_limited:
            return RateLimitError(caught.format(self.rate_limited))
        return BackendUnavailableError(caught.format(self.unavailable))

    def mapping(self, doing: str = "opening", **fields: Any) -> AbstractContextManager[None]:
        """Translate what the block raises, with no retries (calls made while a store is
        opened, before there is a store to ask); IndexcheckErrors pass unchanged."""

        def gave_up(what: str, err: TransientError, attempts: int) -> Exception:
            return self.gave_up(err, attempts, doing=what, **fields)

        return translating(self, doing, gave_up, **fields)

    def call(self, doing: str, fn: Callable[[], T], **fields: Any) -> T:
        """Run ``fn`` once inside :meth:`mapping`: ``partial(QDRANT_ERRORS.call, ...)`` is
        how an opener makes its ``call(doing, fn)``."""
        with self.mapping(doing, **fields):
            return fn()


#: every service's rows, by name: the one table
TABLE: dict[str, ErrorMap] = {}


def doing(*what: str) -> Callable[[Caught], bool]:
    """A ``when`` for a row that holds only while the store is ``doing`` one of ``what``."""
    return lambda caught: caught.doing in what


def translate(
    exc: BaseException, service: str | ErrorMap | None, **fields: Any
) -> Exception | None:
    """The error for ``exc`` by the rows of ``service`` (a name in :data:`TABLE`, or the rows
    themselves), a TransientError when a retry may help, or None when no row matches (the
    exception is not the SDK's: it propagates unchanged)."""
    rows = _rows(service)
    return None if rows is None else rows.translate(exc, **fields)


def _rows(service: str | ErrorMap | None) -> ErrorMap | None:
    return TABLE[service] if isinstance(service, str) else service


@contextmanager
def translating(
    service: str | ErrorMap | None,
    doing: str = "reading",
    gave_up: Callable[[str, TransientError, int], Exception] | None = None,
    **fields: Any,
) -> Iterator[None]:
    """Raise :func:`translate` of what the block raises in its place: the one SDK boundary.

    IndexcheckErrors, TransientErrors and what no row matches pass unchanged. A
    TransientError a row makes becomes ``gave_up(doing, err, 0)`` when given (the block is
    not retried); the result is chained to the SDK's error only when the rows say so."""
    try:
        yield
    except (IndexcheckError, TransientError):
        raise
    except Exception as exc:
        rows = _rows(service)
        err = None if rows is None else rows.translate(exc, doing=doing, **fields)
        if rows is None or err is None:
            raise
        if gave_up is not None and isinstance(err, TransientError):
            err = gave_up(doing, err, 0)
        raise err from (exc if isinstance(err, rows.chained) else None)


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
#: a 200 whose body does not parse (truncated JSON, wrong shape), by class name across SDKs
MALFORMED_REPLY = ("ResponseValidationError", "ValidationError", "JSONDecodeError")


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
    Rule(
        Exception, TransientError, "HTTP 429: {message}", when=status_in(429), options=RATE_LIMITED
    ),
    Rule(
        Exception,
        TransientError,
        "HTTP {status} from {server}: {message}",
        when=status_in(*TRANSIENT_STATUS),
        options=RETRY_AFTER,
    ),
    Rule(
        Exception,
        AuthError,
        "{who}: the server refused the API key (HTTP {status}); set {key_env} to a valid key "
        "for {server}",
        when=status_in(401, 403),
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
