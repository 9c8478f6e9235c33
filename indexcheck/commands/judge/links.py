"""Links in a text, normalized for matching: URLs, DOIs and ISBNs.

A URL loses its scheme, a leading "www.", its case and a trailing "/" or punctuation; a DOI
its case; an ISBN-10 becomes its ISBN-13. Each pattern starts with a literal ("://", "www.",
"10.", "ISBN", "97"), so a scan of a whole knowledge base stays fast; the URL and DOI
patterns capture the normalized key itself.
"""

from __future__ import annotations

import re

_BODY = r"[^\s<>\"'`{}|\\^\[\]\x00]"
_END = r"[^\s<>\"'`{}|\\^\[\]\x00.,;:!?)}'/]"  # a key never ends in punctuation or "/"
TRAIL = ".,;:!?)]}'\""
# on case-folded text: each group is already the key (see url_key, doi_key)
_URL = re.compile(rf"://(?:www\.)?({_BODY}*{_END})")
# (no lookbehind for "://": it would cost the literal-prefix scan, and a "://www." link
# gives the same key through either pattern)
_WWW = re.compile(rf"www\.({_BODY}*{_END})")
_DOI = re.compile(r"(10\.\d{4,9}/[^\s\"'<>\x00]*[^\s\"'<>\x00.,;:!?)\]}])")
_ISBN = re.compile(r"ISBN(?:-1[03])?:?\s*([0-9][0-9 -]{8,16}[0-9Xx])")
_BARE_ISBN = re.compile(r"97[89](?:[ -]?[0-9]){10}")


def url_key(url: str) -> str:
    """A URL for matching: no scheme, no "www.", case folded, no trailing "/" or punctuation."""
    u = url.split("://", 1)[-1].casefold()
    u = u[4:] if u.startswith("www.") else u
    return u.rstrip(TRAIL + "/")


def doi_key(doi: str) -> str:
    """A DOI for matching: case folded, no trailing punctuation."""
    return doi.casefold().rstrip(TRAIL)


def isbn_key(raw: str) -> str | None:
    """An ISBN as its 13 digits (an ISBN-10 converted); None if it is neither length."""
    d = re.sub(r"[^0-9X]", "", raw.upper())
    if len(d) == 10:
        d = "978" + d[:9]
        check = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(d))
        return d + str((10 - check % 10) % 10)
    return d if len(d) == 13 and d.isdigit() else None


def link_keys(text: str) -> set[str]:
    """Every link in ``text`` as "url:...", "doi:..." or "isbn:..." (one C-level scan per
    pattern, no Python per link but for ISBNs)."""
    folded = text.casefold()
    out = {"url:" + k for k in _URL.findall(folded)}
    out |= {"url:" + k for k in _WWW.findall(folded)}
    out |= {"doi:" + k for k in _DOI.findall(folded)}
    for raw in (*_ISBN.findall(text), *_BARE_ISBN.findall(text)):
        key = isbn_key(raw)
        if key:
            out.add("isbn:" + key)
    return out


__all__ = ["TRAIL", "doi_key", "isbn_key", "link_keys", "url_key"]
