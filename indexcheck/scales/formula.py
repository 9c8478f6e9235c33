"""A score formula over one variable, with its inverse: the shape both catalogues share.

The backend scores of :mod:`.transforms` and the framework relevance scores of
:mod:`.framework_scores` are each a :class:`Transform`; this module is their one home, so
neither catalogue imports the other to describe an entry.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

_Fn = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Transform:
    """A score formula over one variable: ``cos``, ``dot`` or ``l2`` (plain Euclidean).

    ``apply`` maps the variable to the score and ``invert`` back; both take and return
    float arrays of any shape (computed in float64, returned in the input's float dtype).
    ``cos_of_s``/``s_of_cos`` are the conversions as text, valid for ``cos`` always and
    for ``dot``/``l2`` on unit-norm vectors (``cos = dot``, ``l2^2 = 2-2cos``).
    ``monotone`` is False for a formula that turns back on part of the range; its ``inv``
    then follows one branch (the formula's ``cos_of_s`` says which).
    """

    formula: str
    variable: str
    higher_is_better: bool
    fn: _Fn = field(repr=False, compare=False)
    inv: _Fn = field(repr=False, compare=False)
    cos_of_s: str
    s_of_cos: str
    reported_by: str
    monotone: bool = True

    def apply(self, x: np.ndarray) -> np.ndarray:
        """Variable -> score."""
        return _same_dtype(x, self.fn)

    def invert(self, s: np.ndarray) -> np.ndarray:
        """Score -> variable (NaN outside the formula's range)."""
        return _same_dtype(s, self.inv)

    def variable_range(self, normalized: bool) -> tuple[float, float]:
        """Range of the variable: cos [-1, 1]; dot [-1, 1] and l2 [0, 2] on unit vectors."""
        if self.variable == "cos" or (self.variable == "dot" and normalized):
            return -1.0, 1.0
        if self.variable == "dot":
            return -math.inf, math.inf
        return 0.0, 2.0 if normalized else math.inf

    def score_range(self, normalized: bool) -> tuple[float, float]:
        """(low, high) of the score; ``normalized`` means unit-norm queries and vectors."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ends = self.apply(np.asarray(self.variable_range(normalized), dtype=np.float64))
        lo, hi = sorted(float(v) for v in ends)
        return lo, hi


def _same_dtype(x: np.ndarray, fn: _Fn) -> np.ndarray:
    arr = np.asarray(x)
    dtype = arr.dtype if np.issubdtype(arr.dtype, np.floating) else np.dtype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = fn(arr.astype(np.float64))
    return np.asarray(out, dtype=dtype)


def _to_cos(variable: str, x: np.ndarray) -> np.ndarray:
    """cos from the variable, for unit-norm vectors (l2^2 = 2-2cos)."""
    return 1 - x * x / 2 if variable == "l2" else x


def _from_cos(variable: str, c: np.ndarray) -> np.ndarray:
    return np.sqrt(np.clip(2 - 2 * c, 0, None)) if variable == "l2" else c
