"""The judge's terminal summary: the claims per answer, coloured by final verdict, then the
counts, the supported rate and what went unjudged (``indexcheck judge``, and the summary an
:mod:`indexcheck.testing.assertions` failure quotes)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ...commands.judge import AnswerStatus, JudgeResult
from ...commands.judge.answer_checks import checks_line
from ...commands.judge.claims import ClaimVerdict
from ...safety.textsafe import escape_rich as escape

VERDICT_STYLE = {
    "SUPPORTED": "green",
    "PARTIALLY_SUPPORTED": "yellow",
    "UNSUPPORTED": "red",
    "CONTRADICTED": "bold red",
    "NOT_EVALUABLE": "magenta",
}


def render(result: JudgeResult, console: Console) -> None:
    """Claims per answer coloured by final verdict, then the counts and the supported rate."""
    table = Table(title=f"claims judged by {escape(result.judge)} (prompt {result.prompt_version})")
    for col in ("answer", "claim", "judge", "final", "span", "citation"):
        table.add_column(col, overflow="fold")  # an id is shown whole, never cut
    for a in result.answers:
        if a.status is not AnswerStatus.JUDGED:
            table.add_row(escape(a.id), f"[dim]{a.status.value}[/dim]", "", "", "", "")
            continue
        for c in a.claims:
            style = VERDICT_STYLE[c.verdict.value]
            span = {True: "found", False: "NOT FOUND", None: "-"}[c.span_found]
            table.add_row(
                escape(a.id), escape(c.claim), c.judge_verdict.value,
                f"[{style}]{c.verdict.value}[/{style}]", span, c.citation_status.value,
            )  # fmt: skip
    console.print(table)
    counts = ", ".join(f"{v.value} {result.counts[v.value]}" for v in ClaimVerdict)
    console.print(f"claims: {counts}")
    console.print(", ".join(f"{k} {n}" for k, n in result.statuses.items()) + " answers")
    r = result.supported_rate
    if r["value"] is None:
        console.print("supported rate: no claims judged")
    else:
        console.print(
            f"supported rate {r['k']}/{r['n']} = {r['value']:.3f} "
            f"[95% Wilson {r['low']:.3f}, {r['high']:.3f}] over the answers given"
        )
    if result.unjudged:
        ids = ", ".join(escape(i) for i in result.unjudged[:10])
        console.print(f"[red]UNJUDGED[/red] (reply never parsed): {ids}")
    if result.answer_checks is not None:
        console.print(escape(checks_line(result.answer_checks)))
    if result.sheet:
        console.print(f"evidence sheet: run {escape(str(result.sheet['run_id']))}")
    tag = "[bold green]PASS[/bold green]" if result.ok else "[bold red]FAIL[/bold red]"
    console.print(f"{tag} every judged claim supported and nothing unjudged: {result.ok}")


__all__ = ["VERDICT_STYLE", "render"]
