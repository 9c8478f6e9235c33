"""The question generator's plan, fixed by the seed before any call, and its cost bound.

Single-hop chunks are a seeded permutation of the content chunks (refusal chunks excluded),
each at a paraphrase level from :data:`~.question_calls.LEVELS` in turn; multi-hop pairs are
linked once the chunks are embedded (:meth:`Plan.fill_multi_hop`); out-of-scope batches each
see a seeded sample of the knowledge base's headings, and the headings of its refusal chunks.

The token bound (:func:`token_bound`) counts a request's UTF-8 bytes (a byte-level BPE
tokenizer never makes more tokens than bytes), plus :data:`REPLY_TOKENS` per question asked
for and :data:`VERDICT_TOKENS` per verdict: the replies' share is an allowance, not a cap,
because the judge seam sends no ``max_tokens``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import InputError
from ...inputs.corpus import Corpus
from ..judge import Prompt
from . import gates
from .calls import LEVELS, Call, Task

REPLY_TOKENS = 200
VERDICT_TOKENS = 120
#: bytes allowed for one out-of-scope candidate question in a verification request
QUESTION_BYTES = 400
#: headings shown to one out-of-scope batch
TOPICS_PER_BATCH = 40


@dataclass
class Slot:
    """One in-scope question to ask for: chunk positions, paraphrase level, link."""

    id: str
    task: Task
    chunks: list[int]
    level: str
    link: dict[str, Any] | None = None


@dataclass
class Plan:
    """Seeded choices: single-hop slots, multi-hop slots to link, out-of-scope batches."""

    single: list[Slot]
    multi_requested: int
    multi_levels: list[str]
    anchors: list[int]
    content: list[int]
    oos_batches: list[list[int]]
    oos_sizes: list[int]
    multi_note: str | None = None
    content_order: list[int] = field(default_factory=list)
    shift: int = 0

    @property
    def calls(self) -> int:
        """Calls without repairs: one per in-scope question, two per out-of-scope batch."""
        return len(self.single) + len(self.multi_levels) + 2 * len(self.oos_batches)

    def summary(self, ids: list[str]) -> dict[str, Any]:
        return {
            "single_hop": len(self.single),
            "multi_hop": len(self.multi_levels),
            "multi_hop_requested": self.multi_requested,
            "out_of_scope": sum(self.oos_sizes),
            "out_of_scope_batches": len(self.oos_batches),
            "calls_by_task": {
                Task.SINGLE_HOP.value: len(self.single),
                Task.MULTI_HOP.value: len(self.multi_levels),
                Task.OUT_OF_SCOPE.value: len(self.oos_batches),
                Task.ANSWERABLE.value: len(self.oos_batches),
            },
            "single_hop_chunks": [ids[s.chunks[0]] for s in self.single],
        }

    def fill_multi_hop(
        self, corpus: Corpus, vectors: np.ndarray, *, link_min: float, link_max: float
    ) -> tuple[list[Slot], str | None]:
        """All in-scope slots: the single-hop ones, a multi-hop slot per linked pair, and a
        single-hop slot for each multi-hop slot no pair could fill (with a statement)."""
        want = len(self.multi_levels)
        sets = [gates.entities(t) for t in corpus.texts] if want else None
        pairs = gates.link_pairs(
            vectors,
            self.anchors,
            self.content,
            want,
            link_min=link_min,
            link_max=link_max,
            entity_sets=sets,
        )
        slots = list(self.single)
        for j, (a, b, link) in enumerate(pairs):
            slots.append(Slot(f"m{j + 1:03d}", Task.MULTI_HOP, [a, b], self.multi_levels[j], link))
        note = self.multi_note
        short = want - len(pairs)
        if short > 0:
            note = (
                f"multi-hop: {len(pairs)} of {want} questions: no more chunk pairs are linked "
                f"(cosine in [{link_min:g}, {link_max:g}) or 2+ shared names) in these "
                f"{len(self.content)} chunks, which are too few or too uniform; {short} "
                "single-hop questions are asked instead"
            )
            start = len(self.single)
            for k in range(short):
                i = start + k
                chunk = self.content_order[i % len(self.content_order)]
                slots.append(Slot(f"s{i + 1:03d}", Task.SINGLE_HOP, [chunk], _level(i, self)))
        return slots, note


def _level(i: int, plan: Plan) -> str:
    cycle = i // max(1, len(plan.content_order))
    return LEVELS[(i + cycle + plan.shift) % len(LEVELS)]


def make_plan(
    corpus: Corpus,
    refusals: set[str],
    *,
    n: int,
    oos: int,
    multi_hop: float,
    seed: int,
    batch: int,
) -> Plan:
    """The seeded plan for ``n`` in-scope and ``oos`` out-of-scope questions."""
    content = [i for i, cid in enumerate(corpus.ids) if cid not in refusals]
    if n and not content:
        raise InputError(
            "every chunk matches --refusal-pattern (or is marked refusal), so no in-scope "
            "question can be written; check --refusal-pattern"
        )
    rng = np.random.default_rng(seed)
    order = [int(i) for i in rng.permutation(content)] if content else []
    shift = int(rng.integers(len(LEVELS)))
    requested = int(round(n * multi_hop))
    multi = requested if len(content) >= 2 else 0
    plan = Plan([], requested, [], [], content, [], [], content_order=order, shift=shift)
    if requested and not multi:
        plan.multi_note = (
            f"multi-hop: none: the corpus has {len(content)} content chunk(s), a pair needs "
            f"two; {requested} single-hop questions are asked instead"
        )
    for i in range(n - multi):
        chunk = order[i % len(order)]
        plan.single.append(Slot(f"s{i + 1:03d}", Task.SINGLE_HOP, [chunk], _level(i, plan)))
    plan.multi_levels = [LEVELS[(j + shift) % len(LEVELS)] for j in range(multi)]
    start = (n - multi) % len(order) if order else 0
    plan.anchors = order[start:] + order[:start]  # chunks no single-hop question uses first
    pool = content or list(range(len(corpus)))
    for b in range(math.ceil(oos / batch)):
        size = min(batch, oos - b * batch)
        picked = rng.choice(pool, size=min(TOPICS_PER_BATCH, len(pool)), replace=False)
        plan.oos_batches.append(sorted(int(i) for i in picked))
        plan.oos_sizes.append(size)
    return plan


def title(text: str) -> str:
    """A chunk's heading: its first line without Markdown marks (80 characters at most)."""
    return text.strip().split("\n", 1)[0].lstrip("# ").strip()[:80]


