"""What an answer asserts that can be looked up without a model: links, references, numbers.

- links: URLs, DOIs (a doi.org URL is its DOI), ISBNs;
- bibliographic references without a link: author-year forms ("Harper 1998", "(Smith et
  al., 2019)", "Smith and Jones (2020)") and standard or guideline names with a year
  ("WSAVA 2013", "ISO 9001:2015");
- numbers, percentages, amounts, dates and durations, as the judge's number check reads them
  (:func:`.claim_checks.quantities`), outside the spans above.

Not references: a capitalised function word or a month before a year ("In 2019", "May
2020" is a date); not numbers: version strings ("v2.1", "3.10.4") and list numbering.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from enum import StrEnum

from .claims import quantities
from .kb_index import key_query, number_token, token_hash, tokens
from .links import TRAIL, doi_key, isbn_key, url_key


class ItemKind(StrEnum):
    """What an answer's item is, links and references first (the order of every table)."""

    URL = "url"
    DOI = "doi"
    ISBN = "isbn"
    AUTHOR_YEAR = "author_year"
    STANDARD = "standard"
    PERCENTAGE = "percentage"
    AMOUNT = "amount"
    DATE = "date"
    DURATION = "duration"
    NUMBER = "number"


REFERENCE_KINDS = (
    ItemKind.URL,
    ItemKind.DOI,
    ItemKind.ISBN,
    ItemKind.AUTHOR_YEAR,
    ItemKind.STANDARD,
)


@dataclass(frozen=True)
class Item:
    """One thing an answer states: its text as written, its kind and its index lookup
    (``link``: a normalized link; ``pair``: name and number token hashes; ``number``: the
    number key's index entry)."""

    text: str
    kind: ItemKind
    link: str | None = None
    pair: tuple[int, int] | None = None
    number: tuple[int, ...] | None = None


_URL = re.compile(r"\b(?:https?|ftp)://[^\s<>\"'`{}|\\^\[\]]+|\bwww\.[^\s<>\"'`{}|\\^\[\]]+")
_DOI = re.compile(r"\b10\.\d{4,9}/[^\s\"'<>]+")
_ISBN = re.compile(r"\bISBN(?:-1[03])?:?\s*([0-9][0-9 -]{8,16}[0-9Xx])\b")
_YEAR = r"(?:1[89]\d\d|20\d\d)"
_SURNAME = r"(?:[A-Z][a-z]+(?:[-'\u2019][A-Z]?[a-z]+)*|[A-Z]'[A-Z][a-z]+|Mc[A-Z][a-z]+)"
_AUTHORS = rf"{_SURNAME}(?:\s+et\s+al\.?|\s+(?:and|&)\s+{_SURNAME})?"
_NARRATIVE = re.compile(rf"\b(?P<name>{_AUTHORS})\s*\(\s*(?P<year>{_YEAR})[a-z]?\s*\)")
_PAREN = re.compile(r"\(([^()]{4,200})\)")
_IN_PAREN = re.compile(rf"(?P<name>{_AUTHORS}),?\s+(?P<year>{_YEAR})[a-z]?\b")
_BARE = re.compile(rf"\b(?P<name>{_AUTHORS}),?\s+(?P<year>{_YEAR})[a-z]?\b(?![.:,]?\d)")
_ACRONYM = r"[A-Z][A-Z0-9&]*[A-Z](?:/[A-Z][A-Z0-9&]*)*"
_STANDARD = re.compile(
    rf"\b(?P<name>{_ACRONYM})(?:\s+(?P<code>\d[\d.-]*\d|\d))?"
    rf"(?P<sep>:|\s*[,(]?\s*)(?P<year>{_YEAR})\b\)?"
)
_YEAR_FIRST = re.compile(
    rf"\b(?P<year>{_YEAR})\s+(?P<name>{_ACRONYM})\s+"
    r"(?:guidelines?|standards?|consensus|recommendations?|statement|criteria)\b"
)
_VERSION = re.compile(r"\b[vV](?:ersion\s*)?\d+(?:\.\d+)+\b|\b\d+\.\d+\.\d+(?:\.\d+)*\b")
_LIST_MARK = re.compile(r"(?m)^[ \t]*(?:\(?\d{1,3}[.)])(?=\s)")
_DURATION = re.compile(
    r"\s*-?\s*(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|wks?|months?|"
    r"years?|yrs?|decades?)\b",
    re.IGNORECASE,
)
#: capitalised words that stand before a year without being an author's name
NOT_NAMES = frozenset(
    """In On At By Of For From Since Until Till To Before After During Around About Circa Ca
    Between Through Throughout Within Early Late Mid Fall Spring Summer Autumn Winter Year
    Years Fiscal The A An This That These Those Its Their Our His Her Your My Every Each
    And Or But Not Only Also Even Yet So As Than Then Until Up Since Starting Ending Till
    January February March April May June July August September October November December
    Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Monday Tuesday Wednesday Thursday
    Friday Saturday Sunday Version Vol Volume Chapter Section Page Pages Figure Table Step
    Item Issue Edition Number No Model Release Windows Office Christmas Easter Thanksgiving
    Halloween Updated Revised Published Accessed Retrieved Copyright Established Founded
    Released Launched Introduced Adopted Approved Amended""".split()
)
#: upper-case words that stand before a year without being an organisation
NOT_ACRONYMS = frozenset(
    "AD BC CE BCE FY Q1 Q2 Q3 Q4 H1 H2 AM PM UTC GMT IN ON AT BY OF FOR THE AND "
    "US UK EU USA".split()
)
_CURRENCY = "$£€¥"


