"""Where each chunk's right vector is, without embedding the index.

A positional-cache bug is predicted from the repeated texts alone
(:func:`..check_index.shift.model.predict`): row ``p`` holds the fresh embedding of the
text built at ``source[p]``. So chunk ``j``'s right vector sits at any usable row whose held
text is ``j``'s text as it is now; a chunk whose text no row holds has a vector that exists
nowhere (the tail of a shift, a text changed after it was embedded, a missing or unusable
vector) and must be embedded. Three readings of the rows compete (no shift, ``skip_repeat``,
``dedup_by_position``); a seeded sample of chunks, embedded, picks the one whose reused
vectors match (:func:`choose`), and checks them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from ..check_index.shift.model import DEDUP_BY_POSITION, SKIP_REPEAT, predict
from .rows import SourceRows, text_keys

#: the stored vectors float32 (m, d) at positions int64 (m,)
Stored = Callable[[np.ndarray], np.ndarray]

#: the readings of the rows, in the order a tie is settled (no shift first)
AS_BUILT = "as_built"
READINGS = (AS_BUILT, SKIP_REPEAT, DEDUP_BY_POSITION)


class Way(StrEnum):
    """How one chunk's vector is obtained, in report order."""

    KEPT = "kept"  # its own stored vector
    MOVED = "moved"  # its right vector, stored at another row
    EMBEDDED = "embedded"  # its vector existed nowhere
    FAILED_VERIFICATION = "failed_verification"  # the reused vector did not match: embedded


def _dup_of(keys: np.ndarray) -> dict[int, int]:
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    firsts = first[inverse]
    rep = np.flatnonzero(firsts != np.arange(len(keys)))
    return dict(zip(rep.tolist(), firsts[rep].tolist(), strict=True))


def holders(rows: SourceRows, reading: str) -> np.ndarray:
    """int64 (n,): a row holding each chunk's right vector under ``reading`` (its own row
    when that holds it), -1 where no row does."""
    n = len(rows)
    built, now = rows.built, rows.now
    source = np.arange(n, dtype=np.int64)
    if reading != AS_BUILT:  # the bug walked the stored rows in build order
        st = np.flatnonzero(rows.in_store)
        source[st] = st[predict(len(st), _dup_of(built[st]), reading).source]
    held = built[source]
    usable = rows.in_store.copy()
    if rows.unusable:
        usable[np.fromiter(rows.unusable, np.int64, len(rows.unusable))] = False
    out = np.full(n, -1, np.int64)
    own = usable & (held == now) & rows.chunk
    out[own] = np.flatnonzero(own)
    cand = np.flatnonzero(usable)
    order = np.argsort(held[cand], kind="stable")
    keys, rows_sorted = held[cand][order], cand[order]
    need = np.flatnonzero((out < 0) & rows.chunk)
    at = np.searchsorted(keys, now[need])
    at_ok = at < len(keys)
    hit = np.zeros(len(need), bool)
    hit[at_ok] = keys[at[at_ok]] == now[need[at_ok]]
    out[need[hit]] = rows_sorted[at[hit]]
    return out


def draw(candidates: list[np.ndarray], k: int, seed: int) -> np.ndarray:
    """Sorted positions: ``k`` drawn with ``default_rng(seed)``, as evenly as they allow
    from each pool of ``candidates`` (disjoint int64 arrays)."""
    rng = np.random.default_rng(seed)
    pools = [p for p in candidates if p.size]
    picked: list[np.ndarray] = []
    left = k
    for i, pool in enumerate(sorted(pools, key=len)):
        share = min(len(pool), left // (len(pools) - i))
        picked.append(rng.choice(pool, share, replace=False))
        left -= share
    return np.sort(np.concatenate(picked)) if picked else np.zeros(0, np.int64)


def sample_for(held: dict[str, np.ndarray], k: int | None, seed: int) -> np.ndarray:
    """The chunks to embed and check: among those some reading reuses a vector for, half
    where the readings disagree (they tell them apart), half among the rest; every one
    when ``k`` is None (``--verify all``)."""
    stack = np.stack([held[r] for r in READINGS])
    reusable = np.flatnonzero((stack >= 0).any(axis=0))
    if k is None or k >= len(reusable):
        return reusable
    disputed = (stack[:, reusable] != stack[0, reusable]).any(axis=0)
    return draw([reusable[disputed], reusable[~disputed]], k, seed)


@dataclass(frozen=True)
class Choice:
    """The reading chosen and, per reading, how many sampled chunks its reused vector
    matched (``agree``) of those it reused one for (``tried``)."""

    reading: str
    agree: dict[str, int]
    tried: dict[str, int]


def matches(stored: Stored, at: np.ndarray, fresh: np.ndarray, min_cosine: float) -> np.ndarray:
    """bool (m,): the stored vector at position ``at[i]`` (-1: none) is at cosine >=
    ``min_cosine`` with unit float32 ``fresh[i]``."""
    ok = at >= 0
    out = np.zeros(len(at), bool)
    if ok.any():
        v = stored(at[ok])
        v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), np.float32(1e-30))
        out[ok] = np.einsum("ij,ij->i", v, fresh[ok]) >= min_cosine
    return out


def choose(
    stored: Stored,
    held: dict[str, np.ndarray],
    sample: np.ndarray,
    fresh: np.ndarray,
    min_cosine: float,
) -> Choice:
    """The reading whose reused vectors match the most sampled chunks' fresh embeddings
    (unit float32 (m, d), in ``sample`` order); ties go to the first of :data:`READINGS`."""
    agree, tried = {}, {}
    for r in READINGS:
        at = held[r][sample]
        agree[r] = int(matches(stored, at, fresh, min_cosine).sum())
        tried[r] = int((at >= 0).sum())
    best = max(READINGS, key=lambda r: (agree[r], -READINGS.index(r)))
    return Choice(best, agree, tried)


__all__ = [
    "AS_BUILT",
    "READINGS",
    "Choice",
    "Stored",
    "Way",
    "choose",
    "draw",
    "holders",
    "matches",
    "sample_for",
    "text_keys",
]
