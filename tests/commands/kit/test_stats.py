"""Wilson and bootstrap intervals against hand-computed values and properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from indexcheck.commands.kit.stats import bootstrap_mean, wilson


def test_wilson_known_values() -> None:
    r = wilson(39, 39)
    assert r.value == 1.0 and r.high == 1.0
    assert r.low == pytest.approx(0.9103, abs=1e-4)  # by hand: 0.95517 - 0.04483
    r = wilson(9, 39)
    assert r.value == pytest.approx(9 / 39)
    # independently: the roots of (p - x)^2 = z^2 x (1 - x) / n, a quadratic in x
    p, n, z2 = 9 / 39, 39, 1.959963984540054**2
    a, b, c = 1 + z2 / n, -(2 * p + z2 / n), p * p
    disc = (b * b - 4 * a * c) ** 0.5
    assert r.low == pytest.approx((-b - disc) / (2 * a), abs=1e-12)
    assert r.high == pytest.approx((-b + disc) / (2 * a), abs=1e-12)
    assert wilson(0, 0).value is None


@given(st.integers(0, 500), st.integers(1, 500))
def test_wilson_bounds_contain_the_estimate(k: int, n: int) -> None:
    k = min(k, n)
    r = wilson(k, n)
    assert r.low is not None and r.high is not None and r.value is not None
    assert 0.0 <= r.low <= r.value <= r.high <= 1.0


def test_bootstrap_mean_is_seeded_and_brackets_the_mean() -> None:
    x = np.random.default_rng(1).random(50)
    a, b = bootstrap_mean(x, seed=3), bootstrap_mean(x, seed=3)
    assert a == b
    m, lo, hi = a
    assert lo is not None and hi is not None and m is not None and lo <= m <= hi
