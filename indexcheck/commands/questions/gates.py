"""Quality gates and multi-hop links for generated questions: pure functions over texts
and float32 vectors.

- :func:`quote_share`: the longest run of words a question shares verbatim with its
  passage(s), as a share of the question's words (lower-cased ``\\w+`` words). A question
  above ``--max-quote`` (default 0.6) copies its passage instead of asking about it.
- :func:`near_duplicates`: a question whose embedding has cosine >= ``--dedupe`` (default
  0.95) with an earlier kept question repeats it.
- :func:`exact_ranks`: where each question's expected chunks sit in the exact top
  ``--fetch`` over the chunks' fresh embeddings; one missing is a finding about the index
  or the question, reported, never silently dropped.
- :func:`link_pairs`: chunk pairs for multi-hop questions, linked by embedding cosine in
  ``[link_min, link_max)`` or by shared named entities.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import StrEnum

import numpy as np

from ...vectors import normalize_rows
from ..kit.exact import exact_topk


class Gate(StrEnum):
    """Why a generated question was dropped, in the order the gates run."""

    MALFORMED = "malformed"
    """the reply never parsed, after every repair request (counted per reply)"""
    VERBATIM = "verbatim"
    UNVERIFIED = "unverified"
    """an out-of-scope question whose verification reply never parsed"""
    ANSWERED_BY_KB = "answered-by-kb"
    DUPLICATE = "duplicate"
    NOT_RETRIEVED = "not-retrieved"
    BUDGET = "budget"
    """planned calls not made, or cut off before a repair, because ``--budget-calls`` was
    reached (counted per call)"""


_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def longest_common_run(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest run of consecutive words found in both ``a`` and ``b``."""
    if not a or not b:
        return 0
    prev = [0] * (len(b) + 1)
    best = 0
    for x in a:
        cur = [0] * (len(b) + 1)
        for j, y in enumerate(b, 1):
            if x == y:
                cur[j] = prev[j - 1] + 1
                best = max(best, cur[j])
        prev = cur
    return best


def quote_share(question: str, passages: Sequence[str]) -> float:
    """Longest common word run with any passage / the question's word count, in [0, 1]."""
    q = words(question)
    if not q:
        return 0.0
    return max((longest_common_run(q, words(p)) for p in passages), default=0) / len(q)


def near_duplicates(vectors: np.ndarray, threshold: float) -> list[tuple[int, float] | None]:
    """For each row of float32 ``vectors`` (n, d) in order: ``(earlier kept row, cosine)``
    when its cosine with a kept earlier row is >= ``threshold`` (it is dropped), else None."""
    x = normalize_rows(np.ascontiguousarray(vectors, dtype=np.float32))
    sims = x @ x.T
    kept: list[int] = []
    out: list[tuple[int, float] | None] = []
    for i in range(x.shape[0]):
        if kept:
            row = sims[i, kept]
            j = int(np.argmax(row))
            if row[j] >= threshold:
                out.append((kept[j], float(row[j])))
                continue
        kept.append(i)
        out.append(None)
    return out


def exact_ranks(
    chunk_ids: Sequence[str],
    chunk_vectors: np.ndarray,
    query_vectors: np.ndarray,
    k: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-``k`` by cosine of float32 queries (q, d) over the chunks (n, d):
    ``(cosines float32 (q, k), ids object (q, k))``, None/NaN past the corpus size."""
    k = max(1, min(k, len(chunk_ids)))
    return exact_topk([(list(chunk_ids), chunk_vectors)], query_vectors, k, "cos")


_ENTITY = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*\b")
#: capitalised words that name no entity of a knowledge base
_COMMON = set(
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April "
    "May June July August September October November December The This That These You Your "
    "If When Each Every All Any".split()
)


def entities(text: str) -> set[str]:
    """Named things in ``text``: capitalised word runs that do not open a sentence, without
    day and month names (a crude, dependency-free stand-in for named-entity recognition)."""
    body = text.split("\n", 1)[-1]  # not the heading line
    found: set[str] = set()
    for m in _ENTITY.finditer(body):
        name = m.group(0)
        before = body[: m.start()].rstrip()
        if not before or before[-1] in ".!?:\n":
            name = name.partition(" ")[2].strip()  # a sentence's first word is capitalised anyway
        if len(name) > 2 and name not in _COMMON:
            found.add(name)
    return found


#: anchors tried per multi-hop pair wanted (at least MIN_ANCHORS) before giving up
ANCHORS_PER_PAIR = 10
MIN_ANCHORS = 50


def link_pairs(
    vectors: np.ndarray,
    anchors: Sequence[int],
    allowed: Sequence[int],
    want: int,
    *,
    link_min: float,
    link_max: float,
    entity_sets: Sequence[set[str]] | None = None,
    min_shared: int = 2,
) -> list[tuple[int, int, dict[str, object]]]:
    """Up to ``want`` distinct chunk pairs ``(a, b, link)`` for multi-hop questions.

    Each anchor (in order, up to ``ANCHORS_PER_PAIR`` per pair wanted) is paired with its
    most similar allowed chunk whose cosine lies in ``[link_min, link_max)`` (below:
    unrelated; above: a near-duplicate, which gives no second hop); failing that, with the
    allowed chunk sharing the most named entities (at least ``min_shared``). ``link``
    records ``{"by": "embedding", "cosine"}`` or ``{"by": "entities", "shared": [...]}``.
    ``vectors`` float32 (n, d) over all chunks.
    """
    if want <= 0 or len(allowed) < 2:
        return []
    x = normalize_rows(np.ascontiguousarray(vectors, dtype=np.float32))
    pool = np.asarray(allowed, dtype=np.int64)
    pairs: list[tuple[int, int, dict[str, object]]] = []
    seen: set[frozenset[int]] = set()
    # a corpus with few links would otherwise try every anchor against every chunk
    for a in list(anchors)[: max(MIN_ANCHORS, ANCHORS_PER_PAIR * want)]:
        if len(pairs) >= want:
            break
        sims = x[pool] @ x[a]
        order = np.argsort(-sims, kind="stable")
        link: tuple[int, dict[str, object]] | None = None
        for j in order:
            b, cos = int(pool[j]), float(sims[j])
            if b == a or frozenset((a, b)) in seen or cos >= link_max:
                continue
            if cos >= link_min:
                link = (b, {"by": "embedding", "cosine": round(cos, 4)})
            break
        if link is None and entity_sets is not None:
            best: tuple[int, set[str]] | None = None
            for b in allowed:
                if b == a or frozenset((a, b)) in seen:
                    continue
                shared = entity_sets[a] & entity_sets[b]
                if len(shared) >= min_shared and (best is None or len(shared) > len(best[1])):
                    best = (b, shared)
            if best is not None:
                link = (best[0], {"by": "entities", "shared": sorted(best[1])})
        if link is not None:
            seen.add(frozenset((a, link[0])))
            pairs.append((a, link[0], link[1]))
    return pairs
