"""Markdown report for diff-index (ids and texts are data: escaped, never markup)."""

from __future__ import annotations

import html
from pathlib import Path

from ..core.diff_index import DiffResult

SHOWN = 500


def _md(text: object) -> str:
    """One Markdown table cell or list item: HTML-escaped, pipes and backticks neutralised,
    control characters shown."""
    s = html.escape(str(text)).replace("|", "\\|").replace("`", "&#96;")
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in s)


def write_report(result: DiffResult, folder: Path) -> list[Path]:
    """Write diff-index.md into ``folder``; returns the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        "# indexcheck diff-index",
        "",
        f"**Verdict: {'PASS' if result.ok else 'FAIL'}**: {result.compared} unchanged texts "
        f"compared at cosine >= {result.threshold:g}; old {result.old_count} vectors, new "
        f"{result.new_count}.",
        "",
        f"- minimum cosine: {result.min_cosine}",
        f"- statuses: {', '.join(f'{k} {v}' for k, v in result.counts.items())}",
        "",
        "## Findings",
        "",
    ]
    if not result.findings:
        lines.append("None.")
    for f in result.findings:
        lines.append(f"- **{f.kind}** ({f.severity}): {_md(f.message)}")
    if result.chunks:
        lines += [
            "",
            "## Chunks that are not unchanged",
            "",
            "| id | old id | status | cosine | holds vector of |",
            "|---|---|---|---:|---|",
        ]
        for c in result.chunks[:SHOWN]:
            cos = "" if c.cosine is None else f"{c.cosine:.4f}"
            lines.append(
                f"| {_md(c.id or '')} | {_md(c.old_id or '')} | {c.status} | {cos} | "
                f"{_md(c.holds_vector_of or '')} |"
            )
        if len(result.chunks) > SHOWN:
            lines.append(f"\n... and {len(result.chunks) - SHOWN} more (see the JSON).")
    path = folder / "diff-index.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [path]
