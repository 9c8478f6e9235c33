"""One retry policy for every remote call: embedders and stores share it.

Exponential backoff with full jitter, or the server's ``Retry-After`` when it sends one.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter: delay_i = U(0, min(cap, base * 2**i)),
    or the server's Retry-After when it sends one."""

    max_retries: int = 6
    base_delay: float = 0.5
    max_delay: float = 20.0

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        if retry_after is not None:
            return min(self.max_delay, max(0.0, retry_after))
        return rng.uniform(0, min(self.max_delay, self.base_delay * (2**attempt)))
