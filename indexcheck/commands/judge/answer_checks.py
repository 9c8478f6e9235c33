"""check-answers: what each answer states that neither its context nor the knowledge base holds.

No model is involved. Every answer's URLs, DOIs, ISBNs, author-year references, standard and
guideline names with a year, and numbers (percentages, amounts, dates, durations, read as the
judge's number check reads them) are looked up first in the context the model was sent, then
in every chunk of the knowledge base, through indexes built once (:mod:`.kb_index`). An item
found in neither is a flag: the model completed the answer from somewhere else.

Run-level rates come with 95% Wilson intervals: "88% of answers without a percentage absent
from the knowledge base".
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ...errors import InputError
from ...inputs.answers import AnswerRow
from ...inputs.corpus import Corpus
from ...output.model import WORST_ROWS, Section, Table, Text, V, manifest_section, ok_verdict
from ...output.notebook import Notebook
from ...output.registry import register_sections
from ...output.result_json import picked
from ..kit.stats import wilson
from .kb_index import TextIndex, build_index
from .references import REFERENCE_KINDS, Item, ItemKind, extract


class Where(StrEnum):
    """Where an item was looked for, in the order it is looked for."""

    CONTEXT = "context"
    KNOWLEDGE_BASE = "knowledge_base"


LOOKED_IN = (Where.CONTEXT.value, Where.KNOWLEDGE_BASE.value)
#: rate groups beyond the kinds: every item, and every reference (with or without a link)
ANY, REFERENCE = "any", "reference"
LABELS = {
    ANY: "anything",
    REFERENCE: "a reference",
    ItemKind.URL: "a URL",
    ItemKind.DOI: "a DOI",
    ItemKind.ISBN: "an ISBN",
    ItemKind.AUTHOR_YEAR: "an author-year reference",
    ItemKind.STANDARD: "a standard or guideline name",
    ItemKind.PERCENTAGE: "a percentage",
    ItemKind.AMOUNT: "an amount",
    ItemKind.DATE: "a date",
    ItemKind.DURATION: "a duration",
    ItemKind.NUMBER: "a number",
}


@dataclass(frozen=True)
class Flag:
    """An item of an answer found neither in its context nor in any chunk."""

    text: str
    kind: ItemKind
    looked_in: tuple[str, ...] = LOOKED_IN

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "kind": self.kind.value, "looked_in": list(self.looked_in)}


@dataclass
class AnswerCheck:
    """One answer: how many items it states, where they were found, and its flags."""

    id: str
    items: int
    in_context: int
    in_knowledge_base_only: int
    flags: list[Flag] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.flags

    def to_dict(self) -> dict[str, Any]:
        plain = picked(self, "id", "ok", "items", "in_context", "in_knowledge_base_only")
        return plain | {"flags": [f.to_dict() for f in self.flags]}


@dataclass
class AnswerChecksResult(Notebook):
    """Every answer's flags, the items checked and flagged per kind, and the rates."""

    frames = ("answers",)

    ok: bool
    answers: list[AnswerCheck]
    chunks: int | None
    checked: dict[str, int]
    flagged: dict[str, int]
    rates: dict[str, dict[str, Any]]
    manifest: dict[str, Any] = field(default_factory=dict)
    manifest_facts: dict[str, Any] = field(default_factory=dict)
    looked_in: tuple[str, ...] = LOOKED_IN
    """``("context",)`` when no knowledge base was given (``chunks`` is then None)."""

    @property
    def flags(self) -> int:
        return sum(len(a.flags) for a in self.answers)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "answers_checked": len(self.answers),
            "answers_flagged": sum(not a.ok for a in self.answers),
            "chunks": self.chunks,
            "looked_in": list(self.looked_in),
            "checked": self.checked,
            "flagged": self.flagged,
            "rates": self.rates,
            "answers": [a.to_dict() for a in self.answers],
            "manifest": self.manifest,
        }

    def block(self) -> dict[str, Any]:
        """The ``answer_checks`` block of judge's and diagnose's JSON: this result's JSON
        form without its manifest (the command's own manifest covers the run)."""
        return {k: v for k, v in self.to_dict().items() if k != "manifest"}

    def headline(self) -> str:
        n = len(self.answers)
        bad = sum(not a.ok for a in self.answers)
        items = self.checked.get(ANY, 0)
        return (
            f"{n} answers against {self.chunks} chunks: {items} items checked, "
            f"{self.flags} absent from both the context and the knowledge base, in {bad} answers"
        )

    def rate_lines(self) -> list[str]:
        """ "88% of answers without a percentage absent from the knowledge base (7/8, 95%
        Wilson 53%–98%)", for every kind some answer states."""
        return [
            f"{r['phrase']} ({r['k']}/{r['n']}, 95% Wilson {_interval(r)})"
            for group, r in self.rates.items()
            if group == ANY or self.checked.get(group)
        ]

    def rates_table(self) -> Table:
        rows = []
        for group, r in self.rates.items():
            if group != ANY and not self.checked.get(group):
                continue
            rows.append(
                [r["phrase"], f"{r['k']}/{r['n']}", _interval(r), self.checked.get(group, 0),
                 self.flagged.get(group, 0)]
            )  # fmt: skip
        headers = ["rate", "answers", "95% Wilson", "items", "flagged"]
        return Table(headers, rows, caption="answers without an item absent", right=("answers",))

    def flags_table(self, limit: int | None) -> Table:
        rows = [
            [a.id, f.kind.value, f.text, V("ABSENT"), ", ".join(f.looked_in).replace("_", " ")]
            for a in self.answers
            for f in a.flags
        ]
        headers = ["answer", "kind", "as written", "status", "looked in"]
        return Table(headers, rows[:limit] if limit else rows, caption="flags")


