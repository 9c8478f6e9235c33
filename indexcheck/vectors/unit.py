"""Small float32 vector helpers shared by stores, embedders and checks.

Norms are computed on each row divided by its largest component (in float64), so that no
finite vector overflows or underflows: a float32 vector scaled to 1e25 has squares past
float32's range (3.4e38), one scaled to 1e-25 squares that round to zero. A stored vector
whose length lies outside :data:`NORM_RANGE` is reported as an absurd magnitude.
"""

from __future__ import annotations

import numpy as np

#: the lengths a stored vector may have and still be taken as a direction; outside it
#: (finite, not zero) check-index reports ``absurd_magnitude`` for the chunk
NORM_RANGE = (1e-30, 1e30)


def _scaled(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row of ``x`` in float64 divided by its largest absolute component, and that
    component (1 for an all-zero or non-finite row, which are left as they are)."""
    x64 = np.asarray(x, dtype=np.float64)
    if x64.size == 0:
        return x64, np.ones(x64.shape[:-1] + (1,))
    with np.errstate(invalid="ignore", over="ignore"):
        top = np.max(np.abs(x64), axis=-1, keepdims=True)
    top = np.where(np.isfinite(top) & (top > 0), top, 1.0)
    return x64 / top, top


def row_norms(x: np.ndarray) -> np.ndarray:
    """The L2 length of each row of ``(n, d)`` (or of one ``(d,)`` vector), float64, with
    neither overflow nor underflow for any finite input."""
    y, top = _scaled(x)
    out: np.ndarray = np.linalg.norm(y, axis=-1) * top[..., 0]
    return out


def absurd_magnitude(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` (finite, not all zeros) whose length lies outside :data:`NORM_RANGE`."""
    norms = row_norms(x)
    low, high = NORM_RANGE
    with np.errstate(invalid="ignore"):
        out: np.ndarray = np.isfinite(norms) & (norms > 0) & ((norms < low) | (norms > high))
    return out


def normalize_rows(x: np.ndarray) -> np.ndarray:
    """Unit-normalise the rows of float32 ``(n, d)`` (or one ``(d,)`` vector); zeros stay
    zero; any finite row, however long or short, keeps its direction."""
    x = np.asarray(x)
    dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.dtype(np.float32)
    y, _ = _scaled(x)
    norms = np.linalg.norm(y, axis=-1, keepdims=True)
    unit = np.divide(y, norms, out=np.zeros_like(y), where=norms > 0)
    out: np.ndarray = unit.astype(dtype, copy=False)
    return out