def _name_hash(name: str) -> int | None:
    found = tokens(name)
    return token_hash(found[0]) if found else None


def _year_hash(year: str) -> int:
    return number_token(year.encode())


def _author(name: str, year: str, text: str) -> Item | None:
    first = re.split(r"\s+|,", name.strip())[0]
    if first in NOT_NAMES:
        return None
    h = _name_hash(first)
    return None if h is None else Item(text, ItemKind.AUTHOR_YEAR, pair=(h, _year_hash(year)))


def _standard(name: str, code: str | None, sep: str, year: str, text: str) -> Item | None:
    """ "WSAVA 2013" looks for (wsava, 2013); "ISO 9001:2015" for (iso, 9001:2015), one token."""
    if name in NOT_ACRONYMS:
        return None
    h = _name_hash(name)
    if h is None:
        return None
    joined = code is not None and sep == ":"
    # the knowledge base's tokens keep ":" and "." between digits but not "-": "ISO
    # 31-0:1992" is indexed as iso, 31, 0:1992, so the part number's last piece is the key
    last = (code or "").rsplit("-", 1)[-1]
    number = number_token(f"{last}:{year}".encode()) if joined else _year_hash(year)
    return Item(text, ItemKind.STANDARD, pair=(h, number))


class _Spans:
    """Character spans already taken by an item (a later match inside one is skipped)."""

    def __init__(self) -> None:
        self.spans: list[tuple[int, int]] = []

    def free(self, start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in self.spans)

    def take(self, start: int, end: int) -> None:
        self.spans.append((start, end))


def extract(answer: str) -> list[Item]:
    """Every item of ``answer`` (citation markers already removed), in reading order."""
    text = unicodedata.normalize("NFKC", answer)
    found: list[tuple[int, Item]] = []
    spans = _Spans()

    def add(start: int, end: int, item: Item | None) -> None:
        if item is not None and spans.free(start, end):
            spans.take(start, end)
            found.append((start, item))

    for m in _URL.finditer(text):
        raw = m.group().rstrip(TRAIL)
        doi = _DOI.search(raw)
        if doi is not None and "doi.org/" in raw.casefold():  # a DOI link is its DOI
            item = Item(raw, ItemKind.DOI, link="doi:" + doi_key(doi.group()))
        else:
            item = Item(raw, ItemKind.URL, link="url:" + url_key(raw))
        add(m.start(), m.start() + len(raw), item)
    for m in _DOI.finditer(text):
        raw = m.group().rstrip(TRAIL)
        add(m.start(), m.start() + len(raw), Item(raw, ItemKind.DOI, link="doi:" + doi_key(raw)))
    for m in _ISBN.finditer(text):
        key = isbn_key(m.group(1))
        if key:
            add(m.start(), m.end(), Item(m.group(), ItemKind.ISBN, link="isbn:" + key))
    for m in (*_STANDARD.finditer(text), *_YEAR_FIRST.finditer(text)):
        got = m.groupdict()
        text_of = m.group().rstrip(")")
        add(
            m.start(),
            m.end(),
            _standard(m["name"], got.get("code"), got.get("sep") or "", m["year"], text_of),
        )
    for m in _NARRATIVE.finditer(text):
        add(m.start(), m.end(), _author(m["name"], m["year"], m.group()))
    for p in _PAREN.finditer(text):
        for part in re.finditer(r"[^;]+", p.group(1)):
            hit = _IN_PAREN.fullmatch(part.group().strip().rstrip(","))
            if hit is not None:
                start = p.start(1) + part.start()
                add(start, p.start(1) + part.end(), _author(hit["name"], hit["year"], hit.group()))
    for m in _BARE.finditer(text):
        add(m.start(), m.end(), _author(m["name"], m["year"], m.group()))

    blank = list(text)
    for s, e in (
        spans.spans
        + [m.span() for m in _VERSION.finditer(text)]
        + [m.span() for m in _LIST_MARK.finditer(text)]
    ):
        blank[s:e] = " " * (e - s)
    rest = "".join(blank)
    pos = 0
    for q in quantities(rest):
        at = rest.find(q.text, pos)
        at = pos if at < 0 else at
        pos = at + len(q.text)
        kind = _number_kind(q.text, q.key, rest, pos)
        unit = _DURATION.match(rest, pos) if kind is ItemKind.DURATION else None
        shown = q.text + unit.group().rstrip() if unit else q.text  # "5 days", not "5"
        found.append((at, Item(shown, kind, number=key_query(q.key))))
    found.sort(key=lambda x: x[0])
    return [item for _, item in found]


def _number_kind(surface: str, key: str, text: str, end: int) -> ItemKind:
    """Percentage, amount, date (a month, a year, a time of day), duration or number."""
    if key.endswith("%"):
        return ItemKind.PERCENTAGE
    before = text[max(0, end - len(surface) - 1) : end - len(surface)]
    if surface[:1] in _CURRENCY or (before and before in _CURRENCY):
        return ItemKind.AMOUNT
    if key.isalpha() or ":" in key:
        return ItemKind.DATE
    if _DURATION.match(text, end):
        return ItemKind.DURATION
    if re.fullmatch(_YEAR, key):
        return ItemKind.DATE
    return ItemKind.NUMBER


__all__ = ["NOT_ACRONYMS", "NOT_NAMES", "REFERENCE_KINDS", "Item", "ItemKind", "extract"]
