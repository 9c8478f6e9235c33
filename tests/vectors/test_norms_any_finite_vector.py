"""Norms and unit vectors of any finite vector: no overflow past float32's range, no
underflow to zero, the direction kept."""

from __future__ import annotations

import numpy as np
import pytest

from indexcheck.vectors import absurd_magnitude, normalize_rows, row_norms


@pytest.mark.parametrize("scale", [1e-40, 1e-25, 1e-10, 1.0, 1e10, 1e25, 3e38])
def test_a_scaled_vector_keeps_its_direction(scale: float) -> None:
    rng = np.random.default_rng(0)
    v = rng.standard_normal((5, 384)).astype(np.float32)
    unit = v / np.linalg.norm(v.astype(np.float64), axis=1, keepdims=True)
    scaled = (v.astype(np.float64) * scale / np.abs(v).max()).astype(np.float32)
    got = normalize_rows(scaled)
    assert got.dtype == np.float32
    assert np.allclose((got * unit).sum(axis=1), 1, atol=1e-5)
    norms = row_norms(scaled)
    assert np.all(np.isfinite(norms)) and np.all(norms > 0)


def test_zeros_stay_zero_and_one_vector_is_one_row() -> None:
    assert not normalize_rows(np.zeros((2, 4), np.float32)).any()
    assert np.allclose(normalize_rows(np.array([3e30, 4e30], np.float32)), [0.6, 0.8])


def test_only_lengths_outside_the_range_are_absurd() -> None:
    x = np.ones((4, 8), np.float32) * np.array([[1e-35], [1.0], [1e25], [1e35]], np.float32)
    assert absurd_magnitude(x).tolist() == [True, False, False, True]
