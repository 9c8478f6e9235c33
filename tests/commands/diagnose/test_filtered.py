"""diagnose under filters: FILTERED_OUT where a chunk's profile metadata is planted wrong
(its metadata and the filter shown side by side), SHORT_RESULTS where pgvector's HNSW
scan returns fewer than k under a 1% filter, and neither label anywhere else."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from indexcheck.commands.diagnose import DiagnoseSettings, diagnose
from indexcheck.inputs.questions import Question, load_questions
from indexcheck.stores import open_store
from indexcheck.testing import HashEmbedder
from tests import pg_support

N = 90


def _texts(n: int) -> list[str]:
    return [
        f"note {i} about {['kidney', 'lung', 'heart'][i % 3]} care plan {i} visit{i}"
        for i in range(n)
    ]


def test_filtered_out_is_planted_and_nowhere_else(tmp_path: Path) -> None:
    texts = _texts(N)
    profiles = [["ckd", "copd", "hf"][i % 3] for i in range(N)]
    meta = [{"profile": p} for p in profiles]
    meta[6] = {"profile": "copd"}  # the metadata bug: c6 is a kidney (ckd) chunk
    path = tmp_path / "kb.parquet"
    vecs = HashEmbedder(32).embed(texts)
    pq.write_table(
        pa.table(
            {
                "id": [f"c{i}" for i in range(N)],
                "vector": pa.array(np.asarray(vecs).tolist(), pa.list_(pa.float32())),
                "text": texts,
                "metadata": pa.array(meta),
            }
        ),
        path,
    )
    qfile = tmp_path / "q.jsonl"
    rows = [
        {"id": f"q{i}", "question": texts[i], "expected": [f"c{i}"], "filter": {"profile": "ckd"}}
        for i in range(0, 30, 3)
    ]
    qfile.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with open_store(f"parquet:{path}?metric=cosine") as store:
        result = diagnose(
            DiagnoseSettings(k=4, fetch=10), store, HashEmbedder(32), load_questions(qfile), None
        )
    labels = {d.id: d.label for d in result.questions}
    assert labels.pop("q6") == "FILTERED_OUT"
    assert set(labels.values()) == {"OK"}
    (bad,) = [d for d in result.questions if d.label == "FILTERED_OUT"]
    assert '{"profile": "copd"}' in bad.detail and '{"profile":{"$eq":"ckd"}}' in bad.detail
    assert result.counts["FILTERED_OUT"] == 1 and result.counts["SHORT_RESULTS"] == 0
    assert result.ground_truth == "local_exact_filtered"


psycopg = pytest.importorskip("psycopg")
pg_server = pg_support.pg_server
PG_N = 3000


@pytest.fixture(scope="module")
def pg_spec(pg_server: pg_support.PgServer) -> Iterator[str]:
    texts = _texts(PG_N)
    vecs = HashEmbedder(32).embed(texts)
    with psycopg.connect(pg_server.dsn, autocommit=True) as c:
        c.execute("DROP TABLE IF EXISTS filt_diag")
        c.execute(
            "CREATE TABLE filt_diag (id text PRIMARY KEY, embedding vector(32), content text, "
            "cmetadata jsonb)"
        )
        with c.cursor() as cur:
            cur.executemany(
                "INSERT INTO filt_diag VALUES (%s, %s::vector, %s, %s::jsonb)",
                [
                    (
                        f"c{i}",
                        "[" + ",".join(f"{x:.7f}" for x in vecs[i]) + "]",
                        texts[i],
                        json.dumps({"profile": "rare" if i % 100 == 0 else "common"}),
                    )
                    for i in range(PG_N)
                ],
            )
        c.execute("CREATE INDEX ON filt_diag USING hnsw (embedding vector_cosine_ops)")
        c.execute("ANALYZE filt_diag")
        yield f"pgvector:{pg_server.dsn.split('?', 1)[0]}?table=filt_diag"
        c.execute("DROP TABLE IF EXISTS filt_diag")


def _short_questions() -> list[Question]:
    """Questions worded like common chunks whose expected chunk is their nearest rare one
    (numpy, exact): the HNSW walk near them meets almost no rare row."""
    texts = _texts(PG_N)
    vecs = np.asarray(HashEmbedder(32).embed(texts))
    rare = np.arange(0, PG_N, 100)
    out = []
    for i in range(1, 400, 20):
        q = np.asarray(HashEmbedder(32).embed([texts[i]]))[0]
        best = rare[int(np.argmax(vecs[rare] @ q))]
        out.append(Question(f"q{i}", texts[i], [f"c{best}"], filter={"profile": "rare"}))
    return out


def test_short_results_are_planted_and_nowhere_else(pg_spec: str) -> None:
    qs = _short_questions()
    with open_store(pg_spec) as store:
        low = diagnose(DiagnoseSettings(k=4, fetch=4), store, HashEmbedder(32), qs, None)
    with open_store(f"{pg_spec}&ef_search=1000") as store:
        high = diagnose(DiagnoseSettings(k=4, fetch=4), store, HashEmbedder(32), qs, None)
    short = [d for d in low.questions if d.label == "SHORT_RESULTS"]
    assert len(short) >= len(qs) // 2
    assert all("chunks match it (fewer than k=4)" in d.detail for d in short)
    assert low.counts["FILTERED_OUT"] == 0
    assert high.counts["SHORT_RESULTS"] == 0 and high.counts["FILTERED_OUT"] == 0


def test_an_unfiltered_run_has_no_filter_labels(pg_spec: str) -> None:
    qs = [Question(q.id, q.question, q.expected) for q in _short_questions()[:5]]
    with open_store(pg_spec) as store:
        result = diagnose(DiagnoseSettings(k=4, fetch=4), store, HashEmbedder(32), qs, None)
    assert "FILTERED_OUT" not in result.counts and "SHORT_RESULTS" not in result.counts


def test_cli_diagnose_filter_and_manifest(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from indexcheck.cli.app import Group
    from indexcheck.cli.diagnose import diagnose_cmd

    texts = _texts(30)
    path = tmp_path / "kb.parquet"
    pq.write_table(
        pa.table(
            {
                "id": [f"c{i}" for i in range(30)],
                "vector": pa.array(
                    np.asarray(HashEmbedder(32).embed(texts)).tolist(), pa.list_(pa.float32())
                ),
                "text": texts,
                "metadata": pa.array(
                    [{"profile": ["ckd", "copd", "hf"][i % 3]} for i in range(30)]
                ),
            }
        ),
        path,
    )
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(
        json.dumps({"id": "q1", "question": texts[1], "expected": ["c1"]}) + "\n"
    )  # c1 is copd: the --filter ckd plants FILTERED_OUT
    out = tmp_path / "r.json"
    group = Group(name="indexcheck", commands={"diagnose": diagnose_cmd})
    res = CliRunner().invoke(
        group,
        [
            "diagnose", "--store", f"parquet:{path}?metric=cosine", "--questions", str(qfile),
            "--embedder", "py:indexcheck.testing:HASH32", "--filter", '{"profile": "ckd"}',
            "--json", str(out),
        ],
    )  # fmt: skip
    assert res.exit_code == 1, res.output
    data = json.loads(out.read_text())
    assert data["questions"][0]["label"] == "FILTERED_OUT"
    assert data["manifest"]["filters"] == ['{"profile":{"$eq":"ckd"}}']
    assert "FILTERED_OUT" in res.output
