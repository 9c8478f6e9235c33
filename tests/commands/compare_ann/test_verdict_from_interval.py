"""compare-ann's verdict comes from the 95% interval, not the point estimate: PASS only when
the interval's upper bound on the best-chunk miss rate clears the target,
INSUFFICIENT_EVIDENCE when only the observed rate does, and on an index that searches
exactly the check says it cannot fail."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import Group
from indexcheck.cli.compare_ann import compare_ann_cmd
from indexcheck.stores.faiss.store import write_faiss_folder


def _folder(root: Path, name: str, factory: str) -> Path:
    x = np.random.default_rng(0).standard_normal((2000, 16)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    folder = root / name
    write_faiss_folder(folder, [f"c{i:05d}" for i in range(len(x))], x, index_factory=factory)
    return folder


@pytest.fixture(scope="module")
def hnsw(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _folder(tmp_path_factory.mktemp("ann"), "hnsw", "HNSW16")


@pytest.fixture(scope="module")
def flat(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _folder(tmp_path_factory.mktemp("ann"), "flat", "Flat")


def run(tmp_path: Path, *args: str) -> tuple[int, str, dict]:
    group = Group(name="indexcheck", commands={"compare-ann": compare_ann_cmd})
    out = tmp_path / "r.json"
    r = CliRunner().invoke(group, ["compare-ann", *args, "--json", str(out)])
    return r.exit_code, r.stdout, json.loads(out.read_text())


def test_no_miss_in_55_queries_is_insufficient_evidence_for_a_1pct_target(
    hnsw: Path, tmp_path: Path
) -> None:
    code, stdout, data = run(
        tmp_path, "--store", f"faiss:{hnsw}?efSearch=256", "--queries", "55", "--fetch", "4,10"
    )
    assert [r["best_misses"] for r in data["by_fetch"]] == [0, 0]  # the point estimate is 0
    assert data["by_fetch"][0]["best_miss_rate_interval"][1] == pytest.approx(0.0653, abs=1e-3)
    assert data["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert data["ok"] is False and code == 1
    assert data["recommended_fetch"] is None
    first = data["recommendation"]
    assert first.startswith("fetch 4: no miss in 55 queries, but the 95% interval reaches 6.5%")
    assert "at least 381 queries" in first  # how many would let 0 misses clear 1%
    assert "INSUFFICIENT_EVIDENCE fetch 4" in stdout
    assert "PASS" not in stdout


def test_enough_queries_without_a_miss_pass(hnsw: Path, tmp_path: Path) -> None:
    code, stdout, data = run(
        tmp_path, "--store", f"faiss:{hnsw}?efSearch=256", "--queries", "400", "--fetch", "4"
    )
    assert data["by_fetch"][0]["best_misses"] == 0
    assert data["by_fetch"][0]["best_miss_rate_interval"][1] <= 0.01
    assert data["verdict"] == "PASS" and data["ok"] is True and code == 0
    assert "95% interval up to 0.95%, within the target 1%" in data["recommendation"]


def test_an_observed_rate_under_the_target_whose_interval_is_not_fails_to_pass(
    hnsw: Path, tmp_path: Path
) -> None:
    code, _, data = run(
        tmp_path, "--store", f"faiss:{hnsw}?efSearch=256", "--queries", "55",
        "--fetch", "4", "--target", "0.05",
    )  # fmt: skip
    assert data["verdict"] == "INSUFFICIENT_EVIDENCE" and code == 1


def test_an_exact_index_says_the_check_cannot_fail(flat: Path, tmp_path: Path) -> None:
    code, stdout, data = run(tmp_path, "--store", f"faiss:{flat}", "--queries", "55")
    assert data["verdict"] == "CANNOT_FAIL" and code == 0
    said = data["recommendation"]
    assert said.startswith(f"the check cannot fail here: faiss:{flat} searches exactly")
    assert "finds the best chunk by construction" in said
    assert "PASS" not in stdout and "CANNOT_FAIL the check cannot fail here" in stdout


def test_worst_queries_never_say_missed_at_fetch_none(hnsw: Path, tmp_path: Path) -> None:
    _, stdout, data = run(
        tmp_path, "--store", f"faiss:{hnsw}?efSearch=24", "--queries", "200", "--fetch", "4,50"
    )
    assert any(not w["missed_at_fetch"] for w in data["worst_queries"])  # low recall only
    assert "missed at fetch none" not in stdout
    shown = [line for line in stdout.splitlines() if "worst:" in line]
    assert shown
    for line in shown:
        assert "missed at fetch" in line or "found at every depth" in line
