"""Terminal summaries: the short sections (``terminal=True``) each result shows on stdout.

They use the same neutral structure as the report (:mod:`indexcheck.sections`) and go
through the same rich renderer (:mod:`indexcheck.report.terminal`), which escapes data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..sections import Section, Table, Text, ok_verdict

if TYPE_CHECKING:
    from .check_index import CheckIndexResult

SHOWN_ROWS = 20


def _f4(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def summary(verdict: str | None = None, *blocks: Any) -> Section:
    """A terminal-only section of ``blocks``."""
    return Section("", verdict, list(blocks), report=False, terminal=True)


def check_index_summary(result: CheckIndexResult) -> list[Section]:
    """What is wrong (first 20 chunks), the findings, and a one-line verdict with its cost."""
    sec = summary(ok_verdict(result.ok))
    bad = [c for c in result.chunks if c.status != "ok"]
    if bad:
        sec.blocks.append(
            Table(
                ["position", "id", "cosine", "status", "holds vector of", "offset"],
                [
                    [
                        str(c.position),
                        c.id,
                        _f4(c.cosine),
                        str(c.status),
                        c.holds_vector_of or "",
                        "" if c.offset is None else f"{c.offset:+d}",
                    ]
                    for c in bad[:SHOWN_ROWS]
                ],
                f"chunks under {result.threshold:g} or without a usable vector",
                right=("position", "offset"),
            )
        )
        if len(bad) > SHOWN_ROWS:
            sec.blocks.append(Text(f"... and {len(bad) - SHOWN_ROWS} more (see --json)"))
    for f in result.findings:
        sec.blocks.append(Text(f"{f.kind}: {f.message}", badge=f.severity))
    m: dict[str, Any] = result.manifest.get("embedding", {})
    sec.blocks.append(
        Text(
            f"{result.counts.get('ok', 0)}/{result.checked} chunks ({result.mode}) at cosine >= "
            f"{result.threshold:g}; min {_f4(result.min_cosine)}, median "
            f"{_f4(result.median_cosine)}; {m.get('requests', 0)} embedding requests, "
            f"{m.get('tokens', 0)} tokens, {result.manifest.get('wall_seconds', 0):.1f}s",
            badge=ok_verdict(result.ok),
        )
    )
    return [sec]


__all__ = ["SHOWN_ROWS", "check_index_summary", "summary"]
