"""Where a run's filters come from: a question's own ``filter`` (checked when the set is
read, a bad one is exit 2 naming the line), ``--filter`` for every query (AND-ed with the
question's), and ``[ci.compare-ann] filter``; the manifest records every distinct filter."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from indexcheck.api import run_ci
from indexcheck.cli.app import Group
from indexcheck.cli.compare_ann import compare_ann_cmd
from indexcheck.commands.ci import CiConfig
from indexcheck.errors import DataFileError, InputError
from indexcheck.filters import canonical, parse_filter
from indexcheck.inputs.question_filters import filters_manifest, run_filters
from indexcheck.inputs.questions import load_questions
from indexcheck.testing import HashEmbedder

N = 120


def invoke(*args: str) -> Any:
    group = Group(name="indexcheck", commands={"compare-ann": compare_ann_cmd})
    return CliRunner().invoke(group, ["compare-ann", *args])


@pytest.fixture()
def kb(tmp_path: Path) -> dict[str, Path]:
    texts = [f"chunk {i} about {'kidneys' if i % 3 == 0 else 'lungs'} number {i}" for i in range(N)]
    vecs = HashEmbedder(32).embed(texts)
    meta = [{"profile": "ckd" if i % 3 == 0 else "copd", "year": 2000 + i % 20} for i in range(N)]
    store = tmp_path / "kb.parquet"
    pq.write_table(
        pa.table(
            {
                "id": [f"c{i}" for i in range(N)],
                "vector": pa.array(np.asarray(vecs).tolist(), pa.list_(pa.float32())),
                "text": texts,
                "metadata": pa.array(meta),
            }
        ),
        store,
    )
    qfile = tmp_path / "q.jsonl"
    rows = [
        {"id": f"q{i}", "question": texts[i], "filter": {"profile": meta[i]["profile"]}}
        for i in range(30)
    ]
    rows[1].pop("filter")  # one question searches the whole index
    qfile.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return {"store": store, "questions": qfile, "root": tmp_path}


def test_question_filter_is_read_in_canonical_form(kb: dict[str, Path]) -> None:
    qs = load_questions(kb["questions"], require_labels=False)
    assert qs[0].filter == {"profile": {"$eq": "ckd"}}
    assert qs[1].filter is None


@pytest.mark.parametrize(
    "bad, words",
    [
        ({"profile": {"$like": "c%"}}, "unknown operator '$like'"),
        ({"year": {"$gt": "2020"}}, "takes number"),
        ([1, 2], "expected an object"),
    ],
)
def test_a_bad_question_filter_names_its_line(tmp_path: Path, bad: Any, words: str) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(
        json.dumps({"id": "a", "question": "x", "expected": ["c1"]})
        + "\n"
        + json.dumps({"id": "b", "question": "y", "expected": ["c1"], "filter": bad})
        + "\n"
    )
    with pytest.raises(DataFileError, match=r"line 2.*'filter' is not a valid filter") as err:
        load_questions(path)
    assert words in str(err.value)


def test_common_filter_is_anded_with_the_questions_own() -> None:
    common = parse_filter({"year": {"$gte": 2010}})
    out = run_filters(2, [{"profile": "ckd"}, None], common)
    assert out is not None
    assert canonical(out[0]) == canonical(parse_filter({"profile": "ckd", "year": {"$gte": 2010}}))
    assert out[1] == common
    assert run_filters(2, [None, None], None) is None
    assert filters_manifest(out) == {
        "filters": sorted({canonical(out[0]), canonical(common)}),
    }


def test_cli_per_question_filters_reach_truth_and_json(kb: dict[str, Path]) -> None:
    out = kb["root"] / "r.json"
    res = invoke(
        "--store", f"parquet:{kb['store']}", "--questions", str(kb["questions"]),
        "--embedder", "py:indexcheck.testing:HASH32", "-k", "4", "--fetch", "4",
        "--json", str(out),
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["manifest"]["filters"] == [
        '{"profile":{"$eq":"ckd"}}',
        '{"profile":{"$eq":"copd"}}',
    ]
    assert data["query_filters"][0] == '{"profile":{"$eq":"ckd"}}'
    assert data["query_filters"][1] is None
    by = {f["canonical"]: f for f in data["filters"]}
    assert by['{"profile":{"$eq":"ckd"}}']["matching_chunks"] == 40
    assert by['{"profile":{"$eq":"copd"}}']["bucket"] == ">50%"
    row = data["by_fetch"][0]
    assert row["recall_at_k"] == 1.0 and row["short_result_rate"] == 0.0  # exact store


def test_cli_filter_on_a_store_without_metadata_is_exit_2(tmp_path: Path) -> None:
    from indexcheck.stores.faiss.store import write_faiss_folder

    write_faiss_folder(tmp_path / "f", [f"c{i}" for i in range(20)], np.eye(20, 8, dtype="f4"))
    np.save(tmp_path / "q.npy", np.eye(3, 8, dtype="f4"))
    res = invoke(
        "--store", f"faiss:{tmp_path / 'f'}", "--query-vectors", str(tmp_path / "q.npy"),
        "--filter", '{"profile": "ckd"}',
    )  # fmt: skip
    assert res.exit_code == 2, res.output
    assert "no metadata" in res.output and "Traceback" not in res.output


def test_ci_compare_ann_takes_a_filter(kb: dict[str, Path]) -> None:
    toml = kb["root"] / "ci.toml"
    toml.write_text(
        f'[ci]\nstore = "parquet:{kb["store"]}"\n'
        "[ci.compare-ann]\nqueries = 20\nk = 4\nfetch = [4]\n"
        'filter = {profile = "ckd"}\n'
    )
    result = run_ci(CiConfig.from_toml(toml))
    ann = result.results["compare-ann"]
    assert ann["filters"][0]["canonical"] == '{"profile":{"$eq":"ckd"}}'
    assert ann["by_fetch"][0]["short_result_rate"] == 0.0
    toml.write_text(
        f'[ci]\nstore = "parquet:{kb["store"]}"\n'
        "[ci.compare-ann]\nqueries = 20\n"
        'filter = {profile = {"$regex" = "c"}}\n'
    )
    with pytest.raises(InputError, match=r"compare-ann.filter is not a valid filter"):
        CiConfig.from_toml(toml)


def test_probe_scale_under_a_filter(kb: dict[str, Path]) -> None:
    from indexcheck.cli.probe_scale import probe_scale_cmd

    out = kb["root"] / "p.json"
    group = Group(name="indexcheck", commands={"probe-scale": probe_scale_cmd})
    res = CliRunner().invoke(
        group,
        [
            "probe-scale", "--store", f"parquet:{kb['store']}?metric=cosine",
            "--filter", '{"profile": "copd"}', "--json", str(out),
        ],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    assert data["transform"] == "cos"
    assert data["manifest"]["filters"] == ['{"profile":{"$eq":"copd"}}']
    assert "searched under the filter" in data["message"]
    ids = {p["id"] for p in data["pairs"]}
    assert ids and all(int(i[1:]) % 3 != 0 for i in ids)  # only copd chunks came back
