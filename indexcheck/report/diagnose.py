"""Markdown report for diagnose: label counts, metrics exact vs ANN, failing questions."""

from __future__ import annotations

import json
from pathlib import Path

from ..core.diagnose import DiagnoseResult
from ..core.verdicts import GOOD_LABELS, IN_SCOPE_LABELS, OUT_OF_SCOPE_LABELS


def write_report(result: DiagnoseResult, folder: Path) -> list[Path]:
    """Write diagnose.md into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        "# indexcheck diagnose",
        "",
        f"**Verdict: {'PASS' if result.ok else 'FAIL'}** — k={result.k}, fetch={result.fetch}, "
        f"threshold {result.threshold or 'none'}, ground truth {result.ground_truth}.",
        "",
        "| label | questions | examples |",
        "|---|---:|---|",
    ]
    for label in (*IN_SCOPE_LABELS, *OUT_OF_SCOPE_LABELS):
        n = result.counts.get(label, 0)
        if n:
            lines.append(f"| {label} | {n} | {', '.join(result.examples[label])} |")
    lines += ["", "## Retrieval metrics", "", "| metric | exact | approximate |", "|---|---|---|"]
    for name in ("hit_at_k", "recall_at_k", "mrr", "ndcg_at_k"):
        cells = []
        for side in ("exact", "ann"):
            m = getattr(result.metrics[side], name)
            cells.append("-" if m.value is None else f"{m.value:.3f} [{m.low:.3f}, {m.high:.3f}]")
        lines.append(f"| {name} | {cells[0]} | {cells[1]} |")
    lines += ["", "## Questions that did not end where they should", ""]
    for d in result.questions:
        if d.label not in GOOD_LABELS:
            lines.append(f"- `{d.id}` **{d.label}**: {d.detail}")
    lines += ["", "## Manifest", "", "```json", json.dumps(result.manifest, indent=2), "```", ""]
    md = folder / "diagnose.md"
    md.write_text("\n".join(lines), encoding="utf-8")
    return [md]
