"""Intervals for rates and means: Wilson for proportions, percentile bootstrap for means."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Rate:
    """``k`` successes out of ``n`` with a two-sided 95% Wilson interval [low, high]."""

    k: int
    n: int
    value: float | None
    low: float | None
    high: float | None

    def as_dict(self) -> dict[str, float | int | None]:
        return {"k": self.k, "n": self.n, "value": self.value, "low": self.low, "high": self.high}


def wilson(k: int, n: int, z: float = 1.959963984540054) -> Rate:
    """Wilson score interval for k/n (None values when n == 0); bounds stay in [0, 1]."""
    if n == 0:
        return Rate(k, n, None, None, None)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return Rate(k, n, p, low, high)


def bootstrap_mean(
    values: np.ndarray, seed: int = 0, resamples: int = 2000, level: float = 0.95
) -> tuple[float | None, float | None, float | None]:
    """(mean, low, high): percentile bootstrap interval of the mean of float (n,) values."""
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return None, None, None
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(resamples, x.size))
    means = x[idx].mean(axis=1)
    a = (1 - level) / 2
    return float(x.mean()), float(np.quantile(means, a)), float(np.quantile(means, 1 - a))


def fault_rate_upper(k: int, n: int, level: float = 0.95) -> float | None:
    """Exact one-sided (Clopper-Pearson) upper bound on a rate after k faults in n draws.

    0 of 100 gives 0.0295 (< 3.0%): the largest rate p with P(X <= k | n, p) >= 1 - level.
    None when n == 0. Found by bisection on the binomial CDF (no scipy needed).
    """
    if n == 0:
        return None
    if k >= n:
        return 1.0
    alpha = 1 - level
    if k == 0:
        return float(1 - alpha ** (1 / n))

    def cdf(p: float) -> float:
        term = (1 - p) ** n
        total = term
        for i in range(1, k + 1):
            term *= (n - i + 1) / i * p / (1 - p)
            total += term
        return total

    lo, hi = k / n, 1.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if cdf(mid) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def sample_size_for(max_rate: float, level: float = 0.95) -> int:
    """Random draws that, with no fault found, bound the fault rate under ``max_rate``
    (about 3 / max_rate at 95%)."""
    return int(math.ceil(math.log(1 - level) / math.log(1 - max_rate)))
