"""A ``py:`` judge for tests: replies from fixtures/judge/replies.json, the same replies the
emulator is scripted with, chosen by the answer text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "judge"
CALLS: list[str] = []


def scripted_replies() -> dict[str, tuple[str, Any]]:
    """answer text -> (answer id, scripted reply) for every fixture answer with a reply."""
    replies = json.loads((FIXTURE / "replies.json").read_text(encoding="utf-8"))
    out: dict[str, tuple[str, Any]] = {}
    for line in (FIXTURE / "answers.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["id"] in replies:
            out[row["answer"]] = (row["id"], replies[row["id"]])
    return out


def fixture_judge(question: str, context: str, answer: str) -> Any:
    """The scripted reply for ``answer`` (a dict, or the raw text of a malformed one)."""
    CALLS.append(answer)
    _, reply = scripted_replies().get(answer, ("", {"claims": []}))
    return reply


def context_judge(question: str, context: str, answer: str) -> Any:
    """One claim per answer: SUPPORTED with the context's first sentence as evidence, or
    UNSUPPORTED without evidence when the answer says 'free drinks' (a planted fabrication)."""
    if "free drinks" in answer:
        claim = {"claim": answer, "verdict": "UNSUPPORTED", "evidence_span": "", "rationale": "-"}
    else:
        first = context.split(".")[0]
        claim = {"claim": "The answer restates the context.", "verdict": "SUPPORTED",
                 "evidence_span": first, "rationale": "-"}  # fmt: skip
    return {"claims": [claim]}
