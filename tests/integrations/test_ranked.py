"""The assemble step's cut (score threshold, then top-k) is one function: the default of
``diagnose --system`` when the app has no ``assemble``, and the LangChain adapter's."""

from __future__ import annotations

from typing import Any

import pytest

from indexcheck.commands.diagnose.system.hook import Candidate, System
from indexcheck.integrations.langchain.system import LangChainSystem
from indexcheck.integrations.ranked import keep_ranked

CANDS = [
    Candidate("a", "A", 0.2),
    Candidate("b", "B", 0.9),
    Candidate("c", "C", None),
    Candidate("d", "D", 0.5),
    Candidate("e", "E", 0.5),
]


class _App:
    model_id = "m"

    def retrieve(self, question: str, depth: int) -> list[Any]:
        return []

    def generate(self, question: str, context: Any) -> str:
        return ""


def _ids(cs: list[Any]) -> list[str]:
    return [c.id for c in cs]


@pytest.mark.parametrize(
    ("top_k", "threshold", "want"),
    [
        (None, None, ["a", "b", "c", "d", "e"]),
        (2, None, ["a", "b"]),
        (None, 0.5, ["b", "d", "e"]),
        (2, 0.5, ["b", "d"]),
        (None, 0.0, ["a", "b", "c", "d", "e"]),  # a missing score counts as 0.0
    ],
)
def test_the_hooks_default_keeps_the_given_order(
    top_k: int | None, threshold: float | None, want: list[str]
) -> None:
    got = System(_App(), "app").assemble("q", CANDS, top_k=top_k, threshold=threshold)
    assert _ids(got) == want
    assert _ids(keep_ranked(CANDS, top_k=top_k, threshold=threshold)) == want


@pytest.mark.parametrize(
    ("higher", "top_k", "threshold", "want"),
    [
        (True, None, None, ["b", "d", "e", "a", "c"]),  # stable: d before e
        (True, 2, 0.3, ["b", "d"]),
        (False, None, None, ["c", "a", "d", "e", "b"]),  # distances: smallest first
        (False, None, 0.5, ["c", "a", "d", "e"]),
        (False, 1, 0.1, ["c"]),
    ],
)
def test_the_langchain_adapter_sorts_then_cuts(
    higher: bool, top_k: int | None, threshold: float | None, want: list[str]
) -> None:
    app = LangChainSystem(None, None, model_id="m", higher_is_better=higher)
    got = app.assemble("q", CANDS, top_k=top_k, threshold=threshold)
    assert _ids(got) == want
    same = keep_ranked(CANDS, top_k=top_k, threshold=threshold, higher_is_better=higher, sort=True)
    assert _ids(same) == want


def test_the_adapters_own_settings_apply_when_none_is_passed() -> None:
    app = LangChainSystem(None, None, model_id="m", threshold=0.5, top_k=1)
    assert _ids(app.assemble("q", CANDS)) == ["b"]
