"""The neutral report structure every renderer reads: sections of tables, text, plots, code.

A section builder (:mod:`.builders`) turns a result into :class:`Section` objects once;
:mod:`.html` and :mod:`.markdown` render the same sections, escaping every value that came
from user data (:mod:`indexcheck.textsafe`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError

KINDS = ("ci", "check-index", "probe-scale", "sweep-threshold", "compare-ann", "diagnose", "judge")
WORST_ROWS = 20
PALETTE = {"blue": "#4C72B0", "orange": "#DD8452", "red": "#C44E52", "green": "#55A868"}


@dataclass
class Table:
    headers: list[str]
    rows: list[list[Any]]
    caption: str = ""


@dataclass
class Image:
    path: Path
    alt: str


@dataclass
class Text:
    text: str


@dataclass
class Code:
    summary: str
    text: str


@dataclass
class Html:
    """A fragment whose data its producer already escaped (report/judge.py), with its
    Markdown twin."""

    html: str
    markdown: str


@dataclass
class Section:
    title: str
    verdict: str | None
    blocks: list[Any] = field(default_factory=list)
    anchor: str = ""


def kind_of(payload: Mapping[str, Any]) -> str:
    """Which command produced a result dict (its manifest, else its keys)."""
    cmd = (payload.get("manifest") or {}).get("command")
    if cmd in KINDS:
        return str(cmd)
    keys = set(payload)
    for kind, need in (
        ("ci", {"gates", "checks", "verdict"}),
        ("judge", {"answers", "supported_rate", "prompt_version"}),
        ("compare-ann", {"by_fetch", "recommended_fetch"}),
        ("probe-scale", {"transform", "candidates", "pairs"}),
        ("sweep-threshold", {"table", "recommended_threshold"}),
        ("diagnose", {"metrics", "counts", "questions"}),
        ("check-index", {"chunks", "findings", "threshold"}),
    ):
        if need <= keys:
            return kind
    raise InputError("not an indexcheck result: pass the JSON written by --json")


def fmt(x: Any) -> str:
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


class V(str):
    """A verdict cell: rendered as a coloured badge in HTML, bold in Markdown."""


def rank(r: int | None) -> str:
    return "–" if r is None else str(r + 1)


def interval(x: Mapping[str, Any]) -> str:
    if x["difference"] is None:
        return "–"
    return f"{x['difference']:+.3f} [{x['low']:+.3f}, {x['high']:+.3f}]"


__all__ = [
    "KINDS",
    "Html",
    "Code",
    "Image",
    "Section",
    "Table",
    "Text",
    "V",
    "fmt",
    "kind_of",
    "manifest_section",
]
