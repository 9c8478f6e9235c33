"""probe-scale on framework-built indexes: honest provenance and the framework's formula.

LangChain's PGVector creates no ANN index, so the score is the operator the application
writes: the probe says so (``source: operator_assumed``), lists ``<=>``, ``<->``, ``<#>``,
and is ``probed`` once ``&operator=`` names the application's operator. LlamaIndex's
Chroma wrapper reports ``exp(-d)``: the probe on a LlamaIndex Chroma collection names
it. convert-threshold converts a threshold written against a framework's score.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.commands.probe_scale import probe_scale
from indexcheck.scales.transforms import convert_threshold
from indexcheck.stores import StoreOptions, open_store


def probe(spec: str):
    store = open_store(spec, StoreOptions(trust_pickle=True))
    try:
        return probe_scale(store)
    finally:
        store.close()


def test_pgvector_without_an_index_says_the_operator_is_assumed(framework_index) -> None:
    built = framework_index("langchain", "pgvector", "correct")
    r = probe(built.spec)
    assert r.ok and r.transform == "1-cos"
    assert r.source == "operator_assumed"
    assert [o["operator"] for o in r.operators] == ["<=>", "<->", "<#>"]
    assert "&operator=" in r.message and "&metric=" in r.message
    # LangChain's EUCLIDEAN strategy queries with <->: named, it is measured
    l2 = probe(built.spec + "&operator=<->")
    assert l2.ok and l2.transform == "l2" and l2.source == "probed" and not l2.operators
    names = {f["name"] for f in l2.framework_scores}
    assert "langchain-pgvector-euclidean" in names
    out = CliRunner().invoke(cli, ["probe-scale", "--store", built.spec, "--json", "-"])
    assert out.exit_code == 0, out.stderr
    assert json.loads(out.stdout)["source"] == "operator_assumed"
    # a threshold converted from the operator indexcheck chose would be on the wrong scale
    conv = CliRunner().invoke(
        cli, ["convert-threshold", "0.2", "--store", built.spec, "--to", "cos"]
    )
    assert conv.exit_code == 2 and "&operator=" in conv.stderr, conv.stderr
    named = built.spec + "&operator=<->"
    conv = CliRunner().invoke(cli, ["convert-threshold", "0.2", "--store", named, "--to", "cos"])
    assert conv.exit_code == 0, conv.stderr


def test_llamaindex_chroma_probe_names_exp_minus_d(framework_index) -> None:
    built = framework_index("llamaindex", "chroma", "correct")
    r = probe(built.spec)
    assert r.ok and r.transform == "l2^2" and r.source == "probed"
    li = [f for f in r.framework_scores if f["framework"] == "llamaindex"]
    assert [f["formula"] for f in li] == ["exp(-l2^2)"]
    assert "exp(-l2^2)" in r.message and "llamaindex-chroma-l2" in r.message


@pytest.mark.parametrize(
    ("layout", "formula", "name"),
    [("faiss", "1-l2^2/sqrt(2)", "langchain-faiss-euclidean")],
)
def test_langchain_faiss_probe_names_its_relevance_function(
    framework_index, layout: str, formula: str, name: str
) -> None:
    built = framework_index("langchain", layout, "correct")
    r = probe(built.spec)
    assert r.ok and r.transform == "l2^2"
    assert any(f["name"] == name and f["formula"] == formula for f in r.framework_scores)


def test_llamaindex_folders_probe_with_their_own_formula(framework_index) -> None:
    simple = probe(framework_index("llamaindex", "simple", "correct").spec)
    assert simple.transform == "cos"
    assert [f["name"] for f in simple.framework_scores] == ["llamaindex-simple"]
    faiss = probe(framework_index("llamaindex", "faiss", "correct").spec)
    assert faiss.transform == "l2^2"
    assert [f["name"] for f in faiss.framework_scores] == ["llamaindex-faiss-l2"]


def test_convert_threshold_from_a_framework_score() -> None:
    # 1 - l2^2/sqrt(2) = 0.8 -> l2^2 = 0.2*sqrt(2) -> cos = 1 - l2^2/2
    assert convert_threshold(0.8, "langchain-faiss-l2", "cos") == pytest.approx(
        1 - 0.1 * 2**0.5, abs=1e-9
    )
    assert convert_threshold(0.8, "exp(-l2^2)", "l2^2") == pytest.approx(0.2231435513, 1e-9)
    # exp(-d) with Chroma cosine distance: exp(cos-1)
    assert convert_threshold(0.9, "llamaindex-chroma-cosine", "cos") == pytest.approx(
        1 + __import__("math").log(0.9)
    )
    r = CliRunner().invoke(
        cli, ["convert-threshold", "0.8", "--from", "langchain-faiss-l2", "--to", "cos"]
    )
    assert r.exit_code == 0 and "0.858579" in r.stdout
    bad = CliRunner().invoke(
        cli,
        ["convert-threshold", "0.5", "--from", "langchain-faiss-max-inner-product", "--to", "cos"],
    )
    assert bad.exit_code == 2 and "not a monotone" in bad.stderr


def test_compare_ann_on_pgvector_reports_the_plan_per_depth(framework_index) -> None:
    """LangChain's PGVector has no ANN index: every depth is an exact plan, and the result
    warns; with an HNSW index (on a copy of the collection) and sequential scans priced
    out, the same depths run through the index and nothing is warned."""
    import psycopg

    from indexcheck.commands.compare_ann import CompareAnnSettings, compare_ann
    from tests.builders.framework_corpus import embed_correct, framework_corpus

    built = framework_index("langchain", "pgvector", "correct")
    queries = embed_correct(framework_corpus().texts[:8])
    store = open_store(built.spec)
    try:
        r = compare_ann(CompareAnnSettings(k=4, fetch=[4, 10]), store, queries)
    finally:
        store.close()
    assert [row.plan for row in r.by_fetch] == ["Seq Scan", "Seq Scan"]
    assert r.warnings and "says nothing about the index" in r.warnings[0]
    assert "says nothing about the index" in r.recommendation

    table = "lc_hnsw_copy"
    with psycopg.connect(built.details["dsn"], autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {table}")
        conn.execute(
            f"CREATE TABLE {table} AS SELECT e.id, e.document, e.embedding::vector(384) "
            "AS embedding FROM langchain_pg_embedding e JOIN langchain_pg_collection c "
            "ON c.uuid = e.collection_id WHERE c.name = %s",
            (built.details["collection"],),
        )
        conn.execute(f"CREATE INDEX ON {table} USING hnsw (embedding vector_cosine_ops)")
    base = built.spec.split("?", 1)[0]
    spec = f"{base}?table={table}&options=-c%20enable_seqscan%3Doff"
    store = open_store(spec)
    try:
        r = compare_ann(CompareAnnSettings(k=4, fetch=[4, 10]), store, queries)
    finally:
        store.close()
    assert all(row.plan and row.plan.startswith("Index Scan") for row in r.by_fetch)
    assert r.warnings == []


def test_probe_terminal_says_operator_and_framework_formula(framework_index) -> None:
    built = framework_index("langchain", "pgvector", "correct")
    r = CliRunner().invoke(cli, ["probe-scale", "--store", built.spec])
    assert r.exit_code == 0, r.stderr
    assert "not the application's scale" in r.stdout and "&operator=" in r.stdout
    li = framework_index("llamaindex", "chroma", "correct")
    r = CliRunner().invoke(cli, ["probe-scale", "--store", li.spec])
    assert r.exit_code == 0, r.stderr
    assert "exp(-l2^2)" in r.stdout and "llamaindex-chroma-l2" in r.stdout
