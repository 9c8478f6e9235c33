"""check-index's report folder: ``check-index.md`` and its cosine histogram.

The same sections as the check-index part of ``report.html``/``report.md`` (one builder,
:mod:`.builders`), rendered by the shared Markdown renderer: there is one way to turn a
check-index result into a report.
"""

from __future__ import annotations

from pathlib import Path

from ..core.check_index import IntegrityResult
from .builders import Builder
from .markdown import markdown


def write_report(result: IntegrityResult, folder: Path) -> list[Path]:
    """Write check-index.md and its plot into ``folder``; returns [md, *plots]."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    before = set(folder.glob("*.png"))
    sections = Builder(folder, numbered=False).sections(result.to_dict())
    verdict = "PASS" if result.ok else "FAIL"
    md = folder / "check-index.md"
    md.write_text(markdown("indexcheck check-index", verdict, sections, folder), encoding="utf-8")
    return [md, *sorted(set(folder.glob("*.png")) - before)]
