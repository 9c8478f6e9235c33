"""One rank convention everywhere: 1-based, as people count. The first result is rank 1 in
the terminal, the JSON and the report of diagnose, sweep-threshold and ci alike, and a
baseline written before (0-based, schema_version 1) is read in the same convention."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import indexcheck
import indexcheck.commands.reports  # noqa: F401  (registers the renderers)
from indexcheck.commands.ci.noninferiority import baseline_outcomes
from indexcheck.output.present import write_report
from indexcheck.output.schema import SCHEMA_VERSION
from indexcheck.stores import open_store
from indexcheck.testing import HashEmbedder

SPEC = "py:indexcheck.testing:HASH32"


@pytest.fixture
def questions(small_kb: dict[str, Path], tmp_path: Path) -> tuple[Path, int]:
    """q-first: chunk 10's own text (its chunk comes first); q-later: chunk 10's text,
    expecting chunk 11 (wherever the backend ranks it): returns the file and that rank."""
    rows = [json.loads(line) for line in small_kb["chunks"].read_text().splitlines()]
    qs = [
        {"id": "q-first", "question": rows[10]["text"], "expected": [rows[10]["id"]]},
        {"id": "q-later", "question": rows[10]["text"], "expected": [rows[11]["id"]]},
    ]
    path = tmp_path / "rank_questions.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in qs))
    store = open_store(f"faiss:{small_kb['good']}")
    _, ids = store.query(HashEmbedder(32).embed([rows[10]["text"]]), 50)
    later = [str(i) for i in np.asarray(ids)[0]].index(rows[11]["id"]) + 1
    assert later > 1
    return path, later


def test_diagnose_ranks_are_1_based_in_json_detail_and_report(
    small_kb: dict[str, Path], questions: tuple[Path, int], tmp_path: Path
) -> None:
    path, later = questions
    r = indexcheck.diagnose(
        f"faiss:{small_kb['good']}", path, small_kb["chunks"], SPEC, k=1, fetch=50
    )
    by = {q["id"]: q for q in r.to_dict()["questions"]}
    assert by["q-first"]["ann_rank"] == 1 and by["q-first"]["exact_rank"] == 1
    assert by["q-later"]["ann_rank"] == later and by["q-later"]["label"] == "RANKED_OUT"
    assert f"ranked {later} by the backend" in by["q-later"]["detail"]
    md = write_report(r, tmp_path / "rep", "diagnose")[1].read_text()  # [html, md, ...]
    row = next(line for line in md.splitlines() if line.startswith("| q-later |"))
    assert re.search(rf"\| {later} \| {later} \|", row), row


def test_sweep_threshold_expected_rank_is_1_based(
    small_kb: dict[str, Path], questions: tuple[Path, int]
) -> None:
    path, later = questions
    r = indexcheck.sweep_threshold(f"faiss:{small_kb['good']}", path, SPEC, k=4, fetch=50)
    by = {q["id"]: q for q in r.to_dict()["questions"]}
    assert by["q-first"]["expected_rank"] == 1
    assert by["q-later"]["expected_rank"] == later


def test_a_0_based_baseline_of_schema_1_reads_as_1_based() -> None:
    assert SCHEMA_VERSION >= 2  # the ranks' meaning changed: readers can tell the two apart
    old = {
        "schema_version": 1, "k": 4, "metrics": {},
        "questions": [
            {"id": "a", "ann_rank": 0}, {"id": "b", "ann_rank": 3}, {"id": "c", "ann_rank": 4},
        ],
    }  # fmt: skip
    new = {**old, "schema_version": SCHEMA_VERSION}
    new["questions"] = [{"id": q["id"], "ann_rank": q["ann_rank"] + 1} for q in old["questions"]]
    for data in (old, new):
        got = baseline_outcomes(data)["questions"]
        assert [got[i]["ann_rank"] for i in "abc"] == [1, 4, 5]
        assert [got[i]["hit_at_k"] for i in "abc"] == [1.0, 1.0, 0.0]
        assert got["a"]["reciprocal_rank"] == 1.0 and got["b"]["reciprocal_rank"] == 0.25
