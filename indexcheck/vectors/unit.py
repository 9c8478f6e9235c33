"""Small float32 vector helpers shared by stores, embedders and checks."""

from __future__ import annotations

import numpy as np


def normalize_rows(x: np.ndarray) -> np.ndarray:
    """Unit-normalise the rows of float32 ``(n, d)`` (or one ``(d,)`` vector); zeros stay zero."""
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    out: np.ndarray = np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)
    return out
