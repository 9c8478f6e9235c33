"""An index of normalized tokens, token pairs and links over many texts, built once (numpy).

Texts are NFKC-folded and cut into tokens (runs of ASCII letters and digits and non-ASCII
characters; ".", "," and ":" kept between two digits, so "0.5", "1,000", "2:30" stay whole).
A token is a 64-bit hash of its first 8 bytes, last 8 and length (exact up to 16 bytes), ASCII
case folded. One vectorized pass, 1M characters at a time (never a scan per answer), indexes
per document ``doc`` (0 for a knowledge base; one per answer for the contexts sent):

- number keys (:func:`.claim_checks.quantities`): tokens starting with a digit, number words
  and months ("five" -> 5; "May" only capitalised), "twenty five", percentages;
- name-number pairs: a capitalised token up to :data:`WINDOW` tokens before a number token
  ("Harper, J. A. (1998)" holds (harper, 1998));
- links: normalized URLs, DOIs and ISBN-13s (:mod:`.links`). A hash collision (odds about
  n^2 / 2^64) can only make a lookup succeed, never fail.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .claims import NUMBER_WORDS, quantities
from .links import link_keys

WINDOW = 8  # tokens between a name and its year: "Smith, J., Jones, K., & Lee, M. (2019)"
_BLOCK = 1 << 20  # characters per numpy pass: small enough for its buffers to stay cached
_K1 = 0xFF51AFD7ED558CCD
_K2 = 0xC4CEB9FE1A85EC53
_MASK = (1 << 64) - 1
_MIX = 0xBF58476D1CE4E5B9
_PAIR = 0x94D049BB133111EB
_DOC = 0x9E3779B97F4A7C15
_SALT = 0xD6E8FEB86659FD93  # a number key's hash is its digits' hash, salted

_ALNUM = np.zeros(256, dtype=bool)
for _c in b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789":
    _ALNUM[_c] = True
_ALNUM[0x80:] = True  # every byte of a UTF-8 multibyte character
_DIGIT = np.zeros(256, dtype=bool)
_DIGIT[ord("0") : ord("9") + 1] = True
_INNER = np.zeros(256, dtype=bool)  # kept between two digits
for _c in b".,:":
    _INNER[_c] = True
_CAP = np.zeros(256, dtype=bool)
_CAP[ord("A") : ord("Z") + 1] = True
_CAP[0x80:] = True  # a non-ASCII letter may be a capital: lenient, never strict
_LOWER = bytes(c + 32 if 65 <= c <= 90 else c for c in range(256))
_TOKEN_BYTES = bytes(_ALNUM.astype(np.uint8))  # for bytes.translate: faster than a gather
_INNER_BYTES = bytes(_INNER.astype(np.uint8))
_KEEP = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [_MASK], dtype=np.uint64)
_TOKEN = re.compile(rb"(?:[A-Za-z0-9\x80-\xff]|(?<=[0-9])[.,:](?=[0-9]))+")
_DASHES = str.maketrans({c: " " for c in "\u2010\u2011\u2012\u2013\u2014\u2212\u00a0\u2026"})


def _mix(h: int) -> int:
    h ^= h >> 31
    h = (h * _MIX) & _MASK
    return h ^ (h >> 29)


def _mix_np(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> np.uint64(31))
    h = h * np.uint64(_MIX)
    out: np.ndarray = h ^ (h >> np.uint64(29))
    return out


def _pair_np(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _mix_np(a * np.uint64(_PAIR) + b)


def _pair(a: int, b: int) -> int:
    return _mix((a * _PAIR + b) & _MASK)


def _scoped(h: np.ndarray, doc: np.ndarray) -> np.ndarray:
    return _mix_np(h ^ (doc.astype(np.uint64) * np.uint64(_DOC)))


def _scoped_one(h: int, doc: int) -> int:
    return _mix(h ^ ((doc * _DOC) & _MASK))


def token_hash(token: bytes) -> int:
    """The 64-bit hash of one token's bytes (case already folded), as the index computes it:
    its first 8 bytes, its last 8 and its length (exact up to 16 bytes)."""
    n = len(token)
    first = int.from_bytes(token[:8], "little")
    last = int.from_bytes(token[-8:], "little") if n > 8 else 0
    return (first * _K1 + last * _K2 + n) & _MASK


def _short_hash(token: bytes) -> int:
    """:func:`token_hash` without the last 8 bytes (the same up to 8 bytes): what number
    words are recognised by, so that only names and numbers need their full hash."""
    return (int.from_bytes(token[:8], "little") * _K1 + len(token)) & _MASK


def _key_hash(key: str) -> int:
    """The hash standing for a number key ("20"): its text's hash, salted (so that the key
    "20" and the token "20" differ, and plain digits map without leaving numpy)."""
    return _mix(token_hash(key.encode()) ^ _SALT)


PERCENT = token_hash(b"percent")


def prepare(text: str) -> str:
    """NFKC, dashes and no-break spaces as spaces, "%" and "per cent" written "percent"."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(_DASHES)
    return text.replace("%", " percent ").replace("per cent", "percent")


