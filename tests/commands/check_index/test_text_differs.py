"""check_index/text_differs.py: embedded_text_differs vs model_mismatch vs stale, a pure rule.

The framework-built cases (LlamaIndex's metadata header, a foreign model) are in
tests/frameworks/test_framework_indexes.py; here the rule itself and the measured cases
on the fixture texts: an instruction prefix and truncation are "text differs", edited
texts are stale, a rotated space is another model.
"""

from __future__ import annotations

import numpy as np
import pytest

from indexcheck.commands.check_index.text_differs import (
    LowCosineVerdict,
    explain_low_cosines,
    own_is_nearest,
)
from tests.builders.framework_corpus import embed_correct, embed_foreign, framework_corpus

T = 0.999


def judge(stored: np.ndarray, texts: list[str], holds: int = 0):
    fresh = embed_correct(texts)
    stored = stored / np.linalg.norm(stored, axis=1, keepdims=True)
    cos = (stored * fresh).sum(axis=1)
    near = own_is_nearest(stored, fresh, np.arange(len(texts)))
    return explain_low_cosines(cos, T, holds, near)


def test_rule_order() -> None:
    ok = explain_low_cosines(np.ones(10), T, 0)
    assert ok.verdict is LowCosineVerdict.OK
    assert explain_low_cosines(np.full(10, 0.9), T, 3).verdict is LowCosineVerdict.SHIFT
    few = np.r_[np.ones(8), 0.5, 0.6]
    assert explain_low_cosines(few, T, 0).verdict is LowCosineVerdict.STALE_VECTOR
    high = np.full(10, 0.9)
    assert explain_low_cosines(high, T, 0).verdict is LowCosineVerdict.EMBEDDED_TEXT_DIFFERS
    # high cosines that are not nearest their own text: another (related) model
    not_own = explain_low_cosines(high, T, 0, np.zeros(10, dtype=bool))
    assert not_own.verdict is LowCosineVerdict.MODEL_MISMATCH
    assert not_own.details["own_text_nearest_share"] == 0.0
    low = explain_low_cosines(np.full(10, 0.1), T, 0, np.ones(10, dtype=bool))
    assert low.verdict is LowCosineVerdict.MODEL_MISMATCH
    nan = explain_low_cosines(np.r_[np.full(9, 0.9), np.nan], T, 0, np.ones(10, dtype=bool))
    assert nan.verdict is LowCosineVerdict.EMBEDDED_TEXT_DIFFERS and nan.details["compared"] == 9
    with pytest.raises(ValueError):
        explain_low_cosines(high, T, 0, np.ones(3, dtype=bool))


def test_own_is_nearest() -> None:
    fresh = np.eye(3, dtype=np.float32)
    stored = np.array([[0.9, 0.1, 0], [0.8, 0.2, 0], [0, 0, 1]], dtype=np.float32)
    assert own_is_nearest(stored, fresh, np.arange(3)).tolist() == [True, False, True]
    # a repeated text's twin is not "another chunk"
    twins = np.vstack([fresh, fresh[:1]])
    got = own_is_nearest(np.vstack([stored, stored[:1]]), twins, np.arange(4))
    assert got.tolist() == [True, False, True, True]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return framework_corpus().texts


def test_prefix_and_truncation_are_text_differs(texts) -> None:
    prefixed = embed_correct(["passage: " + t for t in texts])
    truncated = embed_correct([t[: len(t) * 2 // 3] for t in texts])
    for stored in (prefixed, truncated):
        why = judge(stored, texts)
        assert why.verdict is LowCosineVerdict.EMBEDDED_TEXT_DIFFERS, why.details
        assert "--embedder" in why.advice


def test_foreign_model_is_model_mismatch(texts) -> None:
    why = judge(embed_foreign(texts), texts)
    assert why.verdict is LowCosineVerdict.MODEL_MISMATCH, why.details
    assert why.details["median_cosine"] < 0.2


def test_edited_texts_are_stale(texts) -> None:
    stored = embed_correct(texts)
    edited = list(texts)
    for p in (5, 20, 40):
        heading = edited[p].split("\n\n", 1)[0]
        edited[p] = heading + "\n\nThis service ended in May; ask at the front desk instead."
    why = judge(stored, edited)
    assert why.verdict is LowCosineVerdict.STALE_VECTOR, why.details
    assert why.details["below_threshold"] == 3
