"""The neutral report structure every renderer reads: sections of tables, text, plots, code.

Each command's result type gives its sections (``result.sections()``); the renderers in
:mod:`indexcheck.output.render` turn the same sections into Markdown, HTML or terminal output,
escaping every value that came from user data (:mod:`indexcheck.safety.textsafe`). This module
imports no renderer (no rich, click or matplotlib), so the core may build sections.

A :class:`Plot` names a figure and carries its data; the report layer draws it
(:class:`indexcheck.output.render.figures.Figures`) and puts an :class:`Image` in its place. A
:class:`Fragment` does the same for a block only the report layer knows how to render.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WORST_ROWS = 20


@dataclass
class Table:
    """Rows of cells; ``right`` names the columns the terminal aligns right."""

    headers: list[str]
    rows: list[list[Any]]
    caption: str = ""
    right: tuple[str, ...] = ()


@dataclass
class Image:
    path: Path
    alt: str


@dataclass
class Plot:
    """A figure the report layer draws: ``name`` picks the drawing, ``stem`` the file."""

    name: str
    data: Mapping[str, Any]
    stem: str
    alt: str


@dataclass
class Fragment:
    """A block the report layer renders from data (e.g. judge's claims tables): ``name``
    picks the renderer in :mod:`indexcheck.output.render.figures`."""

    name: str
    data: Mapping[str, Any]


@dataclass
class Text:
    """A paragraph. ``badge`` (a verdict, error, warning) leads it, styled; ``style`` (the
    same names) colours the whole line in the terminal; ``whole`` keeps it on one line
    there (verdict lines stay whole in logs)."""

    text: str
    badge: str | None = None
    style: str | None = None
    whole: bool = False


@dataclass
class Code:
    summary: str
    text: str


Block = Table | Image | Plot | Fragment | Text | Code


@dataclass
class Section:
    """A titled part of a report. ``report``: shown in report files; ``terminal``: shown
    in the terminal summary (a shorter selection of the same structure)."""

    title: str
    verdict: str | None
    blocks: list[Any] = field(default_factory=list)
    anchor: str = ""
    report: bool = True
    terminal: bool = False


class V(str):
    """A verdict cell: rendered as a coloured badge in HTML and the terminal, bold in Markdown."""

    __slots__ = ()


def fmt(x: Any) -> str:
    """One cell's text: '–' for None, yes/no, 4 significant digits, JSON for containers."""
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.4g}"
    if isinstance(x, list | dict):
        return json.dumps(x, ensure_ascii=False)
    return str(x)


def ok_verdict(ok: Any) -> str:
    return "PASS" if ok else "FAIL"


def flat(d: Mapping[str, Any], prefix: str = "") -> list[list[Any]]:
    """Nested keys as dotted ``[name, value]`` rows."""
    rows: list[list[Any]] = []
    for key, value in d.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            rows += flat(value, name + ".")
        else:
            rows.append([name, value])
    return rows


def manifest_section(m: Mapping[str, Any], title: str) -> Section:
    """Versions, store and fingerprint, seed, time and embedding cost, then the raw JSON."""
    sec = Section(title, None)
    if not m:
        sec.blocks.append(Text("No manifest was recorded."))
        return sec
    sec.blocks.append(Table(["field", "value"], flat(m)))
    sec.blocks.append(Code("manifest as JSON", json.dumps(m, indent=2, ensure_ascii=False)))
    return sec


def rank(r: int | None) -> str:
    """A rank (1-based, as every result holds it); '–' when absent."""
    return "–" if r is None else str(r)


def interval(x: Mapping[str, Any]) -> str:
    if x["difference"] is None:
        return "–"
    return f"{x['difference']:+.3f} [{x['low']:+.3f}, {x['high']:+.3f}]"


def terminal(sections: list[Section]) -> list[Section]:
    """The sections the terminal summary shows."""
    return [s for s in sections if s.terminal]


def report(sections: list[Section]) -> list[Section]:
    """The sections report files show."""
    return [s for s in sections if s.report]


__all__ = [
    "WORST_ROWS",
    "Block",
    "Code",
    "Fragment",
    "Image",
    "Plot",
    "Section",
    "Table",
    "Text",
    "V",
    "flat",
    "fmt",
    "interval",
    "manifest_section",
    "ok_verdict",
    "rank",
    "report",
    "terminal",
]