def tokens(text: str) -> list[bytes]:
    """The index's tokens of ``text`` (ASCII case folded), for building queries."""
    return [m.group().translate(_LOWER) for m in _TOKEN.finditer(prepare(text).encode())]


def number_token(token: bytes) -> int:
    """A token's hash in the number keys: its quantities() key when it reads as one
    number ("2019." -> 2019, "1,000" -> 1000), else the token itself."""
    found = quantities(token.decode("utf-8", "replace"))
    return _key_hash(found[0].key) if len(found) == 1 else token_hash(token)


def key_query(key: str) -> tuple[int, ...]:
    """The index entry of a quantities() key: "20%" is (#20, percent), "5" is (#5,)."""
    if key.endswith("%"):
        return (_key_hash(key[:-1]), PERCENT)
    return (_key_hash(key),)


def _word_table() -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[int, float]]:
    """Number words and months: sorted hashes, their key hashes, capital-only flags, values."""
    rows = []
    for word in sorted(NUMBER_WORDS):
        lower = quantities(word)  # number words count in lower case, "May" capitalised
        found = lower or quantities(word.capitalize())
        if len(found) != 1:
            continue
        key = found[0].key
        rows.append((_short_hash(word.encode()), _key_hash(key), not lower, key))
    rows.sort()
    values = {}
    for _, kh, _, key in rows:
        try:
            values[kh] = float(key)
        except ValueError:
            pass
    return (
        np.array([r[0] for r in rows], dtype=np.uint64),
        np.array([r[1] for r in rows], dtype=np.uint64),
        np.array([r[2] for r in rows], dtype=bool),
        values,
    )


_WORDS, _WORD_KEYS, _WORD_CAP_ONLY, _WORD_VALUES = _word_table()
_WORD_MASK = (1 << 16) - 1
_WORD_SLOTS = np.full(_WORD_MASK + 1, -1, dtype=np.int64)  # direct-mapped: hash -> row
for _row, _h in enumerate(_WORDS.tolist()):
    assert _WORD_SLOTS[_h >> 48] < 0, "number words collide in the slot table"
    _WORD_SLOTS[_h >> 48] = _row
_TENS = {v: k for k, v in _WORD_VALUES.items() if v in (20, 30, 40, 50, 60, 70, 80, 90)}
_UNITS = {v: k for k, v in _WORD_VALUES.items() if v in range(1, 10)}
_TENS_KEYS = np.array(sorted(_TENS.values()), dtype=np.uint64)
_UNIT_KEYS = np.array(sorted(_UNITS.values()), dtype=np.uint64)
_COMPOSED = {
    (t, u): _key_hash(str(int(tv + uv)))  # quantities("twenty-five") -> "25"
    for tv, t in _TENS.items()
    for uv, u in _UNITS.items()
}


@dataclass
class TextIndex:
    """Sorted uint64 arrays of number keys and name-number pairs, and the links, per doc."""

    numbers: np.ndarray
    pairs: np.ndarray
    links: set[tuple[int, str]]
    texts: int
    tokens: int

    def has_number(self, query: tuple[int, ...], doc: int = 0) -> bool:
        """Is the number key (see :func:`key_query`) in document ``doc``?"""
        h = query[0] if len(query) == 1 else _pair(query[0], query[1])
        return _member(self.numbers, h, doc)

    def has_pair(self, name: int, number: int, doc: int = 0) -> bool:
        """Does a capitalised ``name`` token stand within WINDOW tokens before ``number``?"""
        return _member(self.pairs, _pair(name, number), doc)

    def has_link(self, link: str, doc: int = 0) -> bool:
        return (doc, link) in self.links


