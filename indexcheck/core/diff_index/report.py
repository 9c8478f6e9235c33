"""diff-index's terminal summary: what is not unchanged, the findings, a one-line verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...sections import Section, Table, Text, ok_verdict
from ..summary_kit import SHOWN_ROWS, _f4, summary

if TYPE_CHECKING:
    from . import DiffResult


def _kept(kept: int, compared: int, ok: bool) -> str:
    """The verdict's count: on a failure the count that failed, never a bare "35/120" that
    reads as 35 failures when it means 35 texts kept their vector."""
    if ok:
        return f"{kept}/{compared} unchanged texts kept their vector at"
    return f"{compared - kept} of {compared} texts in both indexes moved ({kept} kept) under"


def diff_index_summary(result: DiffResult) -> list[Section]:
    """The chunks that are not unchanged (first 20), the findings, and a one-line verdict."""
    sec = summary(ok_verdict(result.ok))
    bad = result.chunks
    if bad:
        sec.blocks.append(
            Table(
                ["id", "old id", "status", "cosine", "holds vector of"],
                [
                    [
                        c.id or "",
                        c.old_id or "",
                        c.status if c.checked is None else f"{c.status} ({c.checked})",
                        _f4(c.cosine),
                        c.holds_vector_of or "",
                    ]
                    for c in bad[:SHOWN_ROWS]
                ],
                "chunks that are not unchanged",
                right=("cosine",),
            )
        )
        if len(bad) > SHOWN_ROWS:
            sec.blocks.append(Text(f"... and {len(bad) - SHOWN_ROWS} more (see --json)"))
    for f in result.findings:
        sec.blocks.append(Text(f"{f.kind}: {f.message}", badge=f.severity))
    counts = ", ".join(f"{k} {v}" for k, v in result.counts.items())
    new_line = ""
    if result.new_texts is not None:
        new_line = f"; {result.new_texts.get('checked', 0)} new texts re-embedded"
    elif n_new := result.counts.get("added", 0) + result.counts.get("changed", 0):
        new_line = f"; {n_new} new texts not re-embedded (add --embedder)"
    sec.blocks.append(
        Text(
            f"{_kept(result.counts.get('unchanged', 0), result.compared, result.ok)} "
            f"cosine {result.threshold:g} (min {_f4(result.min_cosine)}); {counts}"
            f"{new_line}; {result.manifest.get('wall_seconds', 0):.1f}s",
            badge=ok_verdict(result.ok),
            whole=True,
        )
    )
    return [sec]
