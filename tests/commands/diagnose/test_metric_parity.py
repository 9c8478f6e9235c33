"""Retrieval metrics side by side with ranx, and the duplicate-id nDCG bug in diagnose.

ranx computes each metric from a run (query -> {doc: score}) and qrels (query -> {doc:
graded relevance}). A ranking as a store returns it is turned into a run by giving every
id its score in the store's order: a dict keeps the first copy of a repeated id, and ranx
sorts ties stably, so ties keep the store's order on both sides. nDCG is ranx's
``ndcg_burges`` (gain ``2**rel - 1``), MRR is ranx's ``mrr`` (no cutoff).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import faiss
import numpy as np
import pytest

from indexcheck.commands.diagnose import DiagnoseSettings, diagnose
from indexcheck.commands.diagnose.metrics import ndcg_at_k, retrieval_metrics
from indexcheck.inputs.corpus import corpus_from_pairs
from indexcheck.inputs.questions import Question
from indexcheck.stores import open_store
from tests.commands.diagnose.test_planted_stages import D, DictEmbedder, unit

ranx = pytest.importorskip("ranx")

K = 5
DOCS = [f"d{i:02d}" for i in range(30)]


def seeded_case(seed: int, n_questions: int = 40):
    """Questions with graded relevance and runs with ties, repeated ids, empty rankings.

    Returns (questions, rankings as the store returns them, scores per ranking)."""
    rng = np.random.default_rng(seed)
    questions, rankings, scores = [], {}, {}
    for qi in range(n_questions):
        rel = rng.choice(DOCS, size=int(rng.integers(1, 5)), replace=False)
        grades = {str(d): float(rng.integers(1, 4)) for d in rel}
        qid = f"q{qi}"
        questions.append(Question(qid, f"question {qi}", list(grades), grades=grades))
        if qi % 9 == 0:  # the store returned nothing
            rankings[qid], scores[qid] = [], []
            continue
        depth = int(rng.integers(3, 15))
        ids = [str(x) for x in rng.choice(DOCS, size=depth, replace=True)]  # repeats
        # scores on a coarse grid, descending: many ties
        s = sorted((float(x) for x in np.round(rng.uniform(0, 1, depth), 1)), reverse=True)
        rankings[qid], scores[qid] = ids, s
    questions.append(Question("out", "off topic", [], in_scope=False))
    return questions, rankings, scores


def ranx_means(questions, rankings, scores):
    qrels = {q.id: {d: int(g) for d, g in q.grades.items()} for q in questions if q.in_scope}
    run = {}
    for qid, ids in rankings.items():
        first: dict[str, float] = {}
        for cid, sc in zip(ids, scores[qid], strict=True):
            first.setdefault(cid, sc)  # a repeated id keeps its first (best) rank
        run[qid] = first
    metrics = [f"hit_rate@{K}", f"recall@{K}", "mrr", f"ndcg_burges@{K}"]
    out = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), metrics, make_comparable=True)
    return {
        "hit_at_k": out[f"hit_rate@{K}"],
        "recall_at_k": out[f"recall@{K}"],
        "mrr": out["mrr"],
        "ndcg_at_k": out[f"ndcg_burges@{K}"],
    }


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_means_equal_ranx(seed: int) -> None:
    questions, rankings, scores = seeded_case(seed)
    ours = retrieval_metrics(questions, rankings, K, seed=seed)
    theirs = ranx_means(questions, rankings, scores)
    for name, value in theirs.items():
        m = getattr(ours, name)
        assert m.value == pytest.approx(float(value), abs=1e-12), name
        # the out-of-scope question is excluded, the empty rankings are observed zeros
        assert (m.observed, m.missing, m.excluded) == (40, 0, 1)


def test_ties_keep_the_store_order() -> None:
    """Two tied ids: whichever the store returned first takes the better rank, as in ranx."""
    g = {"a": 1.0, "b": 3.0}
    q = [Question("q", "x", ["a", "b"], grades=g)]
    for order in (["a", "b"], ["b", "a"]):
        ours = retrieval_metrics(q, {"q": order}, 1).ndcg_at_k.value
        run = ranx.Run({"q": {order[0]: 0.5, order[1]: 0.5}})
        theirs = ranx.evaluate(ranx.Qrels({"q": {"a": 1, "b": 3}}), run, "ndcg_burges@1")
        assert ours == pytest.approx(float(theirs))


def test_a_repeated_id_counts_once() -> None:
    # counted twice, the repeat of the one relevant id gave 1 + 1/log2(3) = 1.63
    assert ndcg_at_k(["a", "a", "b"], {"a": 1.0}, 4) == pytest.approx(1.0)
    q = [Question("q", "x", ["b"])]
    m = retrieval_metrics(q, {"q": ["a", "a", "b"]}, 2)
    assert m.hit_at_k.value == 1.0 and m.mrr.value == pytest.approx(0.5)
    assert not math.isnan(m.ndcg_at_k.value)


def test_diagnose_on_a_store_holding_one_id_twice(tmp_path: Path) -> None:
    """A FAISS index whose ids.json names one chunk twice (two rows, one id), checked with
    a unique --chunks: nDCG stays within [0, 1] and the rank counts the id once."""
    vec = {
        "dup": unit((0, 1.0), (1, 0.2)),
        "target": unit((0, 1.0), (1, 0.3), (2, 0.2)),
        "other": unit((3, 1.0)),
    }
    rows = [("dup", vec["dup"]), ("dup", vec["dup"]), ("target", vec["target"]),
            ("other", vec["other"])]  # fmt: skip
    folder = tmp_path / "idx"
    folder.mkdir()
    index = faiss.IndexFlatIP(D)
    index.add(np.stack([v for _, v in rows]))
    faiss.write_index(index, str(folder / "index.faiss"))
    (folder / "ids.json").write_text(json.dumps([i for i, _ in rows]))
    texts = {"dup": "dup text", "target": "target text", "other": "other text"}
    table = {t: vec[i] for i, t in texts.items()}
    table["q dup"] = unit((0, 1.0), (1, 0.2))
    table["q target"] = unit((0, 1.0), (1, 0.2), (2, 0.01))
    corpus = corpus_from_pairs(list(texts), list(texts.values()), "chunks")
    questions = [
        Question("q1", "q dup", ["dup"]),
        Question("q1b", "q dup", ["dup"]),
        Question("q2", "q target", ["target"]),
    ]
    store = open_store(f"faiss:{folder}")
    try:
        res = diagnose(
            DiagnoseSettings(k=2, fetch=3), store, DictEmbedder(table), questions, corpus
        )
    finally:
        store.close()
    for ranking in ("exact", "ann"):
        m = res.metrics[ranking]
        assert 0.0 <= m.ndcg_at_k.value <= 1.0, (ranking, m.ndcg_at_k.value)
        assert m.hit_at_k.value == 1.0
    by_id = {d.id: d for d in res.questions}
    # the second row of 'dup' is not a result of its own: 'target' is second, not third
    assert by_id["q2"].ann_rank == 2 and by_id["q2"].label == "OK"
