"""diagnose: one planted fault per stage, each question gets its planted label."""

from __future__ import annotations

import json
from pathlib import Path

import faiss
import numpy as np
import pytest

from indexcheck.commands.diagnose import DiagnoseSettings, diagnose
from indexcheck.commands.kit.retrieval import DEFAULT_REFUSAL_PATTERN
from indexcheck.embedders.base import BaseEmbedder
from indexcheck.inputs.corpus import corpus_from_pairs
from indexcheck.inputs.questions import Question
from indexcheck.stores import open_store

D = 16


class DictEmbedder(BaseEmbedder):
    """Returns a prescribed unit vector for each known text (a planted-geometry embedder)."""

    model_id = "dict:16"
    dimension = D

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        super().__init__()
        self.table = table

    def _embed_batch(self, texts):
        return np.stack([self.table[t] for t in texts]).astype(np.float32), len(texts)


def unit(*pairs: tuple[int, float], noise: int | None = None) -> np.ndarray:
    v = np.zeros(D, dtype=np.float64)
    for axis, w in pairs:
        v[axis] += w
    if noise is not None:
        v += 0.02 * np.random.default_rng(noise).standard_normal(D)
    return (v / np.linalg.norm(v)).astype(np.float32)


def planted(tmp_path: Path):
    """20 chunks around centroid A (axis 0) plus planted ones; an IVF index whose list for
    centroid B (axis 1) is skipped at nprobe=1."""
    chunks: dict[str, np.ndarray] = {}
    for i in range(20):  # filler near A, each with its own direction
        chunks[f"fill-{i:02d}"] = unit((0, 1.0), (4 + i % 12, 0.35), noise=i)
    chunks["ok-chunk"] = unit((0, 0.3), (2, 1.0))
    chunks["shifted-chunk"] = unit((0, 0.3), (3, 1.0))
    chunks["shift-neighbour"] = unit((0, 0.3), (3, 0.2), (5, 1.0))
    chunks["ann-chunk"] = unit((1, 0.6), (6, 0.8))  # nearer centroid B than A
    chunks["ranked-5th"] = unit((0, 0.3), (7, 0.55), (8, 0.45))
    for j in range(4):
        chunks[f"decoy-{j}"] = unit((0, 0.3), (7, 1.0), (9 + j, 0.05 * (j + 1)))
    chunks["weak-chunk"] = unit((0, 0.3), (10, 1.0))
    chunks["topic-not-covered-legal"] = unit((0, 0.3), (11, 1.0))
    ids = list(chunks)
    texts = {cid: f"text of {cid}" for cid in ids}
    fresh = {texts[c]: v for c, v in chunks.items()}
    stored = np.stack([chunks[c] for c in ids])
    stored[ids.index("shifted-chunk")] = chunks["shift-neighbour"]  # the planted misalignment

    quantizer = faiss.IndexFlatIP(D)
    quantizer.add(np.stack([unit((0, 1.0)), unit((1, 1.0))]))
    index = faiss.IndexIVFFlat(quantizer, D, 2, faiss.METRIC_INNER_PRODUCT)
    index.is_trained = True
    index.add(stored)
    folder = tmp_path / "ivf"
    folder.mkdir()
    faiss.write_index(index, str(folder / "index.faiss"))
    (folder / "ids.json").write_text(json.dumps(ids))

    q = {
        "q-ok": (unit((0, 0.3), (2, 1.0), noise=100), ["ok-chunk"], "OK"),
        "q-shift": (unit((0, 0.3), (3, 1.0), noise=101), ["shifted-chunk"], "MISALIGNED"),
        "q-ann": (unit((0, 0.35), (6, 0.9)), ["ann-chunk"], "ANN_MISS"),
        "q-ranked": (unit((0, 0.3), (7, 1.0)), ["ranked-5th"], "RANKED_OUT"),
        "q-below": (unit((0, 0.3), (10, 0.5), (14, 0.9)), ["weak-chunk"], "BELOW_THRESHOLD"),
        "q-notret": (unit((0, 1.0), (4, 0.35), noise=3), ["ann-chunk"], "NOT_RETRIEVED"),
    }
    oos = {
        "q-answered": (unit((0, 0.3), (2, 1.0), noise=7), "ANSWERED_OUT_OF_SCOPE"),
        "q-refused": (unit((15, 1.0)), "REFUSED_OK"),
        "q-content": (unit((0, 0.3), (11, 1.0), noise=8), "REFUSED_BY_CONTENT"),
    }
    questions, labels = [], {}
    for qid, (vec, expected, label) in q.items():
        questions.append(Question(qid, f"question {qid}", expected))
        fresh[f"question {qid}"] = vec
        labels[qid] = label
    for qid, (vec, label) in oos.items():
        questions.append(Question(qid, f"question {qid}", [], in_scope=False))
        fresh[f"question {qid}"] = vec
        labels[qid] = label
    corpus = corpus_from_pairs(ids, [texts[c] for c in ids])
    return folder, corpus, questions, labels, DictEmbedder(fresh)