def _member(arr: np.ndarray, h: int, doc: int) -> bool:
    key = np.uint64(_scoped_one(h, doc))
    i = int(np.searchsorted(arr, key))
    return i < arr.size and bool(arr[i] == key)


def build_index(texts: Sequence[str], docs: Sequence[int] | None = None) -> TextIndex:
    """Index ``texts``; ``docs[i]`` is the document text i belongs to (all 0 when None)."""
    doc_of = np.zeros(len(texts), dtype=np.int64) if docs is None else np.asarray(docs)
    numbers: list[np.ndarray] = []
    pairs: list[np.ndarray] = []
    found_links: set[tuple[int, str]] = set()
    cache: dict[int, int] = {}
    count = 0
    start = 0
    while start < len(texts):
        end, size = start, 0
        while end < len(texts) and (size < _BLOCK or end == start):
            size += len(texts[end]) + 1
            end += 1
        raw = "\x00".join(texts[start:end])
        if raw.count("\x00") != end - start - 1:  # a NUL inside a text would end it
            raw = "\x00".join(t.replace("\x00", " ") for t in texts[start:end])
        if docs is None:  # one document: the links of the whole block at once
            found_links |= {(0, link) for link in link_keys(raw)}
        else:
            for i in range(start, end):
                found_links |= {(int(doc_of[i]), link) for link in link_keys(texts[i])}
        n, p = _block(prepare(raw).encode(), doc_of[start:end], cache)
        numbers.append(n)
        pairs.append(p)
        count += int(n.size)
        start = end
    return TextIndex(
        np.unique(np.concatenate(numbers)) if numbers else np.zeros(0, np.uint64),
        np.unique(np.concatenate(pairs)) if pairs else np.zeros(0, np.uint64),
        found_links,
        len(texts),
        count,
    )


def _words64(low: bytes) -> np.ndarray:
    """The little-endian uint64 at every byte offset of ``low`` (a strided, unaligned view:
    one gather reads a token's first 8 bytes)."""
    return np.ndarray((len(low) - 7,), dtype="<u8", buffer=low, strides=(1,))


