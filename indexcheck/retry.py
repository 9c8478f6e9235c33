"""One retry policy for every remote call: embedders and stores share it.

Exponential backoff with full jitter, or the server's ``Retry-After`` when it sends one.

Only what may succeed on a second try is retried. :func:`cannot_succeed` names what never
will, whatever a provider's mapping says: a request the HTTP client refused to build (h11's
``LocalProtocolError`` for a header holding a CR, LF or other illegal byte, a non-ASCII
header, an unsupported URL scheme), or an HTTP status that states the request itself is wrong
(400, 401, 403, 404, 405, 410, 413, 422). The retry loops of embedders, judges and stores
ask it before every retry.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from .errors import AuthError, BackendUnavailableError, InputError

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


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter: delay_i = U(0, min(cap, base * 2**i)),
    or the server's Retry-After when it sends one.

    ``max_wait`` bounds the seconds one request may take with all its retries (time in
    requests plus backoff); a retry whose delay would cross it is not made.
    """

    max_retries: int = 6
    base_delay: float = 0.5
    max_delay: float = 20.0
    max_wait: float | None = None

    def gives_up(self, attempt: int, waited: float, next_delay: float) -> bool:
        """True when no further retry is allowed: retries spent, or the budget would pass."""
        if attempt >= self.max_retries:
            return True
        return self.max_wait is not None and waited + next_delay > self.max_wait

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        if retry_after is not None:
            return min(self.max_delay, max(0.0, retry_after))
        return rng.uniform(0, min(self.max_delay, self.base_delay * (2**attempt)))


def final_error(who: str, exc: BaseException) -> Exception | None:
    """The error to raise at once, instead of retrying, when ``exc`` (a TransientError or an
    SDK exception) carries a cause no retry can fix; None when a retry may help. A malformed
    request is bad input (exit 2: a key or URL in the environment holds stray characters);
    a final HTTP status is the backend refusing the request (exit 3: AuthError for 401/403)."""
    name = malformed_request(exc)
    if name is not None:
        return InputError(
            malformed_message(
                who, name, "check the API key, token and server URL in the environment"
            )
        )
    status = final_status(exc)
    if status in (401, 403):
        return AuthError(
            f"{who}: the server refused the credentials (HTTP {status}), which no retry can "
            "fix; check the API key or token in the environment"
        )
    if status is not None:
        return BackendUnavailableError(
            f"{who}: HTTP {status} refused the request, which no retry can fix; check the "
            "URL and the model or index name"
        )
    return None
