"""Links in a text, normalized for matching: URLs, DOIs and ISBNs.

A URL loses its scheme, a leading "www.", its case and a trailing "/" or punctuation; a DOI
its case; an ISBN-10 becomes its ISBN-13. Each pattern starts with a literal ("://", "www.",
"10.", "ISBN", "97"), so a scan of a whole knowledge base stays fast.
"""

from __future__ import annotations

import re

_URL = re.compile(r"://([^\s<>\"'`{}|\\^\[\]\x00]+)")
_WWW = re.compile(r"www\.[^\s<>\"'`{}|\\^\[\]\x00]+")
_DOI = re.compile(r"10\.\d{4,9}/[^\s\"'<>\x00]+")
_ISBN = re.compile(r"ISBN(?:-1[03])?:?\s*([0-9][0-9 -]{8,16}[0-9Xx])")
_BARE_ISBN = re.compile(r"97[89](?:[ -]?[0-9]){10}")
TRAIL = ".,;:!?)]}'\""


def url_key(url: str) -> str:
    """A URL for matching: no scheme, no "www.", case folded, no trailing "/" or punctuation."""
    u = url.split("://", 1)[-1].rstrip(TRAIL).casefold()
    u = u[4:] if u.startswith("www.") else u
    return u.rstrip("/")


def doi_key(doi: str) -> str:
    """A DOI for matching: case folded, no trailing punctuation."""
    return doi.rstrip(TRAIL).casefold()


def isbn_key(raw: str) -> str | None:
    """An ISBN as its 13 digits (an ISBN-10 converted); None if it is neither length."""
    d = re.sub(r"[^0-9X]", "", raw.upper())
    if len(d) == 10:
        d = "978" + d[:9]
        check = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(d))
        return d + str((10 - check % 10) % 10)
    return d if len(d) == 13 and d.isdigit() else None


def links_at(text: str) -> list[tuple[int, str]]:
    """(position, link) for every link in ``text``: "url:...", "doi:..." or "isbn:..."."""
    out = [(m.start(), "url:" + url_key(m.group(1))) for m in _URL.finditer(text)]
    out += [
        (m.start(), "url:" + url_key(m.group()))
        for m in _WWW.finditer(text)
        if text[max(0, m.start() - 3) : m.start()] != "://"
    ]
    out += [(m.start(), "doi:" + doi_key(m.group())) for m in _DOI.finditer(text)]
    for m in (*_ISBN.finditer(text), *_BARE_ISBN.finditer(text)):
        key = isbn_key(m.group(m.lastindex or 0))
        if key:
            out.append((m.start(), "isbn:" + key))
    return out


__all__ = ["TRAIL", "doi_key", "isbn_key", "links_at", "url_key"]
