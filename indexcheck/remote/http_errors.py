"""One HTTP error mapping for the hosted services reached through an SDK (the Mistral
embedder, the Mistral and OpenAI-compatible judges): an SDK or transport exception becomes
the indexcheck error a user reads.

- a request the HTTP client refused to build (:func:`indexcheck.remote.retry.malformed_request`) is
  bad input, never retried (its text holds the headers, key included, so it is never shown);
- a timeout or a dropped connection, a 200 whose body is cut or not the documented shape,
  429 (rate-limited, with ``Retry-After``) and 408/409/500/502/503/504 (with ``Retry-After``
  when the server sends one) are a :class:`~indexcheck.errors.TransientError`, retried by
  :meth:`indexcheck.remote.retry.RetryPolicy.run`;
- 401/403 are :class:`~indexcheck.errors.AuthError`, other 4xx
  :class:`~indexcheck.errors.InputError` with the server's message, anything else
  :class:`~indexcheck.errors.BackendUnavailableError`.
"""

from __future__ import annotations

import email.utils
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from ..errors import AuthError, BackendUnavailableError, InputError, TransientError
from .retry import malformed_message, malformed_request

TRANSIENT_STATUS = frozenset({408, 409, 500, 502, 503, 504})
#: transport failures worth a retry, by class name: httpx, httpx2 (mistralai 3.x) and openai
TRANSIENT_TRANSPORT = frozenset(
    {
        "TimeoutException",
        "NetworkError",
        "RemoteProtocolError",
        "NoResponseError",
        "APIConnectionError",
        "APITimeoutError",
    }
)
#: a 200 whose body does not parse (truncated JSON, wrong shape), by class name across SDKs
MALFORMED_REPLY = frozenset({"ResponseValidationError", "ValidationError", "JSONDecodeError"})


def where(url: str | None, default: str) -> str:
    """The server for messages, without any user:password part of its URL."""
    if not url:
        return default
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()


def map_http_error(
    exc: BaseException,
    *,
    who: str,
    server: str,
    key_env: str,
    malformed_fix: str,
    reject_fix: str,
    timeout_s: float | None = None,
) -> Exception | None:
    """The indexcheck exception for an SDK or transport failure, or None to re-raise.

    ``who`` names the model in messages (``mistral:mistral-embed``, ``judge openai:...``),
    ``server`` where it runs (no credentials), ``key_env`` the variable holding its key;
    ``malformed_fix`` and ``reject_fix`` end the messages for a malformed request and a
    refused one (what to check); ``timeout_s`` is named in a timeout's message."""
    malformed = malformed_request(exc)
    if malformed is not None:
        return InputError(malformed_message(who, malformed, malformed_fix))
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & TRANSIENT_TRANSPORT:
        limit = "" if timeout_s is None else f" (--timeout {timeout_s:g} s per request)"
        return TransientError(f"{type(exc).__name__} talking to {server}{limit}")
    status = getattr(exc, "status_code", None)
    if names & MALFORMED_REPLY or (isinstance(status, int) and 200 <= status < 300):
        # a 200 whose body was cut or is not the documented shape: retried like a 5xx
        return TransientError(f"a malformed reply from {server} ({type(exc).__name__})")
    if not isinstance(status, int):
        return None
    response = getattr(exc, "response", None)
    headers = getattr(exc, "headers", None) or getattr(response, "headers", None) or {}
    message = server_message(_body_text(getattr(exc, "body", "")))
    if status == 429:
        return TransientError(
            f"HTTP 429: {message}", rate_limited=True, retry_after=retry_after(headers)
        )
    if status in TRANSIENT_STATUS:
        # a 503 may say when to come back; honour it as for a 429
        return TransientError(
            f"HTTP {status} from {server}: {message}", retry_after=retry_after(headers)
        )
    if status in (401, 403):
        return AuthError(
            f"{who}: the server refused the API key (HTTP {status}); "
            f"set {key_env} to a valid key for {server}"
        )
    if 400 <= status < 500:
        return InputError(f"{who} rejected the request (HTTP {status}): {message}; {reject_fix}")
    return BackendUnavailableError(f"{who}: HTTP {status} from {server}: {message}")


@contextmanager
def translated(mapper: Callable[[Exception], Exception | None]) -> Iterator[None]:
    """Raise what ``mapper`` (e.g. a bound :func:`map_http_error`) makes of an exception the
    block raises, in its place; the exception itself when ``mapper`` returns None. An
    AuthError or InputError is raised from None (the SDK's chained request carries the key
    in its headers); anything else stays chained to the SDK's error, whose HTTP status the
    retry loop reads."""
    try:
        yield
    except Exception as exc:
        mapped = mapper(exc)
        if mapped is None:
            raise
        if isinstance(mapped, AuthError | InputError):
            raise mapped from None
        raise mapped from exc


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
