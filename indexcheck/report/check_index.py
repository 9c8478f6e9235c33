"""Markdown report and cosine histogram for check-index."""

from __future__ import annotations

import json
from pathlib import Path

from ..core.check_index import IntegrityResult
from .plots import cosine_histogram


def write_report(result: IntegrityResult, folder: Path) -> list[Path]:
    """Write check-index.md, check-index.json and cosines.png into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    png = cosine_histogram(
        result.cosines(),
        result.threshold,
        folder / "check-index-cosines.png",
        f"check-index: {result.counts.get('ok', 0)}/{result.checked} chunks at "
        f">= {result.threshold:g}",
    )
    m = result.manifest
    lines = [
        "# indexcheck check-index",
        "",
        f"**Verdict: {'PASS' if result.ok else 'FAIL'}** — {result.checked} chunks checked "
        f"({result.mode}), threshold cosine >= {result.threshold:g}.",
        "",
        f"- minimum cosine: {result.min_cosine}",
        f"- median cosine: {result.median_cosine}",
        f"- below threshold: {result.below_threshold}",
        f"- statuses: {', '.join(f'{k} {v}' for k, v in sorted(result.counts.items()))}",
        "",
        f"![cosines]({png.name})",
        "",
        "## Findings",
        "",
    ]
    if not result.findings:
        lines.append("None.")
    for f in result.findings:
        lines.append(f"- **{f.kind}** ({f.severity}): {f.message}")
        if f.chunk_ids:
            shown = ", ".join(f"`{i}`" for i in f.chunk_ids[:20])
            more = f" and {len(f.chunk_ids) - 20} more" if len(f.chunk_ids) > 20 else ""
            lines.append(f"  - chunks: {shown}{more}")
    bad = [c for c in result.chunks if c.status != "ok"]
    if bad:
        lines += [
            "",
            "## Chunks that failed",
            "",
            "| position | id | cosine | status | holds vector of | offset |",
            "|---:|---|---:|---|---|---:|",
        ]
        for c in bad[:200]:
            cos = "" if c.cosine is None else f"{c.cosine:.4f}"
            off = "" if c.offset is None else f"{c.offset:+d}"
            lines.append(
                f"| {c.position} | `{c.id}` | {cos} | {c.status} | "
                f"{c.holds_vector_of or ''} | {off} |"
            )
    lines += ["", "## Manifest", "", "```json", json.dumps(m, indent=2), "```", ""]
    md = folder / "check-index.md"
    md.write_text("\n".join(lines), encoding="utf-8")
    return [md, png]
