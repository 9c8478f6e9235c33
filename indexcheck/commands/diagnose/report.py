"""diagnose's report sections (built from its JSON) and its terminal summary."""

from __future__ import annotations

from typing import Any

from ...output.model import WORST_ROWS, Plot, Section, Table, Text, ok_verdict, rank
from ...output.registry import Payload, register, section
from ...output.summary_kit import summary
from .result import DiagnoseResult

_GOOD = ("OK", "REFUSED_OK", "REFUSED_BY_CONTENT")


def shown_caption(what: str, total: int, shown: int = WORST_ROWS) -> str:
    """A table caption with its row count, saying how many rows it leaves out."""
    if total <= shown:
        return f"{what} ({total})"
    return f"{what} ({total}; the first {shown} shown, {total - shown} more in the JSON)"


def _diagnose(r: Payload, verdict: str | None) -> list[Section]:
    said = (
        f"k={r['k']}, fetch={r['fetch']}, threshold {r['threshold'] or 'none'}, "
        f"ground truth {r['ground_truth']}."
    )
    sec = section("diagnose: where each question's chunk was lost", r, verdict, Text(said))
    counts = {k: v for k, v in r["counts"].items() if v}
    data = {"counts": counts, "good": list(_GOOD), "k": r["k"]}
    sec.blocks.append(Plot("diagnose-labels", data, "diagnose-labels", "questions per label"))
    examples = r.get("examples") or {}
    sec.blocks.append(
        Table(
            ["label", "questions", "examples"],
            [[label, n, ", ".join(examples.get(label, []))] for label, n in counts.items()],
        )
    )
    metric_rows = []
    for name in ("hit_at_k", "recall_at_k", "mrr", "ndcg_at_k"):
        cells = []
        for side in ("exact", "ann"):
            m = r["metrics"][side][name]
            cells.append(
                "–"
                if m["value"] is None
                else f"{m['value']:.3f} [{m['low']:.3f}, {m['high']:.3f}] (n={m['observed']})"
            )
        metric_rows.append([name.replace("_at_k", f"@{r['k']}"), *cells])
    sec.blocks.append(Table(["metric", "exact ranking", "backend ranking"], metric_rows))
    failing = [q for q in r["questions"] if q["label"] not in _GOOD]
    filtered = any(q.get("filter") for q in r["questions"])
    heads = ["question", "label", "exact rank", "backend rank", "detail"]
    sec.blocks.append(
        Table(
            heads + (["filter"] if filtered else []),
            [
                [q["id"], q["label"], rank(q["exact_rank"]), rank(q["ann_rank"]), q["detail"]]
                + ([q.get("filter") or "–"] if filtered else [])
                for q in failing[:WORST_ROWS]
            ],
            shown_caption("questions that did not end where they should", len(failing)),
        )
    )
    return [sec]


FAILING_SHOWN = 10  # diagnose's questions that did not end where they should


def _metric(m: Any) -> str:
    if m.value is None:
        return "-"
    return f"{m.value:.3f} [{m.low:.3f}, {m.high:.3f}]"


def diagnose_summary(result: DiagnoseResult) -> list[Section]:
    """Counts per label with examples, exact vs ANN metrics, the failing questions."""
    from ..kit.verdicts import GOOD_LABELS, IN_SCOPE_LABELS, OUT_OF_SCOPE_LABELS

    labels = Table(
        ["label", "questions", "examples"],
        [
            [str(label), str(result.counts[label]), ", ".join(result.examples[label])]
            for label in (*IN_SCOPE_LABELS, *OUT_OF_SCOPE_LABELS)
            if result.counts.get(label)
        ],
        f"first stage that lost the expected chunk (k={result.k}, fetch={result.fetch})",
        right=("questions",),
    )
    metrics = Table(
        ["metric", "exact", "approximate (backend)"],
        [
            [
                name.replace("_at_k", f"@{result.k}"),
                _metric(getattr(result.metrics["exact"], name)),
                _metric(getattr(result.metrics["ann"], name)),
            ]
            for name in ("hit_at_k", "recall_at_k", "mrr", "ndcg_at_k")
        ],
        f"retrieval metrics (ground truth: {result.ground_truth})",
        right=("exact", "approximate (backend)"),
    )
    sec = summary(ok_verdict(result.ok), labels, metrics)
    failing = [d for d in result.questions if d.label not in GOOD_LABELS]
    for d in failing[:FAILING_SHOWN]:
        under = f"  (filter {d.filter})" if d.filter else ""
        sec.blocks.append(Text(f"  {d.id}: {d.label}  {d.detail}{under}"))
    if len(failing) > FAILING_SHOWN:
        more = len(failing) - FAILING_SHOWN
        sec.blocks.append(Text(f"  ... and {more} more (every question is in --json)"))
    ok = sum(result.counts[label] for label in GOOD_LABELS)
    sec.blocks.append(
        Text(
            f"{ok}/{len(result.questions)} questions end where they should",
            badge=ok_verdict(result.ok),
        )
    )
    return [sec]


def _summary_with_checks(result: DiagnoseResult) -> list[Section]:
    """The terminal summary, with the answer checks' line before its closing verdict."""
    summary = diagnose_summary(result)
    if result.answer_checks is not None:
        from ..judge.answer_checks import checks_line

        summary[-1].blocks.insert(-1, Text(checks_line(result.answer_checks)))
    return summary


register(
    "diagnose",
    _diagnose,
    {"metrics", "counts", "questions"},
    _summary_with_checks,
    result=DiagnoseResult,
)