_LOOKED = (
    "Each URL, DOI, ISBN, author-year reference, standard name with a year and number of an "
    "answer is looked for in the context the model was sent, then in every chunk; a flag is "
    "an item found in neither (numbers compared as the judge compares them: '5' = 'five', "
    "'20%' = '20 percent')."
)


def checks_line(block: dict[str, Any]) -> str:
    """judge's and diagnose's terminal line for an ``answer_checks`` block: "answer checks:
    2 of 12 answers hold a URL, reference or number absent from the context and the
    knowledge base" (or "... from the context (no --chunks: ...)" without a knowledge base)."""
    where = "the context and the knowledge base"
    if Where.KNOWLEDGE_BASE.value not in block["looked_in"]:
        where = "the context (no --chunks: the knowledge base was not searched)"
    return (
        f"answer checks: {block['answers_flagged']} of {block['answers_checked']} answers hold "
        f"a URL, reference or number absent from {where}"
    )


def _interval(r: dict[str, Any]) -> str:
    if r["value"] is None:
        return "–"
    return f"{100 * r['low']:.0f}%–{100 * r['high']:.0f}%"


def _found(index: TextIndex, item: Item, doc: int) -> bool:
    if item.link is not None:
        return index.has_link(item.link, doc)
    if item.pair is not None:
        return index.has_pair(*item.pair, doc=doc)
    assert item.number is not None
    return index.has_number(item.number, doc)


def _answer_text(row: AnswerRow) -> str:
    """The answer without its citation markers ("[1]" is no number of the answer's), one
    sentence a line (so that list numbering stays at a line start)."""
    if row.sentences:
        return "\n".join(s.text for s in row.sentences)
    return row.answer


