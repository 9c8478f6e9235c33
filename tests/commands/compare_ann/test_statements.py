"""compare-ann's statements (issue 17, item 6): a sweep that reaches the target is the
verdict, and a per-depth figure does not depend on which other depths were asked."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import Group
from indexcheck.cli.compare_ann import compare_ann_cmd
from indexcheck.commands.compare_ann import CompareAnnSettings, compare_ann, sample_queries
from indexcheck.stores import open_store
from indexcheck.stores.faiss.store import write_faiss_folder


@pytest.fixture(scope="module")
def hnsw(tmp_path_factory: pytest.TempPathFactory) -> Path:
    x = np.random.default_rng(0).standard_normal((3000, 32)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    folder = tmp_path_factory.mktemp("ann") / "hnsw"
    write_faiss_folder(folder, [f"c{i:05d}" for i in range(len(x))], x, index_factory="HNSW8")
    return folder


def invoke(*args: str) -> tuple[int, str, str]:
    group = Group(name="indexcheck", commands={"compare-ann": compare_ann_cmd})
    r = CliRunner().invoke(group, ["compare-ann", *args])
    return r.exit_code, r.stdout, r.stderr


def test_rank_shift_at_a_depth_does_not_depend_on_the_other_depths_asked(hnsw: Path) -> None:
    store = open_store(f"faiss:{hnsw}?efSearch=4")
    qs = sample_queries(store, 200, seed=1)
    alone = compare_ann(CompareAnnSettings(k=4, fetch=(4,)), store, qs)
    many = compare_ann(CompareAnnSettings(k=4, fetch=(4, 10, 20, 50)), store, qs)
    one, four = alone.row(4), many.row(4)
    assert one.best_misses == four.best_misses > 0  # the same misses: a real shift to measure
    assert one.recall_at_k == four.recall_at_k
    assert one.mean_rank_displacement == pytest.approx(four.mean_rank_displacement)
    assert one.mean_rank_displacement_interval == pytest.approx(
        four.mean_rank_displacement_interval
    )
    # the cap on exact ranks is stated, and it is the same however many depths were asked
    assert alone.rank_cap == many.rank_cap >= 50


def test_a_sweep_value_that_reaches_the_target_is_the_verdict(hnsw: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    code, stdout, err = invoke(
        "--store",
        f"faiss:{hnsw}?efSearch=2",
        "--queries",
        "100",
        "--fetch",
        "4,10",
        "--target",
        "0.04",  # 0 misses in 100 queries: 95% upper bound 3.7%
        "--sweep",
        "efSearch=128,2,64,256",
        "--json",
        str(out),
    )
    data = json.loads(out.read_text())
    runs = {run["value"]: run for run in data["sweep"]["runs"]}
    assert runs[2]["recommended_fetch"] is None  # as configured, no depth reaches it
    reaching = sorted(v for v, run in runs.items() if run["recommended_fetch"] is not None)
    assert reaching and reaching[0] == 64
    # the verdict names the smallest setting that reaches the target, and passes
    assert code == 0, err
    assert data["ok"] is True
    assert data["recommended_setting"] == {"efSearch": 64, "fetch": runs[64]["recommended_fetch"]}
    assert data["recommendation"].startswith(
        f"set efSearch=64 and fetch {runs[64]['recommended_fetch']}"
    )
    assert "as configured (efSearch=2)" in data["recommendation"]
    assert "PASS set efSearch=64" in stdout


def test_a_sweep_that_reaches_nothing_still_fails(hnsw: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    code, stdout, _ = invoke(
        "--store",
        f"faiss:{hnsw}?efSearch=2",
        "--queries",
        "100",
        "--fetch",
        "4",
        "--target",
        "0",
        "--sweep",
        "efSearch=2,3",
        "--json",
        str(out),
    )
    data = json.loads(out.read_text())
    assert code == 1 and data["ok"] is False and data["recommended_setting"] is None
    assert "none of the efSearch values tried (2, 3)" in data["recommendation"]


def test_configured_index_that_reaches_the_target_names_a_cheaper_sweep_too(
    hnsw: Path, tmp_path: Path
) -> None:
    out = tmp_path / "r.json"
    code, _, err = invoke(
        "--store",
        f"faiss:{hnsw}?efSearch=256",
        "--queries",
        "100",
        "--fetch",
        "4",
        "--target",
        "0.05",
        "--sweep",
        "efSearch=64,256",
        "--json",
        str(out),
    )
    data = json.loads(out.read_text())
    assert code == 0, err
    runs = {run["value"]: run for run in data["sweep"]["runs"]}
    assert runs[64]["recommended_fetch"] == 4  # a cheaper setting reaches it too
    assert data["recommended_setting"] == {"efSearch": 64, "fetch": 4}
    assert data["recommendation"].startswith("set efSearch=64 and fetch 4")
