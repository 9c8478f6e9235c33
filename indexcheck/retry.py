"""One retry policy for every remote call: embedders and stores share it.

Exponential backoff with full jitter, or the server's ``Retry-After`` when it sends one.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


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
