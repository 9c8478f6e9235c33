"""Float32 vector helpers every layer shares: stores, embedders and the checks."""

from .unit import normalize_rows

__all__ = ["normalize_rows"]