def passage_block(corpus: Corpus, positions: list[int]) -> str:
    return "\n\n".join(f"PASSAGE [{corpus.ids[p]}]:\n{corpus.texts[p]}" for p in positions)


def oos_context(corpus: Corpus, topics: list[int], refusals: set[str]) -> str:
    """The headings an out-of-scope batch sees, and the topics the KB says it does not cover."""
    covered = list(dict.fromkeys(title(corpus.texts[i]) for i in topics))
    text = "TOPICS COVERED:\n" + "\n".join(f"- {t}" for t in covered)
    declined = [
        title(t) for cid, t in zip(corpus.ids, corpus.texts, strict=True) if cid in refusals
    ]
    if declined:
        text += "\n\nTOPICS NOT COVERED (the knowledge base says so):\n"
        text += "\n".join(f"- {t}" for t in dict.fromkeys(declined))
    return text


def _request_bytes(prompt: Prompt, call: Call) -> int:
    return len(prompt.text.encode("utf-8")) + len(call.user_message().encode("utf-8")) + 64


def token_bound(plan: Plan, prompts: dict[Task, Prompt], corpus: Corpus, verify_k: int) -> int:
    """Upper bound on the tokens of the planned calls (no repairs): see the module doc."""
    longest = max((len(t.encode("utf-8")) for t in corpus.texts), default=0)
    longest_id = max((len(c.encode("utf-8")) for c in corpus.ids), default=0)
    total = 0
    for slot in plan.single:
        call = Call(
            Task.SINGLE_HOP, passage_block(corpus, slot.chunks), {"level": slot.level, "n": 1}
        )
        total += _request_bytes(prompts[Task.SINGLE_HOP], call) + REPLY_TOKENS
    pair = 2 * (longest + longest_id + 16)
    for level in plan.multi_levels:
        call = Call(Task.MULTI_HOP, "", {"level": level, "n": 1})
        total += _request_bytes(prompts[Task.MULTI_HOP], call) + pair + REPLY_TOKENS
    for topics, size in zip(plan.oos_batches, plan.oos_sizes, strict=True):
        refusals = {cid for i, cid in enumerate(corpus.ids) if i not in set(plan.content)}
        call = Call(Task.OUT_OF_SCOPE, oos_context(corpus, topics, refusals), {"n": size})
        total += _request_bytes(prompts[Task.OUT_OF_SCOPE], call) + REPLY_TOKENS * size
        per_question = QUESTION_BYTES + 64 + verify_k * (longest + longest_id + 16)
        verify = Call(Task.ANSWERABLE, "", {"questions": size})
        total += _request_bytes(prompts[Task.ANSWERABLE], verify) + size * per_question
        total += VERDICT_TOKENS * size
    return total
