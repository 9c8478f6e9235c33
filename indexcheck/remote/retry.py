"""One retry policy and one retry loop for every remote call: stores, embedders and judges.

Exponential backoff with full jitter, or the server's ``Retry-After`` when it sends one.

Only what may succeed on a second try is retried: before every retry the one loop,
:meth:`RetryPolicy.run`, asks :func:`indexcheck.remote.http.final_error` whether the
failure's cause is one no retry can fix (a malformed request, a final HTTP status), whatever
a provider's rows said.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any, Protocol, TypedDict, TypeVar, Unpack

from ..errors import BackendUnavailableError, RateLimitError, TransientError
from .http import final_error

T = TypeVar("T")


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
