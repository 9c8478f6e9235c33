"""Sections of a result, ready for a file renderer: built once by the builder registered for
it (each ``commands/<command>/report.py``), plots drawn into the report folder.

``Builder(folder).sections(payload)`` takes any command's result dict (``to_dict()`` or a
``--json`` file) and returns its report sections with every plot drawn once.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..model import Section
from ..model import report as in_report
from ..registry import sections as result_sections
from ..registry import sections_of
from .figures import Figures


class Builder:
    """Report sections with their plots drawn into ``folder`` (numbered when several
    results share the folder)."""

    def __init__(self, folder: Path, numbered: bool = True) -> None:
        self.figures = Figures(folder, numbered)

    def sections(
        self, payload: Mapping[str, Any], verdict: str | None = None, manifest: bool = True
    ) -> list[Section]:
        """A result dict's report sections; ``manifest=False`` leaves its manifest out."""
        return self.figures.draw(sections_of(payload, verdict, manifest))

    def of(self, result: Any) -> list[Section]:
        """A result object's (or dict's) report sections, plots drawn."""
        return self.figures.draw(in_report(result_sections(result)))


__all__ = ["Builder", "result_sections"]
