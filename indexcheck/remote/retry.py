"""One retry policy and one retry loop for every remote call: stores, embedders and judges.

Exponential backoff with full jitter, or the server's ``Retry-After`` when it sends one.

Only what may succeed on a second try is retried. :func:`cannot_succeed` names what never
will, whatever a provider's mapping says: a request the HTTP client refused to build (h11's
``LocalProtocolError`` for a header holding a CR, LF or other illegal byte, a non-ASCII
header, an unsupported URL scheme), or an HTTP status that states the request itself is wrong
(400, 401, 403, 404, 405, 410, 413, 422). The one retry loop, :meth:`RetryPolicy.run`, used
by embedders, judges and stores alike, asks it before every retry.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from typing import Any, Protocol, TypedDict, TypeVar, Unpack

from ..errors import AuthError, BackendUnavailableError, InputError, RateLimitError, TransientError

T = TypeVar("T")

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


class Counted(Protocol):
    """What :meth:`RetryPolicy.run` counts on: an embedder's or a judge's stats."""

    requests: int
    seconds: float
    retries: int


class CallStats:
    """Mixin of the stats dataclasses (embedders, judges): ``as_dict`` for the JSON output,
    seconds rounded to 0.1 ms."""

    seconds: float

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)  # type: ignore[call-overload]
        d["seconds"] = round(self.seconds, 4)
        return dict(d)


@dataclass(frozen=True)
class RetryHooks:
    """What one retry loop calls besides the request (a value, as httpx's ``Limits``):

    ``sleep`` waits between attempts, ``rng`` draws the jitter (default ``Random(0)``),
    ``stats`` (``requests``, ``seconds``, ``retries``) counts attempts, seconds inside them
    and retries; ``before`` runs ahead of every attempt, outside its time; ``on_transient``
    sees each retryable failure and ``on_retry`` runs before each retry."""

    sleep: Callable[[float], None] = time.sleep
    rng: random.Random | None = None
    stats: Counted | None = None
    before: Callable[[], None] | None = None
    on_transient: Callable[[TransientError], None] | None = None
    on_retry: Callable[[], None] | None = None


class HookKeywords(TypedDict, total=False):
    """The fields of :class:`RetryHooks`, still accepted one by one by :meth:`RetryPolicy.run`."""

    sleep: Callable[[float], None]
    rng: random.Random | None
    stats: Counted | None
    before: Callable[[], None] | None
    on_transient: Callable[[TransientError], None] | None
    on_retry: Callable[[], None] | None


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

    def spent(self, waited: float) -> str:
        """The budget part of a give-up message: `` and 3 s (--max-wait 2 s)``, or ``""``."""
        if self.max_wait is None:
            return ""
        return f" and {waited:.0f} s (--max-wait {self.max_wait:g} s)"

    def exhausted(
        self, who: str, exc: TransientError, attempts: int, waited: float, rate_fix: str
    ) -> RateLimitError | BackendUnavailableError:
        """The error once a transient failure outlived every retry or the budget."""
        budget = self.spent(waited)
        if exc.rate_limited:
            return RateLimitError(
                f"{who}: still rate limited (429) after {attempts} retries{budget}; {rate_fix}"
            )
        return BackendUnavailableError(
            f"{who}: request failed after {attempts} retries{budget}: {exc}; raise --timeout "
            "or --max-wait, or try again later"
        )

    def run(
        self,
        call: Callable[[], T],
        *,
        who: str,
        gave_up: Callable[[TransientError, int, float], Exception] | None = None,
        rate_fix: str = "try again later",
        chain: bool = True,
        hooks: RetryHooks | None = None,
        **given: Unpack[HookKeywords],
    ) -> T:
        """``call()``, retried while it raises a :class:`TransientError`: the one retry loop.

        A failure whose cause no retry can fix (:func:`final_error`, named after ``who``) is
        raised at once; otherwise the loop waits :meth:`delay` (the server's Retry-After
        when it sent one) and tries again, until :meth:`gives_up` (retries spent, or the
        ``max_wait`` budget, time in requests plus backoff, would be crossed): then it raises
        ``gave_up(error, retries made, seconds waited)`` (default :meth:`exhausted`, whose
        rate-limit message ends with ``rate_fix``), chained to the last error when ``chain``
        (else from None: an SDK's error may hold the request, key included).
        Anything else ``call`` raises passes through untouched. ``hooks`` (or its fields
        given one by one: ``sleep=``, ``stats=``, ...) says how to wait and what to count."""
        h = replace(hooks or RetryHooks(), **given)
        rng = h.rng or random.Random(0)
        attempt, waited = 0, 0.0
        while True:
            if h.before is not None:
                h.before()
            if h.stats is not None:
                h.stats.requests += 1
            t0 = time.perf_counter()
            try:
                result = call()
            except TransientError as err:
                spent = time.perf_counter() - t0
                waited += spent
                if h.stats is not None:
                    h.stats.seconds += spent
                final = final_error(who, err)
                if final is not None:
                    raise final from None
                if h.on_transient is not None:
                    h.on_transient(err)
                delay = self.delay(attempt, err.retry_after, rng)
                if self.gives_up(attempt, waited, delay):
                    error = (
                        gave_up(err, attempt, waited)
                        if gave_up is not None
                        else self.exhausted(who, err, attempt, waited, rate_fix)
                    )
                    raise error from (err if chain else None)
                h.sleep(delay)
                waited += delay
                attempt += 1
                if h.stats is not None:
                    h.stats.retries += 1
                if h.on_retry is not None:
                    h.on_retry()
                continue
            if h.stats is not None:
                h.stats.seconds += time.perf_counter() - t0
            return result


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
