"""One report from any indexcheck result dicts: a self-contained HTML page and Markdown.

Renderers only: the sections come from :mod:`.builders`, Markdown from :mod:`.markdown`.

``write_report(payloads, folder)`` takes the ``to_dict()`` of check-index, probe-scale,
sweep-threshold, compare-ann, diagnose or ci results (a ci result renders the results of
every check it ran) and writes ``report.html``, ``report.md`` and the PNG plots. The HTML
needs nothing else: CSS is inline, plots are base64 ``data:`` URIs, and a
Content-Security-Policy forbids every request, so it reads the same offline. Each result
shows its verdict, its plots, its worst cases and its manifest (versions, fingerprints,
seed, time and embedding cost).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...safety.redact import scrub
from ...safety.textsafe import escape_html, xml_safe
from ..files import write_atomic
from ..model import Section, V
from ..registry import kind_of
from .blocks import blocks_html, cell_html
from .builders import Builder
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


def _html(title: str, verdict: str, sections: list[Section]) -> str:
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape_html(title)}</title><style>{CSS}{JUDGE_CSS}</style></head><body><main>",
        f"<h1>{escape_html(title)}</h1>",
        f'<div class="banner b-{verdict}">Verdict: {verdict}</div>',
        "<table><tr><th>section</th><th>verdict</th></tr>",
    ]
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


def write_report(
    payloads: Sequence[Mapping[str, Any] | Any], folder: Path, title: str = "indexcheck report"
) -> list[Path]:
    """Write ``report.html`` (self-contained), ``report.md`` and PNG plots into ``folder``.

    ``payloads``: result dicts (``to_dict()`` or the ``--json`` file of any command) or
    result objects (their ``sections()``).
    Returns [report.html, report.md, *plots]. Raises InputError for a dict that is not
    an indexcheck result.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    builder = Builder(folder)
    sections: list[Section] = []
    for p in payloads:
        sections += builder.sections(p) if isinstance(p, Mapping) else builder.of(p)
    for i, s in enumerate(sections):
        s.anchor = f"s{i + 1}"
    order = {
        "PASS": 0,
        "ASSUMED": 1,
        "CANNOT_FAIL": 1,
        "INSUFFICIENT_EVIDENCE": 2,
        "FAIL": 3,
        "BLOCK": 3,
    }
    verdicts = [s.verdict for s in sections if s.verdict]
    overall = max(verdicts, key=order.__getitem__, default="PASS")
    if overall == "FAIL" and any(
        kind_of(p if isinstance(p, Mapping) else p.to_dict()) == "ci" for p in payloads
    ):
        overall = "BLOCK"
    page = folder / "report.html"
    write_atomic(page, _html(title, overall, sections))
    md = folder / "report.md"
    write_atomic(md, markdown(title, overall, sections, folder))
    plots = sorted(p for p in folder.rglob("*.png"))
    return [page, md, *plots]


__all__ = ["kind_of", "write_report"]
