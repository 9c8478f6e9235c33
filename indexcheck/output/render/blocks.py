"""A report's blocks as HTML, shared by the report page and a result's notebook summary:
every text, id and cell escaped (data is never markup)."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from ...safety.redact import scrub
from ...safety.textsafe import escape_html, xml_safe
from ..model import Code, Image, Section, Table, Text, V, fmt
from ..registry import register_html
from .html_fragments import Html


def cell_html(v: Any) -> str:
    """One table cell: a verdict as a badge, a number aligned right."""
    if isinstance(v, V):
        return f'<td><span class="v v-{escape_html(v)}">{escape_html(v)}</span></td>'
    num = isinstance(v, int | float) and not isinstance(v, bool)
    return f"<td{' class=num' if num else ''}>{escape_html(fmt(v))}</td>"


def blocks_html(blocks: Sequence[Any]) -> list[str]:
    """A section's blocks as HTML, every text, id and cell escaped (an :class:`Html`
    fragment is escaped by its producer)."""
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Html):
            out.append(b.html)
        elif isinstance(b, Text):
            lead = f'<span class="v v-{escape_html(b.badge)}">{escape_html(b.badge)}</span> '
            out.append(f"<p>{lead if b.badge else ''}{escape_html(b.text)}</p>")
        elif isinstance(b, Image):
            data = base64.b64encode(b.path.read_bytes()).decode("ascii")
            out.append(f'<img alt="{escape_html(b.alt)}" src="data:image/png;base64,{data}">')
        elif isinstance(b, Code):
            out.append(
                f"<details><summary>{escape_html(b.summary)}</summary>"
                f"<pre><code>{escape_html(b.text)}</code></pre></details>"
            )
        elif isinstance(b, Table):
            if b.caption:
                out.append(f"<h3>{escape_html(b.caption)}</h3>")
            if not b.rows:
                out.append('<p class="note">None.</p>')
                continue
            head = "".join(f"<th>{escape_html(h)}</th>" for h in b.headers)
            body = "".join("<tr>" + "".join(cell_html(v) for v in row) + "</tr>" for row in b.rows)
            out.append(f"<table><tr>{head}</tr>{body}</table>")
    return out


def summary_html(title: str, verdict: str, sections: Sequence[Section]) -> str:
    """A result's summary as an HTML fragment (a notebook cell's output): ``title``, the
    ``verdict`` and the ``sections``' text and tables, all data escaped; no script, no
    request."""
    style = "<style>" + _NOTEBOOK_CSS + "</style>"
    out = [f'<div class="indexcheck">{style}<h3>{escape_html(title)} ']
    out.append(f'<span class="v v-{escape_html(verdict)}">{escape_html(verdict)}</span></h3>')
    for s in sections:
        badge = f' <span class="v v-{escape_html(s.verdict)}">{escape_html(s.verdict)}</span>'
        out.append(f"<h4>{escape_html(s.title)}{badge if s.verdict else ''}</h4>")
        out += blocks_html(s.blocks)
    out.append("</div>")
    return xml_safe(scrub("\n".join(out)))


#: the report's badge and table styles, scoped to the fragment (a notebook page is shared)
_NOTEBOOK_CSS = (
    ".indexcheck table{border-collapse:collapse;font-size:13px}"
    ".indexcheck th,.indexcheck td{border:1px solid #d0d7de;padding:2px 6px;text-align:left}"
    ".indexcheck td.num{text-align:right}"
    ".indexcheck .v{padding:1px 6px;border-radius:8px;font-weight:600;font-size:12px}"
    ".indexcheck .v-PASS{background:#dafbe1;color:#116329}"
    ".indexcheck .v-FAIL,.indexcheck .v-BLOCK{background:#ffebe9;color:#a40e26}"
    ".indexcheck .v-INSUFFICIENT_EVIDENCE,.indexcheck .v-ASSUMED{background:#fff8c5;"
    "color:#7d4e00}"
)


register_html(summary_html)

__all__ = ["blocks_html", "cell_html", "summary_html"]
