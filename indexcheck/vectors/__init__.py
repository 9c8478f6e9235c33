"""Float32 vector helpers every layer shares: stores, embedders and the checks."""

from .unit import NORM_RANGE, absurd_magnitude, normalize_rows, row_norms

__all__ = ["NORM_RANGE", "absurd_magnitude", "normalize_rows", "row_norms"]
