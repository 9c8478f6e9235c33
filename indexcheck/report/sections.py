"""The neutral report structure, re-exported for the renderers (it lives in
:mod:`indexcheck.sections` so the core can build sections without importing a renderer)."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.sections import KINDS, kind_of
from ..sections import (
    WORST_ROWS,
    Code,
    Fragment,
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


@dataclass
class Html:
    """A fragment whose data its producer already escaped (report/claims.py), with its
    Markdown twin; what a :class:`~indexcheck.sections.Fragment` becomes in a report."""

    html: str
    markdown: str


__all__ = [
    "KINDS",
    "WORST_ROWS",
    "Code",
    "Fragment",
    "Html",
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
