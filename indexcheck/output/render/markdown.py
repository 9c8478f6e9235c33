"""The Markdown renderer of report sections (``report.md``); every value goes through
:func:`indexcheck.safety.textsafe.escape_md`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...safety.redact import scrub
from ...safety.textsafe import escape_html, escape_md
from ..files import write_atomic
from ..model import Code, Image, Section, Table, Text, V, fmt
from .html_fragments import Html


def md_cell(v: Any) -> str:
    return f"**{escape_md(v)}**" if isinstance(v, V) else escape_md(fmt(v))


def markdown(title: str, verdict: str, sections: list[Section], folder: Path) -> str:
    out = [f"# {title}", "", f"**Verdict: {verdict}**", "", "| section | verdict |", "|---|---|"]
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


#: verdicts a page shows as they are: a check that cannot fail, or too few queries to tell
_QUALIFIED = ("CANNOT_FAIL", "INSUFFICIENT_EVIDENCE")


def write_markdown(result: Any, folder: Path, name: str, title: str | None = None) -> list[Path]:
    """Write ``NAME.md`` and its plots (``STEM.png``) into ``folder`` from the result's
    report sections; returns [md, *plots]. ``result``: a result object or its dict."""
    from ..model import ok_verdict
    from .builders import Builder

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    sections = Builder(folder, numbered=False).of(result)
    plots = [b.path for s in sections for b in s.blocks if isinstance(b, Image)]
    ok = result.get("ok") if isinstance(result, dict) else result.ok
    verdict = ok_verdict(ok)
    lead = sections[0].verdict if sections else None
    if lead in _QUALIFIED:  # the command's own verdict says more than PASS or FAIL
        verdict = lead
    md = folder / f"{name}.md"
    page = markdown(title or f"indexcheck {name}", verdict, sections, folder)
    write_atomic(md, page)
    return [md, *plots]


def sweep_report(result: Any, folder: str | Path) -> list[Path]:
    """sweep-threshold's ``--report``: its page (``sweep-threshold.md``, as every command
    writes one) and its score plots (PNG, paths into ``result.plots``); returns the files."""
    page = write_markdown(result, Path(folder), "sweep-threshold")
    result.plots = [str(p) for p in page[1:]]
    return page
