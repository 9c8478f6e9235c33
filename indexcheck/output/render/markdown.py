"""The Markdown renderer of report sections (``report.md``); every value goes through
:func:`indexcheck.safety.textsafe.escape_md`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...safety.redact import scrub
from ...safety.textsafe import escape_html, escape_md
from ..model import Code, Image, Section, Table, Text, V, fmt
from .html_fragments import Html


def md_cell(v: Any) -> str:
    return f"**{escape_md(v)}**" if isinstance(v, V) else escape_md(fmt(v))


def markdown(
    title: str, verdict: str, sections: list[Section], folder: Path, lead: str | None = None
) -> str:
    out = [f"# {title}", "", f"**Verdict: {verdict}**", ""]
    out += [escape_md(lead), ""] if lead else []
    out += ["| section | verdict |", "|---|---|"]
    out += [f"| {escape_md(s.title)} | **{s.verdict}** |" for s in sections if s.verdict]
    for s in sections:
        out += ["", f"## {escape_md(s.title)}" + (f" — {s.verdict}" if s.verdict else ""), ""]
        for b in s.blocks:
            if isinstance(b, Html):
                out += [b.markdown, ""]
            elif isinstance(b, Text):
                lead = f"**{escape_md(b.badge)}** " if b.badge else ""
                out += [lead + escape_md(b.text), ""]
            elif isinstance(b, Image):
                out += [f"![{b.alt}]({b.path.relative_to(folder).as_posix()})", ""]
            elif isinstance(b, Code):
                out += [
                    f"<details><summary>{escape_html(b.summary)}</summary>",
                    "",
                    "```json",
                    b.text,
                    "```",
                    "",
                    "</details>",
                    "",
                ]
            elif isinstance(b, Table):
                if b.caption:
                    out += [f"### {escape_md(b.caption)}", ""]
                if not b.rows:
                    out += ["None.", ""]
                    continue
                out.append("| " + " | ".join(escape_md(h) for h in b.headers) + " |")
                out.append("|" + "---|" * len(b.headers))
                out += ["| " + " | ".join(md_cell(v) for v in row) + " |" for row in b.rows]
                out.append("")
    return scrub("\n".join(out) + "\n")
