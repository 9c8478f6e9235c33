"""The report pages: a self-contained HTML page and its Markdown twin, for one command's
result (``write_pages``: every command's ``--report``) or for several (``write_report``).

Both pages lead with the verdict and the root cause (:func:`lead_line`), then the rows to
act on (the result's terminal summary), then its report sections. The sections come from
:mod:`.builders`, the Markdown from :mod:`.markdown`.

``write_report(payloads, folder)`` takes the ``to_dict()`` of check-index, probe-scale,
sweep-threshold, compare-ann, diagnose or ci results (a ci result renders the results of
every check it ran) and writes ``report.html``, ``report.md`` and the PNG plots. The HTML
needs nothing else: CSS is inline, plots are base64 ``data:`` URIs, and a
Content-Security-Policy forbids every request, so it reads the same offline. Each result
shows its verdict, its plots, its worst cases and its manifest (versions, fingerprints,
seed, time and embedding cost).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...safety.redact import scrub
from ...safety.textsafe import escape_html, xml_safe
from ..files import write_atomic
from ..model import Image, Section, Text, V, ok_verdict, terminal
from ..registry import kind_of
from .blocks import blocks_html, cell_html
from .builders import Builder, result_sections
from .claims import CSS as JUDGE_CSS
from .markdown import markdown

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
CSS = """
body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1f2328;
background:#fff;margin:0}
main{max-width:1180px;margin:0 auto;padding:24px 32px 64px}
h1{font-size:26px;margin:0 0 8px}h2{font-size:20px;margin:36px 0 8px;border-bottom:1px solid
#d0d7de;padding-bottom:4px}h3{font-size:16px;margin:20px 0 6px}
table{border-collapse:collapse;margin:8px 0 12px;font-size:13px}
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}tr:nth-child(even) td{background:#fbfcfd}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.v{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600;font-size:12px}
.v-PASS{background:#dafbe1;color:#116329}.v-BLOCK,.v-FAIL{background:#ffebe9;color:#a40e26}
.v-INSUFFICIENT_EVIDENCE,.v-ASSUMED,.v-CANNOT_FAIL{background:#fff8c5;color:#7d4e00}
.banner{padding:14px 18px;border-radius:8px;font-size:18px;font-weight:600;margin:12px 0}
.b-PASS{background:#dafbe1;color:#116329}.b-BLOCK,.b-FAIL{background:#ffebe9;color:#a40e26}
.b-INSUFFICIENT_EVIDENCE,.b-ASSUMED,.b-CANNOT_FAIL{background:#fff8c5;color:#7d4e00}
img{max-width:100%;height:auto;border:1px solid #d0d7de;margin:6px 0}
pre{background:#f6f8fa;padding:10px;overflow:auto;font-size:12px}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
p.note{color:#57606a}
"""


def _html(title: str, verdict: str, sections: list[Section], lead: str | None = None) -> str:
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape_html(title)}</title><style>{CSS}{JUDGE_CSS}</style></head><body><main>",
        f"<h1>{escape_html(title)}</h1>",
        f'<div class="banner b-{verdict}">Verdict: {verdict}</div>',
    ]
    if lead:
        out.append(f'<p class="lead">{escape_html(lead)}</p>')
    out.append("<table><tr><th>section</th><th>verdict</th></tr>")
    for s in sections:
        if s.verdict:
            out.append(
                f'<tr><td><a href="#{s.anchor}">{escape_html(s.title)}</a></td>'
                f"{cell_html(V(s.verdict))}</tr>"
            )
    out.append("</table>")
    for s in sections:
        badge = f' <span class="v v-{s.verdict}">{s.verdict}</span>' if s.verdict else ""
        out.append(f'<h2 id="{s.anchor}">{escape_html(s.title)}{badge}</h2>')
        out += blocks_html(s.blocks)
    out.append("</main></body></html>")
    # the last step: no secret in use, and no character XML 1.0 forbids (so the page
    # parses as XHTML too and no encoder chokes on a lone surrogate from a file name)
    return xml_safe(scrub("\n".join(out) + "\n"))


def first_sentence(text: str) -> str:
    """``text`` up to its first full stop (or question or exclamation mark) that ends a
    sentence: one followed by a space or the end, so "0.9" and "v1.2" stay whole."""
    text = " ".join(str(text).split())
    end = _SENTENCE_END.search(text)
    return text[: end.start() + 1] if end else text


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def lead_line(result: Any) -> str | None:
    """What a page says under its verdict, the root cause first: the first sentence of the
    terminal summary's first error finding, else of its verdict line, else of its first
    line; for a result dict, of its first finding's message."""
    if isinstance(result, Mapping):
        findings = result.get("findings") or []
        return first_sentence(findings[0]["message"]) if findings else None
    lines = [
        b
        for sec in _summary(result)
        for b in sec.blocks
        if isinstance(b, Text) and b.text.strip() and not b.text.startswith("...")
    ]
    for pick in (
        lambda b: b.badge == "error",
        lambda b: b.badge in VERDICTS,
        lambda b: b.badge == "warning",
        lambda b: True,
    ):
        b = next((b for b in lines if pick(b)), None)
        if b is not None:
            said = first_sentence(b.text)
            return said if b.badge in (None, *VERDICTS) else f"{b.badge}: {said}"
    return None


def _summary(result: Any) -> list[Section]:
    """A result object's terminal summary as a page section: the rows a user acts on."""
    if isinstance(result, Mapping):
        return []
    shown = [s for s in terminal(result_sections(result)) if s.blocks]
    return [Section("summary: what to act on", None, [b for s in shown for b in s.blocks])]


#: verdicts in order of severity; a page's overall verdict is its worst
VERDICTS = {
    "PASS": 0,
    "ASSUMED": 1,
    "CANNOT_FAIL": 1,
    "INSUFFICIENT_EVIDENCE": 2,
    "FAIL": 3,
    "BLOCK": 3,
}


def _write(
    folder: Path, name: str, title: str, verdict: str, sections: list[Section], lead: str | None
) -> list[Path]:
    """Write NAME.html and NAME.md of ``sections`` under one ``verdict`` and ``lead`` line;
    returns [html, md]."""
    for i, s in enumerate(sections):
        s.anchor = f"s{i + 1}"
    page = folder / f"{name}.html"
    write_atomic(page, _html(title, verdict, sections, lead))
    md = folder / f"{name}.md"
    write_atomic(md, markdown(title, verdict, sections, folder, lead))
    return [page, md]


def write_report(
    payloads: Sequence[Mapping[str, Any] | Any],
    folder: Path,
    title: str = "indexcheck report",
    name: str = "report",
    lead: str | None = None,
) -> list[Path]:
    """Write ``NAME.html`` (self-contained), ``NAME.md`` and PNG plots into ``folder``.

    ``payloads``: result dicts (``to_dict()`` or the ``--json`` file of any command) or
    result objects (their ``sections()``; one result object also gives its terminal
    summary, first). ``lead``: the line under the verdict (default :func:`lead_line`).
    Returns [NAME.html, NAME.md, *plots]. Raises InputError for a dict that is not an
    indexcheck result.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    builder = Builder(folder)
    sections: list[Section] = []
    for p in payloads:
        sections += builder.sections(p) if isinstance(p, Mapping) else builder.of(p)
    verdicts = [s.verdict for s in sections if s.verdict]
    overall = max(verdicts, key=VERDICTS.__getitem__, default="PASS")
    if overall == "FAIL" and any(
        kind_of(p if isinstance(p, Mapping) else p.to_dict()) == "ci" for p in payloads
    ):
        overall = "BLOCK"
    one = payloads[0] if len(payloads) == 1 else {}
    lead = lead or lead_line(one)
    pages = _write(folder, name, title, overall, _summary(one) + sections, lead)
    return [*pages, *sorted(folder.rglob("*.png"))]


#: verdicts a page shows as they are: a check that cannot fail, or too few queries to tell
_QUALIFIED = ("CANNOT_FAIL", "INSUFFICIENT_EVIDENCE")


def write_pages(result: Any, folder: str | Path, name: str, title: str | None = None) -> list[Path]:
    """A command's ``--report`` pages: ``NAME.html`` (self-contained) and ``NAME.md`` with
    the verdict and the root cause first, then the terminal summary's rows, then the
    result's report sections; its plots (``STEM.png``) beside them. ``result``: a result
    object or its dict. Returns [NAME.html, NAME.md, *plots]."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    sections = Builder(folder, numbered=False).of(result)
    plots = [b.path for s in sections for b in s.blocks if isinstance(b, Image)]
    verdict = ok_verdict(result.get("ok") if isinstance(result, Mapping) else result.ok)
    own = sections[0].verdict if sections else None
    if own in _QUALIFIED:  # the command's own verdict says more than PASS or FAIL
        verdict = own
    pages = _write(
        folder,
        name,
        title or f"indexcheck {name}",
        verdict,
        _summary(result) + sections,
        lead_line(result),
    )
    return [*pages, *plots]


def sweep_report(result: Any, folder: str | Path) -> list[Path]:
    """sweep-threshold's ``--report``: its pages (``sweep-threshold.html`` and ``.md``, as
    every command writes them) and its score plots (PNG, paths into ``result.plots``);
    returns the files."""
    pages = write_pages(result, Path(folder), "sweep-threshold")
    result.plots = [str(p) for p in pages if p.suffix == ".png"]
    return pages


__all__ = [
    "VERDICTS",
    "first_sentence",
    "kind_of",
    "lead_line",
    "sweep_report",
    "write_pages",
    "write_report",
]
