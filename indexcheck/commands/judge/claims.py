"""Checks indexcheck makes itself on every judged claim, with no model involved.

- span check: the evidence span occurs in the context, ignoring case, Unicode form (NFKC,
  curly quotes, dashes) and whitespace runs; a span elided with ``...`` matches piece by piece,
  in order;
- numbers check: every number, percentage, amount, date and duration of a claim occurs in its
  span ("five days" == "5 days", "20%" == "20 percent", "$40" == "40 dollars");
- claim provenance: numbers of a claim that occur nowhere in the answer (the judge added them);
- citation status: attached is not supported.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from enum import StrEnum

from ..kit.verdicts import ClaimVerdict as ClaimVerdict


class CitationStatus(StrEnum):
    """Whether the passages attached to a claim's sentence are the ones that back it."""

    CITED_SUPPORTS = "cited_supports"
    CITED_NOT_SUPPORTING = "cited_not_supporting"
    SUPPORTED_NOT_CITED = "supported_not_cited"
    UNCITED_UNSUPPORTED = "uncited_unsupported"


_FOLD = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u00a0": " ",
    }
)
_ELLIPSIS = re.compile(r"\[\s*(?:\.\.\.|\u2026)\s*\]|\.\.\.+|\u2026")
_EDGE = " \"'.,;:"


def normalize_with_map(text: str) -> tuple[str, list[int]]:
    """(folded text, index of each folded character in ``text``): NFKC, case-folded,
    quotes and dashes unified, every whitespace run one space."""
    out: list[str] = []
    where: list[int] = []
    last_space = True
    for i, ch in enumerate(text):
        folded = unicodedata.normalize("NFKC", ch).translate(_FOLD).casefold()
        for c in folded:
            if c.isspace():
                if last_space:
                    continue
                c = " "
                last_space = True
            else:
                last_space = False
            out.append(c)
            where.append(i)
    while out and out[-1] == " ":
        out.pop()
        where.pop()
    return "".join(out), where


def normalize(text: str) -> str:
    """The folded form used for matching (see :func:`normalize_with_map`)."""
    return normalize_with_map(text)[0]


def span_pieces(span: str) -> list[str]:
    """The folded pieces of a span, split at ``...`` (or ``…``) elisions; empty pieces dropped."""
    pieces = _ELLIPSIS.split(unicodedata.normalize("NFKC", span))
    return [p for p in (normalize(x).strip(_EDGE) for x in pieces) if p]


def find_span(span: str, text: str) -> tuple[int, int] | None:
    """Character offsets [start, end) in ``text`` of the span, pieces in order; None if absent."""
    pieces = span_pieces(span)
    if not pieces:
        return None
    folded, where = normalize_with_map(text)
    pos = 0
    first = last = -1
    for piece in pieces:
        at = folded.find(piece, pos)
        if at < 0:
            return None
        if first < 0:
            first = at
        last = at + len(piece) - 1
        pos = at + len(piece)
    return where[first], where[last] + 1


# -- numbers --------------------------------------------------------------------------------

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "dozen": 12,
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "twelfth": 12, "twentieth": 20, "thirtieth": 30,
    "once": 1, "twice": 2, "half": 0.5,
}  # fmt: skip
_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_WORD = "|".join(sorted(_UNITS, key=len, reverse=True))
_NUMBER = re.compile(
    r"(?P<cur>[$£€])?\s?(?P<num>\d+(?:[.,]\d+)*(?::\d\d)?)(?:st|nd|rd|th)?"
    r"(?P<pct>\s?(?:%|percent\b|per cent\b))?"
    rf"|\b(?P<word>(?:{_WORD})(?:[- ](?:{_WORD}))?)\b(?P<wpct>\s(?:percent|per cent)\b)?"
    rf"|(?i:\b(?P<month>{'|'.join(_MONTHS)})\b)"
)
_SECOND_WORDS = {"one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
#: every word :func:`quantities` reads as a number or a date part (for indexes of its keys)
NUMBER_WORDS: frozenset[str] = frozenset(_UNITS) | frozenset(_MONTHS)


@dataclass(frozen=True)
class Quantity:
    """One number found in a text: its surface form and its canonical key ("20%", "40", "may")."""

    text: str
    key: str


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def quantities(text: str) -> list[Quantity]:
    """Numbers, percentages, amounts, dates and durations in ``text`` with canonical keys.

    Digits and number words give the same key ("five" and "5" -> "5"); a percentage keeps
    its "%" ("20%", "20 percent" -> "20%"); thousands separators are dropped; a month name
    is a date part keyed by its name ("May" only when capitalised, not the verb).
    """
    folded = unicodedata.normalize("NFKC", text)
    out: list[Quantity] = []
    for m in _NUMBER.finditer(folded):
        if m.group("month"):
            name = m.group("month")
            if name in ("may", "march"):
                continue  # lower-case "may"/"march" are verbs far more often
            out.append(Quantity(name, name.lower()))
            continue
        pct = bool(m.group("pct") or m.group("wpct"))
        if m.group("num"):
            raw = m.group("num")
            if ":" in raw:
                out.append(Quantity(m.group(0).strip(), raw))
                continue
            digits = raw.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+", raw) else raw
            try:
                value = float(digits.replace(",", "."))
            except ValueError:
                continue
        else:
            words = re.split(r"[- ]", m.group("word").lower())
            if len(words) == 2 and not (_UNITS[words[0]] >= 20 and words[1] in _SECOND_WORDS):
                # two number words that do not compose ("one ten"): take each alone
                for w in words:
                    out.append(Quantity(w, _fmt(_UNITS[w])))
                continue
            if words[0] == "one" and not pct and len(words) == 1 and _is_pronoun(folded, m):
                continue
            value = float(sum(_UNITS[w] for w in words))
        out.append(Quantity(m.group(0).strip(), _fmt(value) + ("%" if pct else "")))
    return out


def _is_pronoun(text: str, m: re.Match[str]) -> bool:
    """ "one" as a pronoun ("the one", "one of", "no one") rather than a count."""
    before = text[max(0, m.start() - 8) : m.start()].lower()
    after = text[m.end() : m.end() + 4].lower()
    return before.rstrip().endswith(("the", "no", "any", "every", "each")) or after.startswith(
        " of"
    )


def keys(text: str) -> set[str]:
    """Canonical keys of every quantity in ``text`` (month names case-insensitively)."""
    found = {q.key for q in quantities(text)}
    lowered = normalize(text)
    found |= {m for m in _MONTHS if re.search(rf"\b{m}\b", lowered) and m not in ("may", "march")}
    return found


def missing_numbers(claim: str, evidence: str) -> list[str]:
    """Surface forms of the claim's quantities whose key the evidence lacks (first seen order)."""
    have = keys(evidence)
    out: list[str] = []
    seen: set[str] = set()
    for q in quantities(claim):
        if q.key not in have and q.key not in seen:
            seen.add(q.key)
            out.append(q.text)
    return out


# -- citations ------------------------------------------------------------------------------


def citation_status(
    verdict: ClaimVerdict, cited: list[str], supported_by: list[str]
) -> CitationStatus:
    """Attached is not supported: a citation counts only when the claim is SUPPORTED and the
    cited passage holds its evidence span."""
    backed = verdict is ClaimVerdict.SUPPORTED and bool(supported_by)
    if cited:
        if backed and set(cited) & set(supported_by):
            return CitationStatus.CITED_SUPPORTS
        return CitationStatus.CITED_NOT_SUPPORTING
    return CitationStatus.SUPPORTED_NOT_CITED if backed else CitationStatus.UNCITED_UNSUPPORTED
