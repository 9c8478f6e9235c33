"""A scripted question generator for ``questions generate`` tests, served three ways: as the
chat emulator's replies (:class:`ScriptedChat`, through the real Mistral and OpenAI SDKs), and
as a ``py:tests.emulators.generator_script:py_generator`` hook.

It reads what the generator's requests carry (``TASK:``, ``PARAMS:`` and the passages) and
answers like a well-behaved model, except where a test plants a fault:

- ``malformed_once``: chunk ids whose first reply is broken JSON (the repair gets a valid one);
- ``malformed_always``: chunk ids whose every reply is broken JSON (dropped after repairs);
- ``duplicate``: chunk id -> another chunk id whose (earlier) question it repeats word for
  word;
- ``verbatim``: chunk ids whose question copies the passage's first sentence;
- ``unretrievable``: chunk ids whose question is about something else entirely;
- ``oos``: the out-of-scope questions to offer, batch after batch; ``answered``: those that
  the verifying judge says the knowledge base answers.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .chat import ChatScript, Reply, text, valid

BROKEN = '{"questions": [{"question": "What is'
LEADS = {
    "near-verbatim": "What do the library's rules say about",
    "light": "As a member, what should I know about",
    "reworded": "I am a library user with a question about",
}
OFF_TOPIC = "What is the boiling point of liquid nitrogen in a vacuum flask?"


def passages(context: str) -> list[tuple[str, str]]:
    """``(id, text)`` of each ``PASSAGE [id]:`` block of a request."""
    found = re.split(r"(?m)^PASSAGE \[(.+?)\]:\n", context)
    return [(found[i], found[i + 1].strip()) for i in range(1, len(found) - 1, 2)]


def honest_question(chunk_text: str, level: str) -> str:
    title = chunk_text.strip().split("\n", 1)[0].strip().rstrip("?").lower()
    return f"{LEADS.get(level, 'Tell me about')} {title}?"


@dataclass
class GeneratorScript:
    """The scripted model; ``seen`` counts requests per (task, first chunk id)."""

    chunks: dict[str, str]
    malformed_once: set[str] = field(default_factory=set)
    malformed_always: set[str] = field(default_factory=set)
    duplicate: dict[str, str] = field(default_factory=dict)
    verbatim: set[str] = field(default_factory=set)
    unretrievable: set[str] = field(default_factory=set)
    oos: list[str] = field(default_factory=list)
    answered: set[str] = field(default_factory=set)
    verify_malformed: bool = False
    seen: Counter[str] = field(default_factory=Counter)
    offered: int = 0
    asked: dict[str, str] = field(default_factory=dict)

    def reply(self, task: str, context: str, params: dict[str, Any]) -> str | dict[str, Any]:
        if task == "out-of-scope":
            n = int(params.get("n", 5))
            batch = self.oos[self.offered : self.offered + n]
            self.offered += n
            return {"questions": [{"question": q, "topic": "adjacent"} for q in batch]}
        if task == "answerable":
            if self.verify_malformed:
                return "the passages do not say"
            asked = re.findall(r"(?m)^QUESTION (\d+): (.+)$", context)
            return {
                "verdicts": [
                    {
                        "index": int(i),
                        "answered": q in self.answered,
                        "chunk": None,
                        "rationale": "scripted",
                    }
                    for i, q in asked
                ]
            }
        found = passages(context)
        first = found[0][0]
        self.seen[f"{task}:{first}"] += 1
        if first in self.malformed_always or (
            first in self.malformed_once and self.seen[f"{task}:{first}"] == 1
        ):
            return BROKEN
        level = str(params.get("level", "light"))
        if task == "multi-hop":
            a, b = (honest_question(t, level) for _, t in found[:2])
            question = f"{a} And {b[0].lower()}{b[1:]}"
        elif first in self.duplicate:
            other = self.duplicate[first]
            question = self.asked.get(other) or honest_question(self.chunks[other], level)
        elif first in self.verbatim:
            body = found[0][1].split("\n", 1)[-1].strip()
            question = body.split(". ")[0].strip().rstrip(".") + "?"
        elif first in self.unretrievable:
            question = OFF_TOPIC
        else:
            question = honest_question(found[0][1], level)
        self.asked.setdefault(first, question)
        return {"questions": [{"question": question, "topic": "scripted"}]}


def _request_parts(body: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    first = str(users[0]["content"]) if users else ""
    head, _, context = first.partition("\n\n")
    task = re.search(r"TASK: (\S+)", head)
    params = re.search(r"PARAMS: (\{.*\})", head)
    return (
        task.group(1) if task else "",
        context,
        json.loads(params.group(1)) if params else {},
    )


class ScriptedChat(ChatScript):
    """The emulator's chat replies, computed by a :class:`GeneratorScript`."""

    def __init__(self, script: GeneratorScript) -> None:
        super().__init__()
        self.script = script

    def _pick(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
        task, context, params = _request_parts(body)
        out = self.script.reply(task, context, params)
        return valid(out) if isinstance(out, dict) else text(out)


FIXTURE_CHUNKS = Path(__file__).resolve().parents[2] / "fixtures" / "chunks.jsonl"
#: out-of-scope candidates for the fixture KB: the second one the KB answers, the third one
#: its "tax preparation" refusal chunk declines
FIXTURE_OOS = [
    "How do I apply for a residential parking permit in Harbor City?",
    "How do I get a library card?",
    "Can you help me fill in my tax return?",
    "How much are tickets to the Harbor City Maritime Museum?",
    "Where can I get a flu vaccination in Harbor City?",
    "What time does the number 12 bus leave from the harbour?",
    "How do I register to vote in Tidewater County?",
    "Can I rent a kayak at the marina this weekend?",
    "How do I report a pothole on my street?",
    "Which recycling bin do old batteries go in?",
]


def fixture_script(**faults: Any) -> GeneratorScript:
    """The script over fixtures/chunks.jsonl with :data:`FIXTURE_OOS` and ``faults``."""
    rows = [json.loads(line) for line in FIXTURE_CHUNKS.read_text("utf-8").splitlines()]
    faults.setdefault("oos", list(FIXTURE_OOS))
    faults.setdefault("answered", {FIXTURE_OOS[1]})
    return GeneratorScript({r["id"]: r["text"] for r in rows}, **faults)


#: the script a ``py:`` generator answers from (set by a test; default: the fixture's)
SCRIPT: GeneratorScript | None = None
CALLS: list[str] = []


def py_generator(task: str, context: str, params: str) -> str | dict[str, Any]:
    """``py:tests.emulators.generator_script:py_generator``: the scripted model as a hook."""
    global SCRIPT
    if SCRIPT is None:
        SCRIPT = fixture_script()
    CALLS.append(task)
    return SCRIPT.reply(task, context, json.loads(params))
