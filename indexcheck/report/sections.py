"""The neutral report structure, re-exported for the renderers (it lives in
:mod:`indexcheck.sections` so the core can build sections without importing a renderer)."""

from __future__ import annotations

from ..core.sections import KINDS, kind_of
from ..sections import (
    WORST_ROWS,
    Code,
    Image,
    Plot,
    Section,
    Table,
    Text,
    V,
    flat,
    fmt,
    interval,
    manifest_section,
    ok_verdict,
    rank,
)
from .figures import PALETTE

__all__ = [
    "KINDS",
    "PALETTE",
    "WORST_ROWS",
    "Code",
    "Image",
    "Plot",
    "Section",
    "Table",
    "Text",
    "V",
    "flat",
    "fmt",
    "interval",
    "kind_of",
    "manifest_section",
    "ok_verdict",
    "rank",
]
