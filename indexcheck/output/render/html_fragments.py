"""What a :class:`~indexcheck.output.model.Fragment` becomes in a report: :class:`Html`. The
neutral report structure itself lives in :mod:`indexcheck.output.model` (so the core can build
sections without importing a renderer); the renderers import it from there."""

from __future__ import annotations

from dataclasses import dataclass

from ..registry import KINDS, kind_of


@dataclass
class Html:
    """A fragment whose data its producer already escaped (report/claims.py), with its
    Markdown twin; what a :class:`~indexcheck.output.model.Fragment` becomes in a report."""

    html: str
    markdown: str


__all__ = ["KINDS", "Html", "kind_of"]
