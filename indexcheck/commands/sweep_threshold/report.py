"""sweep-threshold's report sections (built from its JSON) and its terminal summary."""

from __future__ import annotations

from typing import Any

from ...output.model import Plot, Section, Table, Text, ok_verdict
from ...output.registry import Payload, register, section
from ...output.summary_kit import summary
from ..kit.filter_summaries import threshold_filter_lines
from .result import SweepResult


def _sweep_threshold(r: Payload, verdict: str | None) -> list[Section]:
    sec = section("sweep-threshold: refusal threshold", r, verdict, Text(r["verdict"]))
    sec.blocks.append(Plot("threshold", r, "sweep", "sweep-threshold figures"))
    qs = r["questions"]
    ins = [q for q in qs if q["in_scope"] and q.get("expected_score")]
    oos = [q for q in qs if not q["in_scope"] and not q["top_is_refusal"]]
    ins.sort(key=lambda q: q["expected_score"]["backend"] or 0.0)
    oos.sort(key=lambda q: -(q["top_score"]["backend"] or 0.0))
    rows = [
        [q["id"], "in-scope: best expected", q["expected_id"], *_scores(q["expected_score"])]
        for q in ins[:10]
    ] + [
        [q["id"], "out-of-scope: top result", q["top_id"], *_scores(q["top_score"])]
        for q in oos[:10]
    ]
    sec.blocks.append(
        Table(
            ["question", "kind", "chunk", "score", "cosine"],
            rows,
            "hardest cases: weakest in-scope, strongest out-of-scope",
        )
    )
    return [sec]


def _scores(s: Payload) -> list[Any]:
    return [s["backend"], s["cosine"]]


def _s(score: dict[str, float | None] | None) -> str:
    if score is None:
        return "-"
    cos, backend = score.get("cosine"), score.get("backend")
    b = "-" if backend is None else f"{backend:.4f}"
    return b if cos is None else f"{b} (cos {cos:.4f})"


def _anchor(result: SweepResult) -> tuple[int, str]:
    """The table row the terminal centres on, and its mark: the recommendation (" *");
    with none, the row closest to the recall target: the strictest threshold that keeps
    the most recall any threshold keeps (" >"), where a failing user decides."""
    rows = result.table
    if not rows:
        return 0, ""
    if result.recommended_row is not None:
        return next(i for i, r in enumerate(rows) if r is result.recommended_row), " *"
    recall = [r["in_scope_recall"]["value"] or 0.0 for r in rows]
    reach = [i for i, v in enumerate(recall) if v >= result.recall_target]
    best = max(recall)
    return (reach or [i for i, v in enumerate(recall) if v == best])[-1], " >"


def sweep_threshold_summary(result: SweepResult) -> list[Section]:
    """Key figures, the rows around the recommendation, and the verdict."""
    transform = result.scale.get("transform") or "unknown"
    sec = summary(ok_verdict(result.ok))
    say = sec.blocks.append
    say(
        Text(
            f"{result.in_scope} in-scope, {result.out_of_scope} out-of-scope questions; "
            f"k={result.k}, fetch={result.fetch}; backend score {transform}"
        )
    )
    say(Text(f"lowest in-scope best expected score: {_s(result.min_in_scope_best)}"))
    say(Text(f"highest out-of-scope top score:      {_s(result.max_out_of_scope_top)}"))
    sec.blocks.extend(threshold_filter_lines(result))
    if result.handled_by_content:
        say(Text(f"handled by refusal chunks: {', '.join(result.handled_by_content)}"))
    if result.not_retrieved:
        say(Text(f"expected chunk not in top {result.k}: {', '.join(result.not_retrieved)}"))
    if result.overlap["in_scope"] or result.overlap["out_of_scope"]:
        say(
            Text(
                f"overlap: in-scope {', '.join(result.overlap['in_scope']) or '-'}; "
                f"out-of-scope {', '.join(result.overlap['out_of_scope']) or '-'}"
            )
        )
    rows = result.table
    at, mark_at = _anchor(result)
    shown = []
    for i, r in enumerate(rows[max(0, at - 6) : at + 6], max(0, at - 6)):
        rec, rej = r["in_scope_recall"], r["out_of_scope_rejection"]
        mark = mark_at if i == at else ""
        shown.append(
            [
                _s(r["threshold"]) + mark,
                f"{rec['k']}/{rec['n']}",
                f"{rej['k']}/{rej['n']}",
                str(r["false_refusals"]),
                str(r["false_answers"]),
            ]
        )
    headers = ["threshold", "recall", "oos handled", "false refusals", "false answers"]
    if result.recommended_row is not None:
        title = "thresholds around the recommendation (* ), loosest first"
    else:
        title = (
            f"thresholds around the {100 * result.recall_target:g}% recall target (> the "
            "strictest keeping the most recall any threshold keeps), loosest first"
        )
    say(Table(headers, shown, title, right=tuple(headers)))
    say(Text(result.verdict, badge=ok_verdict(result.ok)))
    return [sec]


register(
    "sweep-threshold",
    _sweep_threshold,
    {"table", "recommended_threshold"},
    sweep_threshold_summary,
    result=SweepResult,
)
