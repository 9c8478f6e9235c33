"""Markdown report and plot for compare-ann: miss rate and recall against fetch depth."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..core.compare_ann import AnnResult
from .plots import pyplot


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _interval(iv: list[float | None]) -> str:
    return f"[{_pct(iv[0])}, {_pct(iv[1])}]"


def write_report(result: AnnResult, folder: Path) -> list[Path]:
    """Write compare-ann.md and compare-ann.png (miss rate and recall against fetch depth)."""
    folder.mkdir(parents=True, exist_ok=True)
    png = _plot(result, folder / "compare-ann.png")
    lines = [
        "# indexcheck compare-ann",
        "",
        f"**Verdict: {'PASS' if result.ok else 'FAIL'}** — {result.recommendation}.",
        "",
        f"- store: `{result.store['spec']}` ({result.store['backend']}, score "
        f"{result.score}, ranked by {result.family})",
        f"- queries: {result.queries} ({result.query_source}); k = {result.k}; "
        f"target best-chunk miss rate {result.target:g}",
        f"- ground truth: {result.ground_truth} (top-{result.ground_truth_depth}, "
        f"{result.ground_truth_seconds:.2f}s)",
        "",
        f"![miss rate and recall against fetch depth]({png.name})",
        "",
        "| fetch | recall@k | 95% CI | best-chunk miss | 95% CI | mean rank shift |",
        "|---:|---:|---|---:|---|---:|",
    ]
    for r in result.by_fetch:
        shift = "" if r.mean_rank_displacement is None else f"{r.mean_rank_displacement:.3f}"
        lines.append(
            f"| {r.fetch}{' (re-rank)' if r.reranked else ''} | {_pct(r.recall_at_k)} | "
            f"{_interval(r.recall_at_k_interval)} | {_pct(r.best_miss_rate)} "
            f"({r.best_misses}/{r.queries}) | {_interval(r.best_miss_rate_interval)} | {shift} |"
        )
    if result.worst_queries:
        lines += [
            "",
            "## Worst queries",
            "",
            "| query | exact best | missed at fetch |",
            "|---|---|---|",
        ]
        for w in result.worst_queries:
            missed = ", ".join(str(f) for f in w["missed_at_fetch"]) or "none"
            lines.append(f"| {w['query']} | `{w['exact_best_id']}` | {missed} |")
    lines += [
        "",
        "## Manifest",
        "",
        "```json",
        json.dumps(result.manifest, indent=2, default=str),
        "```",
        "",
    ]
    md = folder / "compare-ann.md"
    md.write_text("\n".join(lines), encoding="utf-8")
    return [md, png]


def _errors(rows: list[dict[str, Any]], key: str) -> tuple[list[float], list[list[float]]]:
    """Values and asymmetric error bars from each row's ``<key>_interval``."""
    y, lo, hi = [], [], []
    for r in rows:
        v = float(r[key])
        low, high = r[f"{key}_interval"]
        y.append(v)
        lo.append(0.0 if low is None else max(0.0, v - float(low)))
        hi.append(0.0 if high is None else max(0.0, float(high) - v))
    return y, [lo, hi]


def _plot(result: AnnResult, path: Path) -> Path:
    plt = pyplot()

    rows = [asdict(r) for r in result.by_fetch]
    xs = [r["fetch"] for r in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4), dpi=110)
    y, err = _errors(rows, "best_miss_rate")
    ax1.errorbar(xs, y, yerr=err, marker="o", capsize=3, label="as opened")
    sweep = result.sweep or {"param": "", "runs": []}
    for run in sweep["runs"]:
        ax1.plot(
            [r["fetch"] for r in run["by_fetch"]],
            [r["best_miss_rate"] for r in run["by_fetch"]],
            marker=".",
            linestyle="--",
            label=f"{sweep['param']}={run['value']}",
        )
    ax1.axhline(result.target, color="#C44E52", linestyle=":", label=f"target {result.target:g}")
    ax1.set_xlabel("fetch depth (re-ranked to k)")
    ax1.set_ylabel("best-chunk miss rate")
    ax1.set_title(f"best chunk absent from top-{result.k}")
    ax1.set_ylim(bottom=0)
    ax1.legend(loc="best", fontsize=8)
    y, err = _errors(rows, "recall_at_k")
    ax2.errorbar(xs, y, yerr=err, marker="o", capsize=3, color="#55A868")
    ax2.set_xlabel("fetch depth (re-ranked to k)")
    ax2.set_ylabel(f"recall@{result.k}")
    ax2.set_title(f"recall@{result.k} against exact search")
    ax2.set_ylim(0, 1.02)
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(xs)
        ax.set_xticklabels([str(x) for x in xs])
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