def test_each_planted_fault_gets_its_label(tmp_path: Path) -> None:
    folder, corpus, questions, labels, emb = planted(tmp_path)
    store = open_store(f"faiss:{folder}?nprobe=1")
    r = diagnose(
        DiagnoseSettings(k=4, fetch=8, threshold=0.8, refusal_pattern=DEFAULT_REFUSAL_PATTERN),
        store,
        emb,
        questions,
        corpus,
    )
    got = {d.id: d.label for d in r.questions}
    assert got == labels
    by = {d.id: d for d in r.questions}
    assert by["q-shift"].holds_vector_of == "shift-neighbour"
    assert by["q-ann"].exact_rank == 1 and by["q-ann"].ann_rank is None
    assert by["q-ranked"].ann_rank == 5
    assert r.ground_truth == "backend_exact"
    assert not r.ok
    assert r.counts["OK"] == 1 and r.counts["REFUSED_OK"] == 1
    assert r.examples["ANN_MISS"] == ["q-ann"]


def test_with_every_list_probed_the_ann_miss_disappears(tmp_path: Path) -> None:
    folder, corpus, questions, labels, emb = planted(tmp_path)
    store = open_store(f"faiss:{folder}?nprobe=2")
    r = diagnose(
        DiagnoseSettings(k=4, fetch=8, threshold=0.7, refusal_pattern=DEFAULT_REFUSAL_PATTERN),
        store,
        emb,
        questions,
        corpus,
    )
    assert {d.id: d.label for d in r.questions}["q-ann"] == "OK"
    # exact and ANN metrics agree once the search is exhaustive
    assert r.metrics["exact"].hit_at_k.value == r.metrics["ann"].hit_at_k.value


def test_metrics_side_by_side_show_the_ann_loss(tmp_path: Path) -> None:
    folder, corpus, questions, labels, emb = planted(tmp_path)
    r = diagnose(
        DiagnoseSettings(k=4, fetch=8),
        open_store(f"faiss:{folder}?nprobe=1"),
        emb,
        questions,
        corpus,
    )
    exact, ann = r.metrics["exact"], r.metrics["ann"]
    assert exact.hit_at_k.observed == 6 and exact.hit_at_k.excluded == 3
    assert ann.hit_at_k.value < exact.hit_at_k.value
    for m in (exact, ann):
        for metric in (m.hit_at_k, m.recall_at_k, m.mrr, m.ndcg_at_k):
            assert 0.0 <= metric.low <= metric.value <= metric.high <= 1.0


@pytest.mark.parametrize("threshold", [None])
def test_without_threshold_out_of_scope_is_answered(tmp_path: Path, threshold) -> None:
    folder, corpus, questions, labels, emb = planted(tmp_path)
    r = diagnose(
        DiagnoseSettings(
            k=4, fetch=8, threshold=threshold, refusal_pattern=DEFAULT_REFUSAL_PATTERN
        ),
        open_store(f"faiss:{folder}?nprobe=2"),
        emb,
        questions,
        corpus,
    )
    got = {d.id: d.label for d in r.questions}
    assert got["q-refused"] == "ANSWERED_OUT_OF_SCOPE"
    assert got["q-content"] == "REFUSED_BY_CONTENT"
    # no threshold was set: nothing "passed" one; the detail says what to do instead
    (answered,) = [d for d in r.questions if d.id == "q-refused"]
    assert "passed the threshold" not in (answered.detail or "")
    assert "no --threshold was set" in (answered.detail or "")


def test_cli_on_fixture_kb_json_and_exit_code(fixture_kb, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from indexcheck.cli.app import cli

    out = tmp_path / "d.json"
    r = CliRunner().invoke(
        cli,
        [
            "diagnose",
            "--store",
            f"faiss:{fixture_kb['faiss']}",
            "--questions",
            "fixtures/questions.jsonl",
            "--chunks",
            "fixtures/chunks.jsonl",
            "--threshold",
            "0.3",
            "--threshold-scale",
            "cosine",
            "--json",
            str(out),
            "--report",
            str(tmp_path / "rep"),
        ],
    )
    data = json.loads(out.read_text())
    assert r.exit_code == (0 if data["ok"] else 1), r.stderr
    assert sum(data["counts"].values()) == 55
    assert data["threshold"]["cosine"] == pytest.approx(0.3, abs=1e-6)
    assert {"exact", "ann"} == set(data["metrics"])
    assert data["manifest"]["embedding"]["requests"] >= 1
    assert (tmp_path / "rep" / "diagnose.md").is_file()
    # a fixture question whose chunk is cut by k shows up with its rank
    ranked = [q for q in data["questions"] if q["label"] == "RANKED_OUT"]
    assert all(q["ann_rank"] > 4 for q in ranked)
