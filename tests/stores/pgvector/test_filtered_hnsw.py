"""Filtered search on pgvector with an HNSW index: a filter matching 1% of the rows
returns short results at the default ``hnsw.ef_search`` (the scan stops after 40
candidates and filters afterwards); compare-ann reports the short-result rate, raising
``ef_search`` in ``--sweep`` brings it down, and ``hnsw.iterative_scan`` is reported as not
available on the pgvector the tests run (0.6.2)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import Group
from indexcheck.cli.compare_ann import compare_ann_cmd
from indexcheck.commands.compare_ann import CompareAnnSettings, compare_ann, sweep_ann
from indexcheck.commands.kit.filtered_truth import filtered_ground_truth
from indexcheck.errors import FilterError
from indexcheck.filters import evaluate, parse_filter
from indexcheck.stores import open_store
from tests import pg_support

psycopg = pytest.importorskip("psycopg")

pg_server = pg_support.pg_server

N, D, Q = 3000, 16, 40
RARE = {"profile": "rare"}


def _vec(v: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.7f}" for x in v) + "]"


def _data() -> tuple[np.ndarray, list[dict[str, Any]], np.ndarray]:
    rng = np.random.default_rng(7)
    vecs = rng.standard_normal((N, D)).astype(np.float32)
    meta: list[dict[str, Any]] = [
        {"profile": "rare" if i % 100 == 0 else "common", "year": 2000 + (i // 100) % 25}
        for i in range(N)
    ]
    queries = rng.standard_normal((Q, D)).astype(np.float32)
    return vecs, meta, queries


@pytest.fixture(scope="module")
def spec(pg_server: pg_support.PgServer) -> Iterator[str]:
    vecs, meta, _ = _data()
    with psycopg.connect(pg_server.dsn, autocommit=True) as c:
        c.execute("DROP TABLE IF EXISTS filt_hnsw")
        c.execute(
            f"CREATE TABLE filt_hnsw (id text PRIMARY KEY, embedding vector({D}), "
            "content text, cmetadata jsonb)"
        )
        with c.cursor() as cur:
            cur.executemany(
                "INSERT INTO filt_hnsw VALUES (%s, %s::vector, %s, %s::jsonb)",
                [(f"c{i}", _vec(vecs[i]), f"t{i}", json.dumps(meta[i])) for i in range(N)],
            )
        c.execute("CREATE INDEX ON filt_hnsw USING hnsw (embedding vector_cosine_ops)")
        c.execute("ANALYZE filt_hnsw")
        yield f"pgvector:{pg_server.dsn.split('?', 1)[0]}?table=filt_hnsw"
        c.execute("DROP TABLE IF EXISTS filt_hnsw")


def invoke(*args: str) -> Any:
    group = Group(name="indexcheck", commands={"compare-ann": compare_ann_cmd})
    return CliRunner().invoke(group, ["compare-ann", *args])


def _numpy_truth(node: Any, k: int) -> list[list[str]]:
    vecs, meta, queries = _data()
    mask = evaluate(node, meta, missing="exclude")
    rows = np.flatnonzero(mask)
    x = vecs[rows] / np.linalg.norm(vecs[rows], axis=1, keepdims=True)
    qn = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    order = np.argsort(-(qn @ x.T), axis=1, kind="stable")[:, :k]
    return [[f"c{rows[j]}" for j in r] for r in order]


def test_exact_truth_under_filter_equals_numpy(spec: str) -> None:
    _, _, queries = _data()
    node = parse_filter({"profile": "rare", "year": {"$gte": 2010}})
    with open_store(spec) as store:
        truth, ft = filtered_ground_truth(store, queries, [node] * Q, 5, "cos")
    assert truth.ids.tolist() == _numpy_truth(node, 5)
    assert ft.count == N and int(ft.matching[0]) == 15  # rows 100j, year 2000 + j % 25 >= 2010
    assert ft.per_filter[0]["bucket"] == "<=1%"


def test_short_results_reported_and_swept_down(spec: str) -> None:
    _, _, queries = _data()
    filters = [RARE] * Q
    with open_store(spec) as store:
        assert store.info().details["pgvector_version"] == "0.6.2"
        result = compare_ann(
            CompareAnnSettings(k=4, fetch=[4, 10], filters=filters), store, queries
        )
    # at fetch 4 the ANN index ran under the filter; at 10 the planner chose an exact
    # sort over the matching rows, and the result says so
    plans = [r.plan or "" for r in result.by_fetch]
    assert plans[0].startswith("Index Scan") and plans[1] == "Seq Scan"
    assert "at fetch 10 PostgreSQL chose an exact plan" in result.recommendation
    base = result.by_fetch[0]
    assert base.short_result_rate is not None and base.short_result_rate > 0.5
    assert base.by_selectivity and base.by_selectivity[0]["bucket"] == "<=1%"
    assert base.by_selectivity[0]["short_result_rate"] == base.short_result_rate
    assert result.filters and result.filters[0]["matching_chunks"] == 30
    assert result.query_filters == ['{"profile":{"$eq":"rare"}}'] * Q
    text = result.recommendation
    assert "short results" in text and "hnsw.ef_search" in text and "partial index" in text
    assert "hnsw.iterative_scan is not available on pgvector 0.6.2" in text
    sweep = sweep_ann(
        CompareAnnSettings(k=4, fetch=[4, 10], filters=filters, sweep=("ef_search", [40, 1000])),
        lambda v: open_store(f"{spec}&ef_search={v}"),
        queries,
        result.truth,  # type: ignore[arg-type]
    )
    rates = [run["by_fetch"][0]["short_result_rate"] for run in sweep["runs"]]
    assert rates[0] == base.short_result_rate
    assert rates[1] < rates[0] / 2


def test_cli_filter_json_and_sweep(spec: str, tmp_path: Path) -> None:
    _, _, queries = _data()
    qpath = tmp_path / "q.npy"
    np.save(qpath, queries)
    out = tmp_path / "r.json"
    res = invoke(
        "--store", spec, "--query-vectors", str(qpath), "-k", "4", "--fetch", "4,10",
        "--filter", json.dumps(RARE), "--sweep", "ef_search=40,1000", "--json", str(out),
    )  # fmt: skip
    assert res.exit_code in (0, 1), res.output
    data = json.loads(out.read_text())
    assert data["by_fetch"][0]["short_result_rate"] > 0.5
    assert data["filters"][0]["canonical"] == '{"profile":{"$eq":"rare"}}'
    runs = data["sweep"]["runs"]
    assert runs[1]["by_fetch"][0]["short_result_rate"] < runs[0]["by_fetch"][0]["short_result_rate"]
    assert data["manifest"]["filters"] == ['{"profile":{"$eq":"rare"}}']
    assert "short results" in res.output
    assert 'filter {"profile":{"$eq":"rare"}}: 40 queries, matches 30 chunks (1.0%' in res.output
    assert "ef_search=1000: best-chunk miss fetch 4:" in res.output


@pytest.mark.parametrize(
    "bad, words",
    [
        ('{"profile": {"$regex": "r"}}', "unknown operator '$regex'"),
        ('{"profle": "rare"}', "did you mean 'profile'"),
        ('{"year": {"$gt": "2020"}}', "takes number"),
        ('{"pro\'file": "x"}', "not a plain identifier"),
    ],
)
def test_cli_bad_filter_is_exit_2(spec: str, tmp_path: Path, bad: str, words: str) -> None:
    _, _, queries = _data()
    qpath = tmp_path / "q.npy"
    np.save(qpath, queries[:3])
    res = invoke("--store", spec, "--query-vectors", str(qpath), "--filter", bad)
    assert res.exit_code == 2, res.output
    assert words in res.output
    assert "Traceback" not in res.output


def test_injection_in_value_matches_literally(spec: str) -> None:
    _, _, queries = _data()
    evil = "rare'); DROP TABLE filt_hnsw; --"
    with open_store(spec) as store:
        D, I = store.query(queries[:2], 4, {"profile": evil})
        assert (I == None).all()  # noqa: E711
        assert store.info().count == N  # the table is intact
        with pytest.raises(FilterError, match="cannot express|not a plain identifier"):
            store.query(queries[:1], 4, {"a;drop": 1})


def test_probe_scale_under_a_filter_on_pgvector(spec: str) -> None:
    from indexcheck.commands.probe_scale import probe_scale

    with open_store(spec) as store:
        result = probe_scale(store, filter={"profile": "common"})
    assert result.ok and result.transform == "1-cos"
    assert result.manifest_facts["filters"] == ['{"profile":{"$eq":"common"}}']
