"""``py:`` judges that misbehave, for the bad-input matrix of the judge commands.

``COUNTING``: every call appends one line to ``$HOSTILE_JUDGE_LOG`` (a paid request), so a
test can prove that no judge call was made before the input was checked.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

MARKUP = "[bold red]x[/bold red] [/] [link=http://evil.example]y[/link] \x1b]0;pwn\x07\x1b[2J"


def _log() -> None:
    path = os.environ.get("HOSTILE_JUDGE_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write("call\n")


def counting(question: str, context: str, answer: str) -> Any:
    """One SUPPORTED claim quoting the context's first sentence; logs each call."""
    _log()
    span = context.split(".")[0]
    claim = " ".join(re.sub(r"\[[^\]]*\]", " ", answer).split())
    return {"claims": [{"claim": claim, "verdict": "SUPPORTED", "evidence_span": span,
                        "rationale": "-"}]}  # fmt: skip


def markup(question: str, context: str, answer: str) -> Any:
    """A reply whose claim, span and rationale are markup and terminal control sequences."""
    return {"claims": [
        {"claim": f"claim {MARKUP}", "verdict": "SUPPORTED", "evidence_span": f"span {MARKUP}",
         "rationale": f"why {MARKUP}"},
        {"claim": "Teens can borrow up to 20 items.", "verdict": "SUPPORTED",
         "evidence_span": "Teen cards can borrow up to 20 items", "rationale": MARKUP},
    ]}  # fmt: skip


def markup_verdict(question: str, context: str, answer: str) -> Any:
    """A verdict that is markup: the reply does not parse, the raw reply is kept."""
    return {"claims": [{"claim": "c", "verdict": "[/]\x1b[2J", "evidence_span": "",
                        "rationale": MARKUP}]}  # fmt: skip


def exit_zero(question: str, context: str, answer: str) -> Any:
    """Ends the process 'successfully' instead of replying."""
    sys.exit(0)


def raises(question: str, context: str, answer: str) -> Any:
    """A judge hook with a bug."""
    raise ValueError("hook bug")


def wrong_types(question: str, context: str, answer: str) -> Any:
    """Claims of the wrong types: a number for a claim, a list for a span."""
    return {"claims": [{"claim": 5, "verdict": "SUPPORTED", "evidence_span": ["x"],
                        "rationale": None}]}  # fmt: skip


def claims_not_a_list(question: str, context: str, answer: str) -> Any:
    return {"claims": "all fine"}


def empty_claims(question: str, context: str, answer: str) -> Any:
    """A lazy judge: no claims for an answer that makes some."""
    _log()
    return {"claims": []}
