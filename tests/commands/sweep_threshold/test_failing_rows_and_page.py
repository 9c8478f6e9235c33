"""What a failing sweep-threshold user needs: the rows around the recall target (not the
strictest thresholds), and a --report page like every other command's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import indexcheck
from indexcheck.cli.app import cli
from indexcheck.commands.sweep_threshold.report import sweep_threshold_summary
from indexcheck.output.model import Table

SPEC = "py:indexcheck.testing:HASH32"


@pytest.fixture
def unreachable(small_kb: dict[str, Path], tmp_path: Path) -> Path:
    """40 in-scope questions, 30 of them expecting a chunk that is not retrieved: no
    threshold keeps 95% recall; and 20 unrelated ones."""
    rows = [json.loads(line) for line in small_kb["chunks"].read_text().splitlines()]
    qs = [
        {"id": f"q{i}", "question": r["text"], "expected": [rows[(i + 60) % 120]["id"]]
         if i < 30 else [r["id"]]}
        for i, r in enumerate(rows[:40])
    ]  # fmt: skip
    qs += [
        {"id": f"o{i}", "question": f"unrelated {i} zebra", "in_scope": False} for i in range(20)
    ]
    path = tmp_path / "unreachable.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in qs))
    return path


def test_a_failing_sweep_shows_the_rows_around_the_target(
    small_kb: dict[str, Path], unreachable: Path
) -> None:
    r = indexcheck.sweep_threshold(f"faiss:{small_kb['good']}", unreachable, SPEC, k=4, fetch=8)
    assert not r.ok and r.recommended_row is None and len(r.table) > 12
    table = next(b for s in sweep_threshold_summary(r) for b in s.blocks if isinstance(b, Table))
    best = max((row["in_scope_recall"]["value"] or 0) for row in r.table)
    anchor = max(
        i for i, row in enumerate(r.table) if (row["in_scope_recall"]["value"] or 0) == best
    )
    shown = [row[1] for row in table.rows]
    # the row closest to the target (the strictest keeping the most recall) is shown and marked
    rec = r.table[anchor]["in_scope_recall"]
    assert f"{rec['k']}/{rec['n']}" in shown
    assert any(str(row[0]).endswith(" >") for row in table.rows)
    assert "recall target" in (table.caption or "")
    # not the strictest thresholds, which keep no recall at all
    last = r.table[-1]["in_scope_recall"]
    assert last["k"] < rec["k"] and shown.count(f"{last['k']}/{last['n']}") < len(shown)


def test_report_writes_a_page_with_the_verdict_first(
    small_kb: dict[str, Path], unreachable: Path, tmp_path: Path
) -> None:
    out = tmp_path / "rep"
    r = CliRunner().invoke(
        cli,
        ["sweep-threshold", "--store", f"faiss:{small_kb['good']}", "--questions",
         str(unreachable), "--embedder", SPEC, "-k", "4", "--report", str(out)],
    )  # fmt: skip
    assert r.exit_code == 1, r.output
    page = (out / "sweep-threshold.md").read_text()
    assert page.startswith("# indexcheck sweep-threshold\n\n**Verdict: FAIL**")
    assert any(p.suffix == ".png" for p in out.iterdir())
