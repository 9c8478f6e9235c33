"""diagnose past retrieval: the stages between the backend's results and the answer.

For an in-scope question whose expected chunk survived every retrieval stage (label OK),
the answers file says what happened next; the first stage that lost it is the label:

- ``CONTEXT_ASSEMBLY_LOSS``: the expected chunk was in the backend's top-k but not in the
  context the model received (cut by a token budget, deduplication or a reranker);
- ``GENERATION_REFUSED``: the model refused with the expected chunk in its context;
- ``UNGROUNDED``: the judge found UNSUPPORTED or CONTRADICTED claims in the answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Protocol

from ...inputs.answers import AnswerRow, is_refusal
from ..judge import AnswerResult, AnswerStatus
from ..judge.claims import ClaimVerdict, normalize
from ..kit.verdicts import Label


class _Labelled(Protocol):
    id: str
    in_scope: bool
    label: Label
    expected_id: str | None
    detail: str


def in_context(row: AnswerRow, chunk_id: str, chunk_text: str | None) -> bool:
    """Whether the chunk reached the model: by id among the passages, and, when the exact
    context sent is given, by its text inside that context."""
    if row.context is not None and chunk_text:
        return normalize(chunk_text) in normalize(row.context)
    return any(p.id == chunk_id for p in row.contexts)


def label_generation(
    questions: Sequence[_Labelled],
    answers: Mapping[str, AnswerRow],
    refusal: re.Pattern[str],
    judged: Mapping[str, AnswerResult] | None = None,
    texts: Mapping[str, str] | None = None,
) -> None:
    """Relabel, in place, questions that retrieval got right (label OK) but generation lost."""
    for d in questions:
        row = answers.get(d.id)
        if row is None or not d.in_scope or d.label != Label.OK or d.expected_id is None:
            continue
        text = (texts or {}).get(d.expected_id)
        if not in_context(row, d.expected_id, text):
            d.label = Label.CONTEXT_ASSEMBLY_LOSS
            d.detail = f"'{d.expected_id}' was in the top k but not in the context sent"
        elif is_refusal(row, refusal):
            d.label = Label.GENERATION_REFUSED
            d.detail = f"the model refused with '{d.expected_id}' in its context"
        elif judged is not None and d.id in judged:
            j = judged[d.id]
            bad = [
                c
                for c in j.claims
                if c.verdict in (ClaimVerdict.UNSUPPORTED, ClaimVerdict.CONTRADICTED)
            ]
            if j.status is AnswerStatus.JUDGED and bad:
                d.label = Label.UNGROUNDED
                d.detail = f"{len(bad)} claim(s) unsupported or contradicted: {bad[0].claim}"