def _all_digits(low: np.ndarray, starts: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Whether each token (at most 15 bytes) is digits only."""
    view = np.lib.stride_tricks.as_strided(low, (low.size - 15, 16), (1, 1))
    window = view[starts]
    inside = np.arange(16) < length[:, None]
    out: np.ndarray = (_DIGIT[window] | ~inside).all(axis=1)
    return out


def _block(data: bytes, docs: np.ndarray, cache: dict[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Number keys and name-number pairs (doc-scoped hashes) of one block of texts joined
    by NUL bytes (a NUL ends a text: no pair crosses it)."""
    none = np.zeros(0, np.uint64)
    data = b" " + data + b" "  # no token touches either end
    b = np.frombuffer(data, dtype=np.uint8)
    tok = np.frombuffer(data.translate(_TOKEN_BYTES), dtype=bool).copy()
    punct = np.flatnonzero(np.frombuffer(data.translate(_INNER_BYTES), dtype=bool))
    punct = punct[_DIGIT[b[punct - 1]] & _DIGIT[b[punct + 1]]]
    tok[punct] = True  # ".", ",", ":" kept between two digits
    edges = np.flatnonzero(tok[1:] != tok[:-1]) + 1
    starts, ends = edges[0::2], edges[1::2]
    if starts.size == 0:
        return none, none
    length = ends - starts
    lowb = data.translate(_LOWER) + bytes(16)
    low, words64 = np.frombuffer(lowb, dtype=np.uint8), _words64(lowb)
    lead = b[starts]
    cap = _CAP[lead]
    # every token's short hash (its full hash up to 8 bytes) finds number words; names and
    # numbers longer than 8 bytes also get their last 8 bytes (see token_hash)
    sh = words64[starts] & _KEEP[np.minimum(length, 8)]
    sh *= np.uint64(_K1)
    sh += length.astype(np.uint64)
    h = sh.copy()
    long = np.flatnonzero((cap | _DIGIT[lead]) & (length > 8))
    h[long] += words64[ends[long] - 8] * np.uint64(_K2)
    # the text each token is in (texts are joined by NULs)
    firsts = np.searchsorted(starts, np.flatnonzero(b == 0))
    text_no = np.cumsum(np.bincount(firsts, minlength=starts.size + 1)[: starts.size])

    def text_of(t: np.ndarray) -> np.ndarray:
        out: np.ndarray = text_no[t]
        return out

    def doc_of(t: np.ndarray) -> np.ndarray:
        return docs[text_of(t)] if docs.size > 1 else np.zeros(t.size, dtype=np.int64)

    # a number token starts with a digit ("2019", "5th", "9001:2015"); "covid19" is a name
    nums = np.flatnonzero(_DIGIT[lead])
    num_canon = h[nums]
    # plain digits ("2019", no leading zero) are their own key: no Python per token
    n_len = length[nums]
    short = np.flatnonzero((n_len <= 15) & ((lead[nums] != 48) | (n_len == 1)))
    plain = np.zeros(nums.size, dtype=bool)
    plain[short[_all_digits(low, starts[nums[short]], n_len[short])]] = True
    num_canon[plain] = _mix_np(num_canon[plain] ^ np.uint64(_SALT))
    # "5th", "1,000", "0.5", "2:30", "10mg": the judge's quantities() once per distinct token
    other = np.flatnonzero(~plain)
    uniq, first, back = np.unique(num_canon[other], return_index=True, return_inverse=True)
    mapped = np.empty(uniq.size, dtype=np.uint64)
    for row, u in enumerate(uniq.tolist()):
        got = cache.get(u)
        if got is None:
            t = nums[other[first[row]]]
            got = cache[u] = number_token(data[starts[t] : ends[t]].translate(_LOWER))
        mapped[row] = got
    num_canon[other] = mapped[back]
    slot = _WORD_SLOTS[sh >> np.uint64(48)]  # the high bits of a multiply mix every byte
    words = np.flatnonzero(_WORDS[slot] == sh)
    words = words[(slot[words] >= 0) & (cap[words] | ~_WORD_CAP_ONLY[slot[words]])]
    word_canon = _WORD_KEYS[slot[words]]

    at = np.concatenate([nums, words])
    canon = np.concatenate([num_canon, word_canon])
    keys = [canon]
    nxt = at + 1 < starts.size
    pct = np.flatnonzero(nxt)
    pct = pct[sh[at[pct] + 1] == np.uint64(PERCENT)]
    pct = pct[text_of(at[pct]) == text_of(at[pct] + 1)]
    keys.append(_pair_np(canon[pct], np.full(pct.size, PERCENT, dtype=np.uint64)))
    key_at = [at, at[pct]]
    composed, where = _composed(words, word_canon, text_of)
    keys.append(composed)
    key_at.append(where)
    then = where + 2 < starts.size  # "twenty-five percent"
    cp = np.flatnonzero(then)
    cp = cp[
        (sh[where[cp] + 2] == np.uint64(PERCENT)) & (text_of(where[cp]) == text_of(where[cp] + 2))
    ]
    keys.append(_pair_np(composed[cp], np.full(cp.size, PERCENT, dtype=np.uint64)))
    key_at.append(where[cp])

    pair_keys, pair_at = [], []
    for d in range(1, WINDOW + 1):
        j = np.flatnonzero(nums >= d)
        i = nums[j] - d
        ok = cap[i]
        j, i = j[ok], i[ok]
        ok = text_of(i) == text_of(nums[j])
        pair_keys.append(_pair_np(h[i[ok]], num_canon[j[ok]]))
        pair_at.append(nums[j[ok]])
    return (
        _scoped(np.concatenate(keys), doc_of(np.concatenate(key_at))),
        _scoped(np.concatenate(pair_keys), doc_of(np.concatenate(pair_at))),
    )


def _composed(
    words: np.ndarray, canon: np.ndarray, text_of: Callable[[np.ndarray], np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """The keys of "twenty five" / "twenty-five" (two word tokens in a row, same text) and
    the token each starts at; ``words`` are the number words' token numbers, ``canon`` their
    keys."""
    i = np.flatnonzero(words[1:] == words[:-1] + 1)
    i = i[np.isin(canon[i], _TENS_KEYS) & np.isin(canon[i + 1], _UNIT_KEYS)]
    i = i[text_of(words[i]) == text_of(words[i + 1])]
    out = [_COMPOSED[(t, u)] for t, u in zip(canon[i].tolist(), canon[i + 1].tolist(), strict=True)]
    return np.array(out, dtype=np.uint64), words[i]


__all__ = [
    "PERCENT",
    "WINDOW",
    "TextIndex",
    "build_index",
    "key_query",
    "number_token",
    "prepare",
    "token_hash",
    "tokens",
]