def check_answers(rows: Sequence[AnswerRow], corpus: Corpus | None) -> AnswerChecksResult:
    """Flag every answer item found neither in its context nor in any chunk of ``corpus``.

    ``rows`` as :func:`.answers.load_answers` reads them (``context`` or ``contexts``);
    ``result.ok`` is True when nothing is flagged. ``corpus=None`` (judge without --chunks)
    looks in the context only, and every flag and the result say so (``looked_in``).
    """
    if not rows:
        raise InputError("no answers to check; the answers file holds no rows")
    if corpus is not None and len(corpus) == 0:
        raise InputError("the knowledge base holds no chunks; pass the chunks the answers drew on")
    looked_in = LOOKED_IN if corpus is not None else (Where.CONTEXT.value,)
    started = time.perf_counter()
    kb = build_index(corpus.texts) if corpus is not None else None
    contexts = build_index([r.context_sent for r in rows], docs=list(range(len(rows))))
    indexed = time.perf_counter()
    checks: list[AnswerCheck] = []
    kinds = [k.value for k in ItemKind]
    checked = dict.fromkeys([ANY, REFERENCE, *kinds], 0)
    flagged = dict.fromkeys([ANY, REFERENCE, *kinds], 0)
    without = dict.fromkeys([ANY, REFERENCE, *kinds], 0)
    for i, row in enumerate(rows):
        seen: set[tuple[str, object]] = set()
        check = AnswerCheck(row.id, 0, 0, 0)
        bad_groups: set[str] = set()
        for item in extract(_answer_text(row)):
            key = (item.kind.value, item.link or item.pair or item.number)
            if key in seen:
                continue
            seen.add(key)
            groups = _groups(item.kind)
            check.items += 1
            for g in groups:
                checked[g] += 1
            if _found(contexts, item, i):
                check.in_context += 1
            elif kb is not None and _found(kb, item, 0):
                check.in_knowledge_base_only += 1
            else:
                check.flags.append(Flag(" ".join(item.text.split()), item.kind, looked_in))
                for g in groups:
                    flagged[g] += 1
                bad_groups |= set(groups)
        for g in without:
            without[g] += g not in bad_groups
        checks.append(check)
    n = len(rows)
    rates = {
        g: {**wilson(without[g], n).as_dict(), "phrase": _phrase(g, without[g], n, looked_in)}
        for g in without
    }
    result = AnswerChecksResult(
        ok=all(c.ok for c in checks),
        answers=checks,
        chunks=len(corpus) if corpus is not None else None,
        checked=checked,
        flagged=flagged,
        rates=rates,
        looked_in=looked_in,
    )
    result.manifest_facts = {
        "chunks_file": corpus.source or None if corpus is not None else None,
        "index": None if kb is None else
                 {"chunks": kb.texts, "number_keys": int(kb.numbers.size),
                  "name_number_pairs": int(kb.pairs.size), "links": len(kb.links)},
        "seconds": {"index": round(indexed - started, 3),
                    "check": round(time.perf_counter() - indexed, 3)},
    }  # fmt: skip
    return result


def _groups(kind: ItemKind) -> tuple[str, ...]:
    if kind in REFERENCE_KINDS:
        return (ANY, REFERENCE, kind.value)
    return (ANY, kind.value)


def _phrase(group: str, k: int, n: int, looked_in: tuple[str, ...] = LOOKED_IN) -> str:
    label = LABELS[group]  # a kind is a StrEnum: its value finds it
    where = "the knowledge base" if Where.KNOWLEDGE_BASE.value in looked_in else "the context"
    return f"{100 * k / n:.0f}% of answers without {label} absent from {where}"


def answer_checks_sections(result: AnswerChecksResult) -> list[Section]:
    """The report's sections, then the terminal summary."""
    verdict = ok_verdict(result.ok)
    sec = Section("check-answers: answers against their context and the knowledge base", verdict)
    sec.blocks += [Text(result.headline()), Text(_LOOKED)]
    sec.blocks.append(result.rates_table())
    sec.blocks.append(result.flags_table(None))
    summary = Section("", verdict, report=False, terminal=True)
    if result.flags:
        summary.blocks.append(result.flags_table(WORST_ROWS))
    if result.flags > WORST_ROWS:
        summary.blocks.append(Text(f"first {WORST_ROWS} of {result.flags} flags; --json has all"))
    summary.blocks += [Text(line) for line in result.rate_lines()]
    summary.blocks.append(Text(result.headline(), badge=verdict, whole=True))
    manifest = manifest_section(result.manifest, "check-answers: manifest")
    return [sec, manifest, summary]


register_sections(AnswerChecksResult, answer_checks_sections)


__all__ = ["AnswerCheck", "AnswerChecksResult", "Flag", "Where", "check_answers", "checks_line"]
