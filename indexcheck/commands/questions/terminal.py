"""``questions generate``'s terminal summary: the dry run's cost, or what was written, the
drops per gate and the findings (every path, id and question escaped)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...safety.textsafe import escape_rich as escape
from . import QuestionSetResult
from .output import sidecar_path


def questions_summary(result: QuestionSetResult, console: Any) -> None:
    """The dry run's cost, or what was written, the drops per gate and the findings."""
    p = result.plan
    by = p["calls_by_task"]
    if result.dry_run:
        console.print(
            f"dry run: {p['calls']} calls ({by['single-hop']} single-hop, {by['multi-hop']} "
            f"multi-hop, {by['out-of-scope']} out-of-scope, {by['answerable']} verification), "
            f"plus at most {p['max_repairs']} repair requests; at most "
            f"{p['tokens_upper_bound']:,} tokens for the calls "
            f"({p['tokens_upper_bound_with_repairs']:,} with every repair). No call was made."
        )
        return
    c = result.counts
    refusal = sum(1 for q in result.questions if q.get("refusal_expected"))
    multi = sum(1 for q in result.questions if q.get("kind") == "multi-hop")
    where = escape(result.out) if result.out else "nothing written"
    console.print(
        f"questions: {c['in_scope']} in-scope ({c['in_scope'] - multi} single-hop, {multi} "
        f"multi-hop), {c['out_of_scope']} verified out-of-scope ({refusal} a refusal chunk "
        f"should catch): {where}"
    )
    if result.out:
        console.print(f"provenance: {escape(str(sidecar_path(Path(result.out))))}")
    if result.multi_hop_note:
        console.print(f"[yellow]{escape(result.multi_hop_note)}[/yellow]")
    console.print("dropped per gate: " + ", ".join(f"{g} {k}" for g, k in result.drops.items()))
    for row in result.not_retrieved:
        console.print(
            f"[red]not retrieved[/red] {escape(row['id'])}: {escape(row['reason'])} "
            f"({escape(row['question'])}): a finding about the index or the question"
        )
    calls = result.calls
    console.print(
        f"calls: {calls['calls']} (+{calls['repairs']} repairs, {calls['cache_hits']} from the "
        f"cache); generator {escape(result.generator)}, judge {escape(result.judge)}, seed "
        f"{result.seed}"
    )
    if result.stopped:
        console.print(
            f"[bold red]STOPPED[/bold red] {escape(result.stopped)}; what was done is written"
        )
    elif not result.questions:
        console.print("[bold red]FAIL[/bold red] every question was dropped; nothing written")


__all__ = ["questions_summary"]
