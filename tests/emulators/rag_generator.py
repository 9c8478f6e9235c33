"""A scripted RAG generator for the chat emulator (``emu.chat = RagGenerator(...)``):
it answers a question only when the question's expected passage is in the context it is
sent, and refuses otherwise, as a grounded assistant would.

The user message is read as ``"Question: Q\\n\\nContext:\\n..."``. Per question (the text
Q): ``passage`` (a string that marks the expected chunk in the context), and a ``mode``:

- ``"grounded"``: answer iff the passage is in the context;
- ``"refuse"``: always refuse (a generation failure: gold context does not help);
- ``"flaky"``: like grounded, but refuse at random with probability ``p``, from a
  ``random.Random(seed)`` drawn once per request (a flaky question).

``requests`` (inherited) records every request; ``questions_asked`` the Q of each.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from .chat import ChatScript, Reply, text

REFUSAL = "I don't know: the documents do not cover that."


@dataclass
class Scripted:
    passage: str
    mode: str = "grounded"
    p: float = 0.5
    seed: int = 0


class RagGenerator(ChatScript):
    def __init__(self, script: dict[str, Scripted]) -> None:
        super().__init__()
        self.script = script
        self._rngs = {q: random.Random(s.seed) for q, s in script.items()}
        self.questions_asked: list[str] = []

    def _pick(self, body: dict[str, Any]) -> Reply:
        messages = body.get("messages") or []
        user = next(
            (
                m.get("content", "")
                for m in messages
                if isinstance(m, dict) and m.get("role") == "user"
            ),
            "",
        )
        head, _, context = str(user).partition("\n\nContext:\n")
        question = head.removeprefix("Question: ").strip()
        with self._lock:
            self.requests.append(body)
            self.questions_asked.append(question)
            s = self.script.get(question)
            if s is None:
                return text(REFUSAL)
            refuse = s.mode == "refuse" or s.passage not in context
            if s.mode == "flaky" and self._rngs[question].random() < s.p:
                refuse = True
        return text(REFUSAL if refuse else f"According to the documents: {s.passage[:60]}")


__all__ = ["REFUSAL", "RagGenerator", "Scripted"]
