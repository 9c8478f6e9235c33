"""The terminal (rich) renderer of report sections: the summary every command prints.

It renders the sections a result flags ``terminal=True`` through the same neutral
structure as the Markdown and HTML renderers; every value goes through
:func:`indexcheck.safety.textsafe.escape_rich`, so data never becomes markup.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table as RichTable

from ...safety.textsafe import escape_rich
from ..model import Code, Image, Plot, Section, Table, Text, V, fmt

STYLE = {
    "PASS": "bold green",
    "FAIL": "bold red",
    "BLOCK": "bold red",
    "INSUFFICIENT_EVIDENCE": "bold yellow",
    "ASSUMED": "bold yellow",
    "CANNOT_FAIL": "bold yellow",
    "error": "red",
    "warning": "yellow",
    "note": "yellow",
}


def _badge(word: str) -> str:
    style = STYLE.get(word)
    return f"[{style}]{escape_rich(word)}[/{style}]" if style else escape_rich(word)


def _cell(v: Any) -> str:
    return _badge(str(v)) if isinstance(v, V) else escape_rich(fmt(v))


def render(sections: list[Section], console: Console) -> None:
    """Print ``sections`` (titles as rules only when they have one) to ``console``."""
    for sec in sections:
        if sec.title:
            console.rule(escape_rich(sec.title))
        for b in sec.blocks:
            if isinstance(b, Text):
                lead = f"{_badge(b.badge)} " if b.badge else ""
                text = escape_rich(b.text)
                if b.style in STYLE:
                    text = f"[{STYLE[b.style]}]{text}[/]"
                console.print(lead + text, soft_wrap=b.whole)
            elif isinstance(b, Table):
                table = RichTable(title=escape_rich(b.caption) if b.caption else None)
                for h in b.headers:
                    table.add_column(
                        escape_rich(h), justify="right" if h in b.right else "left", overflow="fold"
                    )
                for row in b.rows:
                    table.add_row(*[_cell(v) for v in row])
                console.print(table)
            elif isinstance(b, Code):
                console.print(escape_rich(b.summary))
            elif isinstance(b, Image | Plot):
                continue  # figures live in the report folder


__all__ = ["STYLE", "render"]
