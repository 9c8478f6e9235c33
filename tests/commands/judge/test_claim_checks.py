"""The checks indexcheck makes itself on judged claims, the reply parser, and calibration."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from indexcheck.commands.judge import AnswerResult, AnswerStatus, ReplyError, parse_reply
from indexcheck.commands.judge.calibration import calibrate, cohen_kappa
from indexcheck.commands.judge.claims import (
    CitationStatus,
    citation_status,
    find_span,
    missing_numbers,
)
from indexcheck.commands.kit.verdicts import ClaimVerdict

PASSAGE = "Teen cards\n\nTeens aged 13 to 17 can apply on their own; a parent signature is " \
    "not required. Teen cards can borrow up to 20 items and place up to 10 holds."  # fmt: skip


TEEN = "Teen cards can borrow up to 20 items"
BOTH = "a parent signature is not required. " + TEEN + " and place up to 10 holds"
AGED = "Teens aged 13 to 17 can apply on their own; a parent signature is not required"


@pytest.mark.parametrize(
    ("span", "found"),
    [
        ("teen cards can borrow up to 20 items", TEEN),
        ("Teen   cards can\nborrow up to 20 items", TEEN),
        ("\uff34\uff25\uff25\uff2e cards can borrow up to 20 items", TEEN),  # NFKC
        ("a parent signature is not required. ... place up to 10 holds", BOTH),
        ("Teens aged 13 \u2026 not required", AGED),
        ("\u201ca parent signature is not required.\u201d", "a parent signature is not required"),
    ],
)
def test_span_found_despite_case_unicode_whitespace_and_elision(span: str, found: str) -> None:
    at = find_span(span, PASSAGE)
    assert at is not None and PASSAGE[at[0] : at[1]] == found


@pytest.mark.parametrize(
    "span",
    [
        "Teen cards can borrow up to 25 items",
        "place up to 10 holds ... a parent signature is not required",  # pieces out of order
        "",
        "...",
    ],
)
def test_span_not_found(span: str) -> None:
    assert find_span(span, PASSAGE) is None


@pytest.mark.parametrize(
    ("claim", "evidence", "missing"),
    [
        ("Loans last five days.", "Loans last 5 days.", []),
        ("A 20% discount applies.", "a 20 percent discount applies", []),
        ("A 20 percent discount applies.", "A discount applies.", ["20 percent"]),
        ("It costs $40 a year.", "It costs 40 dollars a year.", []),
        ("It costs $45 a year.", "It costs $40 a year.", ["$45"]),
        ("Sales run on 3 November.", "Sales run on 3 December.", ["November"]),
        ("Up to twenty-one items.", "up to 21 items", []),
        ("It holds 1,200 items.", "it holds 1200 items", []),
        ("One of the desks can help.", "A desk can help.", []),
    ],
)
def test_numbers_check(claim: str, evidence: str, missing: list[str]) -> None:
    assert missing_numbers(claim, evidence) == missing


def test_citation_status_table() -> None:
    S, P = ClaimVerdict.SUPPORTED, ClaimVerdict.PARTIALLY_SUPPORTED
    assert citation_status(S, ["a"], ["a"]) is CitationStatus.CITED_SUPPORTS
    assert citation_status(S, ["b"], ["a"]) is CitationStatus.CITED_NOT_SUPPORTING
    assert citation_status(P, ["a"], ["a"]) is CitationStatus.CITED_NOT_SUPPORTING
    assert citation_status(S, [], ["a"]) is CitationStatus.SUPPORTED_NOT_CITED
    assert citation_status(ClaimVerdict.UNSUPPORTED, [], []) is CitationStatus.UNCITED_UNSUPPORTED


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "not json",
        '{"claims": [{"claim": "x", "verdict": "PROBABLY"}]}',
        '{"claims": [{"verdict": "SUPPORTED"}]}',
        '{"claims": "none"}',
        '{"claims": [{"claim": "x", "verdict": "SUPPORTED", "evidence_span": 3}]}',
        '{"claims": [{"claim": "x", "verdict": "SUPP',
    ],
)
def test_unusable_replies_raise(raw: str) -> None:
    with pytest.raises(ReplyError):
        parse_reply(raw)


def test_reply_in_a_fence_and_loose_verdicts_parse() -> None:
    raw = '```json\n{"claims": [{"claim": "x", "verdict": "partially supported"}]}\n```'
    (c,) = parse_reply(raw)
    assert c["verdict"] is ClaimVerdict.PARTIALLY_SUPPORTED and c["evidence_span"] == ""


@given(st.lists(st.integers(0, 4), min_size=1, max_size=40))
def test_kappa_of_identical_labels_is_one(labels: list[int]) -> None:
    a = np.asarray(labels)
    k = cohen_kappa(a, a, 5)
    assert k == 1.0


def test_calibration_against_labels() -> None:
    from indexcheck.commands.judge import ClaimResult
    from indexcheck.commands.kit.verdicts import ClaimVerdict as V

    def claim(v: V) -> ClaimResult:
        return ClaimResult(
            "c", v, v, "", None, [], [], [], [], CitationStatus.UNCITED_UNSUPPORTED, ""
        )

    answers = [
        AnswerResult("a", AnswerStatus.JUDGED, 0.5, [claim(V.SUPPORTED), claim(V.UNSUPPORTED)]),
        AnswerResult("b", AnswerStatus.JUDGED, 1.0, [claim(V.SUPPORTED)]),
        AnswerResult("c", AnswerStatus.JUDGED, 0.0, [claim(V.CONTRADICTED)]),
        AnswerResult("d", AnswerStatus.JUDGED, 1.0, [claim(V.SUPPORTED)]),
    ]
    labels = {("a", 0): "SUPPORTED", ("a", 1): "SUPPORTED", ("b", 0): "SUPPORTED",
              ("c", 0): "CONTRADICTED", ("d", 0): "SUPPORTED"}  # fmt: skip
    out = calibrate(answers, labels, {})
    assert out["claims_labelled"] == 5 and out["agreement"] == pytest.approx(0.8)
    cm = np.asarray(out["confusion"]["rows_human_cols_judge"])
    assert cm.sum() == 5 and cm[0, 0] == 3 and cm[0, 2] == 1 and cm[3, 3] == 1
    k = out["kappa"]
    assert 0 < k["value"] < 1 and k["low"] <= k["value"] <= k["high"]
    assert out["groundedness_correlation"]["pearson"] is not None
    assert not math.isnan(out["groundedness_correlation"]["pearson"])
