"""Retrieval metrics: hand-computed cases and properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from indexcheck.commands.diagnose.metrics import (
    hit_at_k,
    ndcg_at_k,
    recall_at_k,
    reciprocal_rank,
    retrieval_metrics,
)
from indexcheck.inputs.questions import Question


def test_hand_computed_cases() -> None:
    ranked = ["a", "b", "c", "d", "e"]
    assert hit_at_k(ranked, ["c"], 2) == 0.0 and hit_at_k(ranked, ["c"], 3) == 1.0
    assert recall_at_k(ranked, ["a", "e", "z"], 4) == pytest.approx(1 / 3)
    assert reciprocal_rank(ranked, ["d", "b"]) == 0.5
    assert reciprocal_rank(ranked, ["z"]) == 0.0
    # binary relevance, relevant at ranks 2 and 3 of 3: DCG = 1/log2(3) + 1/log2(4)
    dcg = 1 / math.log2(3) + 1 / 2
    idcg = 1 + 1 / math.log2(3)
    assert ndcg_at_k(ranked, {"b": 1, "c": 1}, 3) == pytest.approx(dcg / idcg)
    # graded: gain 2^g - 1
    assert ndcg_at_k(["x", "y"], {"x": 1, "y": 2}, 2) == pytest.approx(
        (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))
    )


ids = st.lists(st.sampled_from(list("abcdefghij")), min_size=1, max_size=10, unique=True)


@given(ids, st.integers(1, 10))
def test_identical_ranking_gives_one(ranked: list[str], k: int) -> None:
    expected = ranked[: min(k, len(ranked))]
    grades = {e: 1.0 for e in expected}
    assert hit_at_k(ranked, expected, k) == 1.0
    assert recall_at_k(ranked, expected, k) == 1.0
    assert reciprocal_rank(ranked, expected) == 1.0
    assert ndcg_at_k(ranked, grades, k) == pytest.approx(1.0)


@given(ids, ids, st.integers(1, 10))
def test_metrics_stay_in_unit_interval(ranked: list[str], expected: list[str], k: int) -> None:
    grades = {e: float(i % 3) for i, e in enumerate(expected)}
    for v in (
        hit_at_k(ranked, expected, k),
        recall_at_k(ranked, expected, k),
        reciprocal_rank(ranked, expected),
        ndcg_at_k(ranked, grades, k),
    ):
        assert 0.0 <= v <= 1.0 + 1e-12


def test_metric_set_counts_and_topics() -> None:
    qs = [
        Question("q1", "x", ["a"], topic="t1"),
        Question("q2", "y", ["b"], topic="t2"),
        Question("q3", "z", ["c"], topic="t2"),
        Question("o1", "w", [], in_scope=False),
    ]
    m = retrieval_metrics(qs, {"q1": ["a", "b"], "q2": ["c", "b"]}, k=1)
    assert m.hit_at_k.value == 0.5
    assert (m.hit_at_k.observed, m.hit_at_k.missing, m.hit_at_k.excluded) == (2, 1, 1)
    assert m.mrr.value == pytest.approx((1 + 0.5) / 2)
    assert m.by_topic["t1"]["hit_at_k"]["value"] == 1.0
    assert m.by_topic["t2"]["hit_at_k"]["value"] == 0.0
