"""diff-index's terminal summary: what is not unchanged, the findings, a one-line verdict."""

from __future__ import annotations

from ...output.model import Section, Table, Text, fmt, ok_verdict
from ...output.registry import Payload, register
from ...output.summary_kit import SHOWN_ROWS, _f4, summary
from .result import DiffResult


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


DIFF_ROWS = 500  # diff-index rows in a report file; the JSON holds every one


def _diff_index(r: Payload, verdict: str | None) -> list[Section]:
    sec = Section("diff-index: the new index against the old one", verdict or ok_verdict(r["ok"]))
    sec.blocks.append(
        Text(
            f"{r['compared']} texts in both indexes compared at cosine >= {r['threshold']:g} "
            f"(minimum {fmt(r['min_cosine'])}); old {r['old_count']} vectors, new "
            f"{r['new_count']}."
        )
    )
    sec.blocks.append(Table(["status", "chunks"], [[k, v] for k, v in r["counts"].items()]))
    new = r.get("new_texts")
    if new:
        sec.blocks.append(
            Text(
                f"New and changed texts re-embedded: {new.get('checked', 0)} (minimum cosine "
                f"{fmt(new.get('min_cosine'))}, median {fmt(new.get('median_cosine'))})."
            )
        )
    if r["findings"]:
        sec.blocks.append(
            Table(
                ["finding", "severity", "message"],
                [[f["kind"], f["severity"], f["message"]] for f in r["findings"]],
            )
        )
    rows = r["chunks"]
    cols = ("id", "old_id", "status", "checked", "cosine", "holds_vector_of")
    sec.blocks.append(
        Table(
            ["id", "old id", "status", "re-embedded", "cosine", "holds vector of"],
            [[c.get(k) for k in cols] for c in rows[:DIFF_ROWS]],
            "chunks that are not unchanged"
            + (
                f" (first {DIFF_ROWS} of {len(rows)}; all in the JSON)"
                if len(rows) > DIFF_ROWS
                else ""
            ),
        )
    )
    return [sec]


register(
    "diff-index",
    _diff_index,
    {"compared", "old_count", "new_count", "chunks"},
    diff_index_summary,
    result=DiffResult,
)
