"""The claims of a judge result as report fragments: a claims table per answer, each row
coloured by its final verdict and its evidence span highlighted inside its passage, in HTML
and in Markdown (the judge's report, :mod:`.judge`, and the ``claims`` fragment of the shared
report, :mod:`.figures`).

Every id, claim, span and passage text is data, never markup: it goes through
``html.escape`` (HTML) or backslash-escaping (Markdown) before it is written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...safety.textsafe import escape_html, escape_md

#: background and text colour of a claim row, by final verdict
COLOURS = {
    "SUPPORTED": ("#dafbe1", "#116329"),
    "PARTIALLY_SUPPORTED": ("#fff8c5", "#7d4e00"),
    "UNSUPPORTED": ("#ffebe9", "#a40e26"),
    "CONTRADICTED": ("#ff8182", "#4c0010"),
    "NOT_EVALUABLE": ("#eaeef2", "#424a53"),
}
CSS = (
    "".join(f".c-{v}{{background:{bg};color:{fg}}}" for v, (bg, fg) in COLOURS.items())
    + "mark{background:#ffd33d;color:#1f2328;padding:0 1px}"
    + ".passage{font-size:12px;max-width:520px;white-space:pre-wrap}"
)


def _esc(text: Any) -> str:
    """HTML text: escaped, control characters (C0, C1, DEL) shown as ``\\xNN``."""
    return escape_html(text)


def _md(text: Any) -> str:
    """Markdown cell text: no emphasis, links, images, HTML or cell and line breaks (CR
    included: CommonMark ends a line there), control characters shown as ``\\xNN``."""
    flat = str(text).replace("\r\n", " ").replace("\n", " ")
    return re.sub(r"([{}()#+!])", r"\\\1", escape_md(flat))


def _highlight(ev: Mapping[str, Any] | None) -> str:
    """The passage excerpt with the span in <mark>, escaped piece by piece."""
    if not ev or not ev.get("excerpt"):
        return '<span class="note">no span found in the context</span>'
    text, lo = ev["excerpt"], int(ev.get("excerpt_start", 0))
    a, b = int(ev["start"]) - lo, int(ev["end"]) - lo
    head = f"<b>{_esc(ev['passage'])}</b> (rank {_esc(ev.get('rank'))})\n"
    return head + _esc(text[:a]) + "<mark>" + _esc(text[a:b]) + "</mark>" + _esc(text[b:])


def claims_html(payload: Mapping[str, Any]) -> str:
    """The claims tables of a judge result (``to_dict()``/--json) as an HTML fragment."""
    out = []
    for a in payload["answers"]:
        g = a.get("groundedness")
        score = "–" if g is None else f"{g:.2f}"
        out.append(
            f"<h3>{_esc(a['id'])} <small>{_esc(a['status'])}, groundedness {score}</small></h3>"
        )
        if not a["claims"]:
            note = (
                "the answer is a refusal: no claims"
                if a["status"] == "REFUSAL"
                else (
                    f"the judge's reply never parsed ({_esc(a.get('problem'))}); raw reply kept "
                    "in the JSON result"
                )
            )
            out.append(f'<p class="note">{note}</p>')
            continue
        rows = [
            "<table><tr><th>claim</th><th>verdict (judge)</th><th>checks</th>"
            "<th>evidence in its passage</th><th>rationale</th></tr>"
        ]
        for c in a["claims"]:
            v = c["verdict"]
            found = {True: "found", False: "not found", None: "–"}[c["span_found"]]
            checks = [f"span {found}", f"citation: {c['citation_status']}"]
            if c["cited"]:
                checks.append("cited " + ", ".join(c["cited"]))
            if c["numbers_unsupported"]:
                checks.append("numbers not in span: " + ", ".join(c["numbers_unsupported"]))
            if c["numbers_not_in_answer"]:
                checks.append("numbers not in answer: " + ", ".join(c["numbers_not_in_answer"]))
            rows.append(
                f'<tr class="c-{_esc(v)}"><td>{_esc(c["claim"])}</td>'
                f"<td><b>{_esc(v)}</b> ({_esc(c['judge_verdict'])})</td>"
                f"<td>{'<br>'.join(_esc(x) for x in checks)}</td>"
                f'<td class="passage">{_highlight(c.get("evidence"))}</td>'
                f"<td>{_esc(c['rationale'])}</td></tr>"
            )
        rows.append("</table>")
        out.append("".join(rows))
    return "\n".join(out)


def claims_markdown(payload: Mapping[str, Any]) -> str:
    """The claims tables as Markdown; the span is shown in bold inside its excerpt."""
    out: list[str] = []
    for a in payload["answers"]:
        g = a.get("groundedness")
        out += [
            f"### {_md(a['id'])} — {a['status']}, groundedness {'–' if g is None else f'{g:.2f}'}",
            "",
        ]
        if not a["claims"]:
            out += ["No claims.", ""]
            continue
        out += [
            "| claim | verdict | judge | span | citation | evidence |",
            "|---|---|---|---|---|---|",
        ]
        for c in a["claims"]:
            ev = c.get("evidence")
            if ev and ev.get("excerpt"):
                lo = int(ev.get("excerpt_start", 0))
                t, s, e = ev["excerpt"], int(ev["start"]) - lo, int(ev["end"]) - lo
                evidence = f"{_md(ev['passage'])}: {_md(t[:s])}**{_md(t[s:e])}**{_md(t[e:])}"
            else:
                evidence = "–"
            span = {True: "found", False: "NOT FOUND", None: "–"}[c["span_found"]]
            out.append(
                f"| {_md(c['claim'])} | **{c['verdict']}** | {c['judge_verdict']} | {span} | "
                f"{c['citation_status']} | {evidence} |"
            )
        out.append("")
    return "\n".join(out)


__all__ = ["COLOURS", "CSS", "claims_html", "claims_markdown"]
