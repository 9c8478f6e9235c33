"""sweep-threshold under each question's filter: an out-of-scope question for profile 'a'
that is answered word for word by a profile-'b' chunk looks in scope on the whole index
(no threshold separates), but under its filter its top score is low and the sets
separate; per-filter separability is reported for a filter with at least 10 questions, and
JSON and terminal show each question's filter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import Group
from indexcheck.cli.sweep_threshold import sweep_threshold_cmd
from indexcheck.commands.sweep_threshold import SweepThresholdSettings, sweep_threshold
from indexcheck.inputs.questions import load_questions
from indexcheck.stores import open_store
from indexcheck.testing import HashEmbedder

A = [f"alpha kidney dialysis renal filtration note {i} ward{i}" for i in range(40)]
B = [f"beta lung asthma inhaler airway note {i} clinic{i}" for i in range(40)]


@pytest.fixture()
def setup(tmp_path: Path) -> dict[str, Path]:
    texts = A + B
    vecs = HashEmbedder(32).embed(texts)
    meta = [{"profile": "a"}] * 40 + [{"profile": "b"}] * 40
    store = tmp_path / "kb.parquet"
    pq.write_table(
        pa.table(
            {
                "id": [f"a{i}" for i in range(40)] + [f"b{i}" for i in range(40)],
                "vector": pa.array(np.asarray(vecs).tolist(), pa.list_(pa.float32())),
                "text": texts,
                "metadata": pa.array(meta),
            }
        ),
        store,
    )
    rows: list[dict[str, Any]] = [
        {"id": f"in{i}", "question": A[i], "expected": [f"a{i}"], "filter": {"profile": "a"}}
        for i in range(12)
    ] + [
        {"id": f"out{j}", "question": B[j], "in_scope": False, "filter": {"profile": "a"}}
        for j in range(10)
    ]
    filtered = tmp_path / "q.jsonl"
    filtered.write_text("".join(json.dumps(r) + "\n" for r in rows))
    bare = tmp_path / "bare.jsonl"
    bare.write_text(
        "".join(json.dumps({k: v for k, v in r.items() if k != "filter"}) + "\n" for r in rows)
    )
    return {"store": store, "filtered": filtered, "bare": bare, "root": tmp_path}


def _run(setup: dict[str, Path], which: str) -> Any:
    with open_store(f"parquet:{setup['store']}?metric=cosine") as store:
        qs = load_questions(setup[which])
        settings = SweepThresholdSettings(store, qs, k=4, higher_is_better=True)
        return sweep_threshold(settings, store, HashEmbedder(32), qs)


def test_the_filter_separates_what_the_whole_index_mixes(setup: dict[str, Path]) -> None:
    bare, filtered = _run(setup, "bare"), _run(setup, "filtered")
    assert bare.separable is False and bare.by_filter is None
    assert filtered.separable is True
    assert filtered.by_filter == [
        {
            "filter": '{"profile":{"$eq":"a"}}',
            "questions": 22,
            "in_scope": 12,
            "out_of_scope": 10,
            "separable": True,
            "min_in_scope_best": filtered.min_in_scope_best,
            "max_out_of_scope_top": filtered.max_out_of_scope_top,
        }
    ]
    assert all(r.filter == '{"profile":{"$eq":"a"}}' for r in filtered.questions)
    # the out-of-scope tops are profile-'a' chunks: the filter was applied by the store
    assert all(r.top_id.startswith("a") for r in filtered.questions)


def test_cli_filter_and_terminal(setup: dict[str, Path]) -> None:
    out = setup["root"] / "r.json"
    group = Group(name="indexcheck", commands={"sweep-threshold": sweep_threshold_cmd})
    res = CliRunner().invoke(
        group,
        [
            "sweep-threshold", "--store", f"parquet:{setup['store']}?metric=cosine",
            "--questions", str(setup["bare"]), "--embedder", "py:indexcheck.testing:HASH32",
            "--filter", '{"profile": "a"}', "--json", str(out),
        ],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["separable"] is True
    assert data["manifest"]["filters"] == ['{"profile":{"$eq":"a"}}']
    assert data["questions"][0]["filter"] == '{"profile":{"$eq":"a"}}'
    assert 'filter {"profile":{"$eq":"a"}}: 22 questions, separable' in res.output
