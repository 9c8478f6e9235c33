"""sweep-threshold --observed: the refusal threshold calibrated on the scores the production
retriever reported in its traces, without querying the store.

The traces come from the real instrumentation of the LangChain test pipeline
(tests/builders/traced_pipeline.py). Its OTel GenAI spans record each document's score when
the retriever gives one; the pipeline's similarity retriever gives none, so the test writes
into them the scores the same FAISS index reports for the same query (LangChain's relevance
scores), then checks the recommendation against one computed by hand from those scores.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli

ROOT = Path(__file__).resolve().parents[3]
CHUNKS = ROOT / "fixtures" / "chunks.jsonl"
#: traced questions labelled out of scope in the test's question set
OUT = ("q003", "q005")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Any:
    pytest.importorskip("openinference.instrumentation.langchain")
    from tests.builders.trace_exports import write_exports
    from tests.builders.traced_pipeline import run_pipeline

    tmp = tmp_path_factory.mktemp("observed")
    rec = run_pipeline(tmp)
    rec.files = write_exports(rec, tmp / "exports")
    rec.tmp = tmp
    return rec


def _attr(span: dict[str, Any], key: str) -> dict[str, Any]:
    return next(a for a in span["attributes"] if a["key"] == key)


def _write_scored(recorded: Any, raw: bool) -> tuple[Path, dict[str, dict[str, float]]]:
    """The GenAI export with the FAISS index's own scores (LangChain's relevance scores, or
    with ``raw`` the store's L2 distances); query -> id -> score."""
    from langchain_community.vectorstores import FAISS

    from tests.builders.traced_pipeline import K, langchain_embeddings

    store = FAISS.load_local(
        str(recorded.faiss_dir),
        langchain_embeddings(),
        index_name="docs",
        allow_dangerous_deserialization=True,
    )
    data = json.loads(recorded.files["otlp_genai"].read_text())
    seen: dict[str, dict[str, float]] = {}
    for sp in data["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        if not sp["name"].startswith("retrieval"):
            continue
        query = _attr(sp, "gen_ai.retrieval.query.text")["value"]["stringValue"]
        search = (
            store.similarity_search_with_score
            if raw
            else store.similarity_search_with_relevance_scores
        )
        score = {d.id: float(s) for d, s in search(query, k=K)}
        attr = _attr(sp, "gen_ai.retrieval.documents")
        docs = json.loads(attr["value"]["stringValue"])
        for d in docs:
            d["score"] = score[d["id"]]
        attr["value"]["stringValue"] = json.dumps(docs)
        seen[query] = score
    path = recorded.tmp / f"genai-scored{'-raw' if raw else ''}.json"
    path.write_text(json.dumps(data))
    return path, seen


@pytest.fixture(scope="module")
def scored(recorded: Any) -> tuple[Path, dict[str, dict[str, float]]]:
    return _write_scored(recorded, raw=False)


@pytest.fixture(scope="module")
def labels(recorded: Any) -> Path:
    """The traced questions, two marked out of scope, their texts re-spaced and re-cased
    (the join folds both)."""
    from tests.builders.traced_pipeline import questions

    rows = []
    for q in questions():
        text = "  " + q["question"].upper().replace(" ", "  ")
        row = {"id": q["id"], "question": text}
        row |= {"in_scope": False} if q["id"] in OUT else {"expected": q["expected"]}
        rows.append(row)
    path = recorded.tmp / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def _by_hand(scores: dict[str, dict[str, float]], k: int, target: float) -> float:
    """The recall rule from the scores alone: the largest observed score t keeping the
    share of in-scope questions whose expected chunk is in the top k with score >= t at
    ``target`` or more."""
    from tests.builders.traced_pipeline import questions

    by_text = {q["question"]: q for q in questions()}
    best: list[float] = []  # per in-scope question, its expected chunk's score (or -inf)
    candidates: set[float] = set()
    for text, score in scores.items():
        ranked = sorted(score.items(), key=lambda kv: -kv[1])[:k]
        candidates.add(ranked[0][1])
        q = by_text[text]
        if q["id"] in OUT:
            continue
        hit = [s for cid, s in ranked if cid in q["expected"]]
        best.append(hit[0] if hit else float("-inf"))
        candidates.update(hit[:1])
    ok = [t for t in candidates if sum(b >= t for b in best) / len(best) >= target]
    return max(ok)


def test_observed_recommendation_equals_the_one_from_the_same_scores(
    scored: tuple[Path, dict[str, dict[str, float]]], labels: Path
) -> None:
    path, scores = scored
    r = run("sweep-threshold", "--observed", str(path), "--questions", str(labels),
            "-k", "3", "--recall", "0.75", "--json", "-")  # fmt: skip
    assert r.exit_code in (0, 1), r.output
    out = json.loads(r.stdout[r.stdout.index("{") :])
    assert out["in_scope"] == 4 and out["out_of_scope"] == 2
    want = _by_hand(scores, 3, 0.75)
    assert out["recommended_threshold"]["backend"] == pytest.approx(want)
    # no store was probed: the scale is the production backend's, said to be unknown
    assert out["recommended_threshold"]["cosine"] is None
    assert out["scale"]["transform"] is None and "unknown" in out["scale"]["note"]
    assert out["manifest"]["observed"]["labelled_from_questions"] == 6
    assert "cosine" not in out["verdict"]


def test_a_trace_without_scores_is_exit_2_in_one_line(recorded: Any, labels: Path) -> None:
    """LangChain's OpenInference instrumentor records no document.score."""
    r = run("sweep-threshold", "--observed", str(recorded.files["openinference_jsonl"]),
            "--questions", str(labels), "--chunks", str(CHUNKS))  # fmt: skip
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "scores are absent" in lines[0] and "--store" in lines[0]


def test_neither_store_nor_observed_is_exit_2(labels: Path) -> None:
    r = run("sweep-threshold", "--questions", str(labels))
    assert r.exit_code == 2
    assert "--store" in r.stderr and "--observed" in r.stderr


def test_check_answers_reads_traces_paired_by_content_hash(recorded: Any) -> None:
    """check-answers takes a trace export (--answers-format), its documents without ids
    paired to --chunks by content hash, and flags what the pipeline's own answers file
    gives."""

    def flagged(path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
        r = run("check-answers", "--answers", str(path), "--chunks", str(CHUNKS),
                "--json", "-", *extra)  # fmt: skip
        assert r.exit_code in (0, 1), r.output
        out = json.loads(r.stdout[r.stdout.index("{") :])
        text = {a["id"]: a["question"] for a in recorded.answers}
        text |= {a.id: a.question for a in _rows(path)}
        return r.exit_code, {text[a["id"]]: a.get("flags") for a in out["answers"]}

    # plant a URL no chunk holds in the fabricated answer, in both files alike
    from tests.builders.traced_pipeline import FABRICATE, questions

    text = next(q["question"] for q in questions() if q["id"] == FABRICATE[0])
    said = next(a["answer"] for a in recorded.answers if a["question"] == text)
    planted = said + " See https://planted.example/rules."
    files = {}
    for name in ("answers", "openinference_jsonl"):
        body = recorded.files[name].read_text()
        assert json.dumps(said)[1:-1] in body
        files[name] = recorded.tmp / f"planted-{recorded.files[name].name}"
        files[name].write_text(body.replace(json.dumps(said)[1:-1], json.dumps(planted)[1:-1]))
    own = flagged(files["answers"])
    assert own[0] == 1 and own[1][text]  # the planted URL is flagged
    assert flagged(files["openinference_jsonl"], "--answers-format", "openinference") == own


def _rows(path: Path) -> list[Any]:
    from indexcheck.inputs.answers import read_answers
    from indexcheck.inputs.corpus import load_chunks

    return read_answers(path, chunks=load_chunks(CHUNKS, "id", "text")).rows


def test_with_a_store_only_its_scale_is_probed(recorded: Any, labels: Path) -> None:
    """--store with --observed names the score scale (the probe finds FAISS's L2 distance,
    lower is better); the thresholds are the traced raw scores."""
    path, scores = _write_scored(recorded, raw=True)
    spec = f"faiss:{recorded.faiss_dir}?index_name=docs"
    r = run("sweep-threshold", "--observed", str(path), "--questions", str(labels),
            "--store", spec, "--trust-pickle", "-k", "3", "--recall", "0.75",
            "--json", "-")  # fmt: skip
    assert r.exit_code in (0, 1), r.output
    out = json.loads(r.stdout[r.stdout.index("{") :])
    assert out["scale"]["higher_is_better"] is False
    negated = {q: {i: -v for i, v in s.items()} for q, s in scores.items()}
    want = -_by_hand(negated, 3, 0.75)
    assert out["recommended_threshold"]["backend"] == pytest.approx(want)
    assert out["recommended_threshold"]["cosine"] is not None


def test_traces_whose_question_is_not_labelled_are_named(
    scored: tuple[Path, dict[str, dict[str, float]]], labels: Path, tmp_path: Path
) -> None:
    few = tmp_path / "few.jsonl"
    few.write_text("".join(labels.read_text().splitlines(keepends=True)[:3]))
    r = run("sweep-threshold", "--observed", str(scored[0]), "--questions", str(few),
            "-k", "3", "--json", "-")  # fmt: skip
    assert r.exit_code in (0, 1), r.output
    assert "3 of 6 traces are left out" in r.stderr
    out = json.loads(r.stdout[r.stdout.index("{") :])
    assert len(out["manifest"]["observed"]["unlabelled"]) == 3
    assert out["in_scope"] + out["out_of_scope"] == 3
