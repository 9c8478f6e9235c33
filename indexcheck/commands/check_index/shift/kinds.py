"""The misalignment bugs besides the positional cache (:mod:`.model`), recognised from the
holders' pattern: which position's fresh embedding each shifted chunk holds.

- ``dropped_item`` / ``duplicated_item``: a provider skipped (or repeated) an input and the
  indexer zipped the rest by position: one constant offset (+1 for a drop, -1 for a
  duplicate; one more at each further drop) from one point on, whatever the repeats;
- ``batch_misplaced``: a block of chunks holds another block's vectors (concurrent batches
  collected as they finished): blocks of constant offset no shorter than their length;
- ``cache_hits_first``: a text cache returned each batch's hits before its misses
  (``hits + misses``) and the indexer zipped them by position: predicted from the repeats
  alone (a text whose first copy lies in an earlier batch is a hit) for the batch size the
  holders point to, batches restarting at each ``OUTER`` block (LlamaIndex inserts 2048
  nodes at a time);
- ``permuted_in_batches``: a batch's results came back in another order: every holder
  lies in its chunk's batch (size inferred), in both directions;
- ``permuted``: the honest fallback when no single pattern fits.

Positions are compared by embedding identity (``same``: the first position whose fresh
vector equals, :func:`identity`), so texts that read the same to the model (equal in the
model's window) are equally good holders and the kind's own prediction wins among them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

DROPPED_ITEM = "dropped_item"
DUPLICATED_ITEM = "duplicated_item"
BATCH_MISPLACED = "batch_misplaced"
PERMUTED_IN_BATCHES = "permuted_in_batches"
PERMUTED = "permuted"
CACHE_HITS_FIRST = "cache_hits_first"
FIT_SHARE = 0.9
#: the indexer's outer blocks inside which the embedding batches restart (None: one block)
OUTER = (None, 2048)
#: batch sizes tried for ``cache_hits_first``: the smallest that hold the holders best
BATCH_CANDIDATES = 8
#: the candidates are compared on the positions before this one (then the best is
#: predicted everywhere), and at most this many batches are read for the warm cache's order
FIT_WINDOW = 200_000
BATCHES_READ = 400
#: a block needs this many observed chunks to count (fewer are another fault)
BLOCK_MIN = 2
MAX_BLOCKS = 16
LOOK = 6
MAX_BATCH = 2048
_KEY_WEIGHTS = np.random.default_rng(36).integers(1, 2**62, size=8192, dtype=np.int64)


def vector_keys(vectors: np.ndarray) -> np.ndarray:
    """int64 (m,): a key per unit float32 (m, d) row, equal for rows equal to ~1e-3."""
    q = np.rint(np.asarray(vectors, np.float32) * 1024).astype(np.int64)
    w = _KEY_WEIGHTS[: q.shape[1]]
    with np.errstate(over="ignore"):
        keys: np.ndarray = q @ w
    return keys


def identity(first: np.ndarray, positions: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """int64 (n,): each position's embedding identity, the smallest text-first copy among
    the positions whose fresh vector has its key. ``first`` int64 (n,) the first copy of
    each text; ``positions`` the embedded positions, ``keys`` their :func:`vector_keys`;
    a position not embedded takes its text's first copy's identity."""
    same = first.copy()
    if not len(positions):
        return same
    _, inv = np.unique(keys, return_inverse=True)
    rep = np.full(int(inv.max()) + 1, np.iinfo(np.int64).max, np.int64)
    np.minimum.at(rep, inv, first[positions])
    same[positions] = rep[inv]
    embedded = np.zeros(len(first), bool)
    embedded[positions] = True
    out: np.ndarray = np.where(embedded, same, same[first])
    return out


@dataclass(frozen=True)
class Block:
    """Positions ``start..end`` (inclusive) holding the vectors ``offset`` further on."""

    start: int
    end: int
    offset: int
    observed: int


@dataclass
class KindFit:
    """A kind that explains the shifted chunks: ``explained`` (sorted positions) and, where
    the kind predicts each holder, ``source`` int64 (n,) (else None); ``batch`` for a
    permutation inside batches."""

    kind: str
    explained: np.ndarray
    source: np.ndarray | None
    blocks: list[Block] = field(default_factory=list)
    batch: int = 0
    predicted: int = 0
    #: the first position the kind predicts shifted (-1: the first explained one)
    start: int = -1
    #: batches the prediction shifts (``cache_hits_first``)
    batches: int = 0
    #: the indexer's blocks inside which the batches restart (None: one block)
    outer: int | None = None


def _agrees(same: np.ndarray, p: int, h: int, k: int) -> bool:
    return 0 <= p + k < len(same) and bool(same[p + k] == same[h])


def blocks_of(same: np.ndarray, p: np.ndarray, h: np.ndarray) -> list[Block]:
    """Greedy runs of one offset over the shifted positions ``p`` (sorted) and holders
    ``h``: each run takes, among the raw offsets of its next ``LOOK`` chunks, the offset
    that agrees (by identity) the furthest; a chunk at a boundary that agrees with both
    runs goes to the later one (a repeated text there reads like either holder)."""
    runs: list[list[int]] = []  # [first index, stop index, offset]
    i, m = 0, len(p)
    while i < m:
        best_k, best_j = int(h[i] - p[i]), i + 1
        for k in dict.fromkeys((h[i : i + LOOK] - p[i : i + LOOK]).tolist()):
            j = i
            while j < m and _agrees(same, int(p[j]), int(h[j]), int(k)):
                j += 1
            if j > best_j:
                best_k, best_j = int(k), j
        runs.append([i, best_j, best_k])
        i = best_j
    for a, b in zip(runs, runs[1:], strict=False):
        while a[1] - a[0] > 1 and _agrees(same, int(p[a[1] - 1]), int(h[a[1] - 1]), b[2]):
            a[1] -= 1
            b[0] -= 1
    return [Block(int(p[i]), int(p[j - 1]), k, j - i) for i, j, k in runs]


def _source_of(n: int, blocks: list[Block]) -> np.ndarray:
    src = np.arange(n, dtype=np.int64)
    for b in blocks:
        src[b.start : b.end + 1] = np.clip(np.arange(b.start, b.end + 1) + b.offset, 0, n - 1)
    return src


def fit_kind(
    same: np.ndarray, checked: np.ndarray, held: np.ndarray, first: np.ndarray | None = None
) -> KindFit | None:
    """The kind that explains at least ``FIT_SHARE`` of the shifted checked chunks, or None.
    ``checked`` int64 (m,) sorted checked positions with a comparable vector, ``held``
    int64 (m,) the position whose fresh vector each holds (-1: its own, or none);
    ``first`` int64 (n,) each text's first copy (the repeats a text cache hits)."""
    sh = held >= 0
    p, h = checked[sh], held[sh]
    if len(p) < 2:
        return None
    n = len(same)
    major = [b for b in blocks_of(same, p, h) if b.observed >= BLOCK_MIN]
    got = _fit_blocks(same, checked, held, p, major) if 0 < len(major) <= MAX_BLOCKS else None
    if got is None and first is not None and bool((first != np.arange(n)).any()):
        got = _fit_hits_first(same, first, checked, held)
    if got is None:
        got = _fit_batches(same, p, h)
        if got is not None and _hits_then_misses(got, same, checked, held):
            got.kind = CACHE_HITS_FIRST  # a warm cache: its hits are not the repeats alone
    if got is None:
        return None
    if got.source is not None:  # checked chunks it calls shifted must be shifted
        pred = same[got.source[checked]] != same[checked]
        if int((pred & ~sh).sum()) > (1 - FIT_SHARE) * max(1, int(pred.sum())):
            return None
        got.predicted = int((same[got.source] != same[np.arange(n)]).sum())
    return got


def with_blocks(fit: KindFit, same: np.ndarray, blocks: list[Block]) -> None:
    """Give ``fit`` these blocks (their starts and ends pinned) and the prediction they make."""
    n = len(same)
    fit.blocks = blocks
    fit.source = _source_of(n, blocks)
    fit.predicted = int((same[fit.source] != same[np.arange(n)]).sum())


def _fit_blocks(
    same: np.ndarray, checked: np.ndarray, held: np.ndarray, p: np.ndarray, major: list[Block]
) -> KindFit | None:
    explained_n = sum(b.observed for b in major)
    if explained_n < FIT_SHARE * len(p):
        return None
    src = _source_of(len(same), major)
    sh = held >= 0
    agree = sh & (same[src[checked]] == same[np.maximum(held, 0)]) & (src[checked] != checked)
    explained = checked[agree]
    signs = {b.offset > 0 for b in major}
    # a drift may stop before the end: the indexer's call that the item fell out of ends
    # there (LlamaIndex inserts 2048 nodes at a time)
    drift = len(signs) == 1 and all(abs(b.offset) <= b.end - b.start for b in major)
    drift = drift and all(
        abs(b.offset) - abs(a.offset) in (0, 1) for a, b in zip(major, major[1:], strict=False)
    )
    if drift:
        kind = DROPPED_ITEM if major[0].offset > 0 else DUPLICATED_ITEM
    elif all(abs(b.offset) >= b.end - b.start + 1 for b in major):
        kind = BATCH_MISPLACED
    else:
        return None
    return KindFit(kind, explained, src, major)


def _inside_shares(n: int, p: np.ndarray, h: np.ndarray) -> dict[int, float]:
    """Batch size -> the share of (at most 4000 of) the holders inside their chunk's batch."""
    pick = np.linspace(0, len(p) - 1, min(len(p), 4000)).astype(np.int64)
    ps, hs = p[pick], h[pick]
    return {b: float(np.mean(ps // b == hs // b)) for b in range(2, min(MAX_BATCH, n // 2) + 1)}


def batch_lo(x: Any, batch: int, outer: int | None) -> Any:
    """The first position of the batch of ``x`` (an int or an int64 array), the batches
    restarting at each multiple of ``outer``."""
    o = outer or 1 << 62
    return x // o * o + x % o // batch * batch


def batch_hi(p: int, batch: int, outer: int | None, n: int) -> int:
    """One past the last position of the batch of ``p``."""
    lo = int(batch_lo(p, batch, outer))
    return min(n, lo + batch, lo // outer * outer + outer if outer else n)


def batch_starts(n: int, batch: int, outer: int | None) -> np.ndarray:
    """int64 (n,): the first position of each position's batch (restarting at ``outer``)."""
    out: np.ndarray = batch_lo(np.arange(n, dtype=np.int64), batch, outer)
    return out


def hits_first_source(first: np.ndarray, batch: int, outer: int | None = None) -> np.ndarray:
    """int64 (n,): whose fresh vector each position holds when a text cache returns each
    batch's hits (texts first seen in an earlier batch, holding their first copy's vector)
    before its misses, both in input order."""
    n = len(first)
    pos = np.arange(n, dtype=np.int64)
    lo = batch_starts(n, batch, outer)
    hit = first < lo
    order = np.lexsort((pos, ~hit, lo))  # slot -> the input whose vector comes back there
    out: np.ndarray = np.where(hit[order], first[order], order)
    return out


def _fit_hits_first(
    same: np.ndarray, first: np.ndarray, checked: np.ndarray, held: np.ndarray
) -> KindFit | None:
    """``cache_hits_first`` for the batch size (among the ``BATCH_CANDIDATES`` smallest
    that keep the holders inside their batch best) whose prediction agrees with at least
    ``FIT_SHARE`` of the shifted checked chunks and of the checked chunks it shifts."""
    n = len(same)
    sh = held >= 0
    shares = _inside_shares(n, checked[sh], held[sh])
    if not shares:
        return None
    top = max(shares.values())
    sizes = sorted(b for b, s in shares.items() if s >= top - 0.05)[:BATCH_CANDIDATES]
    # a hit's holder is its text's nearest copy, often in another batch: the true size
    # may hold fewer holders inside than its multiples do
    sizes = sorted({d for b in sizes for d in range(2, b + 1) if b % d == 0 and d >= b // 4})
    w = min(n, FIT_WINDOW)  # candidates compared on a prefix, the winner predicted everywhere
    best: tuple[int, int, int | None] | None = None
    for batch in sizes:
        for outer in OUTER:
            if outer is not None and outer >= n:
                continue
            k = _hits_first_agree(same, first[:w], checked, held, batch, outer)
            if k is not None and (best is None or k > best[0]):
                best = (k, batch, outer)
    if best is None:
        return None
    _, batch, outer = best
    src = hits_first_source(first, batch, outer)
    moved = same[src] != same
    agree = sh & moved[checked] & (same[src[checked]] == same[np.maximum(held, 0)])
    if int(agree.sum()) < FIT_SHARE * int(moved[checked].sum()):
        return None
    lo = batch_starts(n, batch, outer)
    return KindFit(CACHE_HITS_FIRST, checked[agree], src, batch=batch,
                   start=int(np.flatnonzero(moved)[0]), batches=len(np.unique(lo[moved])),
                   outer=outer)  # fmt: skip


def _hits_first_agree(
    same: np.ndarray,
    first: np.ndarray,
    checked: np.ndarray,
    held: np.ndarray,
    batch: int,
    outer: int | None,
) -> int | None:
    """How many checked chunks before ``len(first)`` the prediction explains, when it
    explains ``FIT_SHARE`` of those it shifts and of those shifted there; else None."""
    w = len(first)
    inside = checked < w
    c, h = checked[inside], held[inside]
    src = hits_first_source(first, batch, outer)
    pred = same[src[c]] != same[c]
    agree = (h >= 0) & pred & (same[src[c]] == same[np.maximum(h, 0)])
    k = int(agree.sum())
    if k < 2 or k < FIT_SHARE * int(pred.sum()) or k < FIT_SHARE * int((h >= 0).sum()):
        return None
    return k


def _hits_then_misses(
    fit: KindFit, same: np.ndarray, checked: np.ndarray, held: np.ndarray
) -> bool:
    """Every chunk checked (--all) and, in at least ``FIT_SHARE`` of the batches with
    shifted chunks, the holders read as ``hits + misses``: the chunks holding a later
    vector of their batch (the cache's hits) all come first, then those holding an
    earlier one (its misses), each side in input order. A holder that reads like several
    chunks of the batch (a repeated text) is the one that keeps that order."""
    n = len(same)
    sh = held >= 0
    starts = np.unique(batch_lo(checked[sh], fit.batch, fit.outer))
    starts = starts[np.linspace(0, len(starts) - 1, min(len(starts), BATCHES_READ)).astype(int)]
    good = 0
    for lo in starts.tolist():
        hi = batch_hi(lo, fit.batch, fit.outer, n)
        i0, i1 = np.searchsorted(checked, [lo, hi])
        if i1 - i0 < hi - lo:  # a sample sees too little of a batch to tell
            return False
        good += _reads_as_hits_first(same, lo, hi, held[i0:i1])
    return len(starts) >= 2 and good >= FIT_SHARE * len(starts)


def _reads_as_hits_first(same: np.ndarray, lo: int, hi: int, held: np.ndarray) -> bool:
    """One batch ``lo..hi-1``, ``held`` (hi - lo,) as in :func:`fit_kind`."""
    twins: dict[int, list[int]] = {}
    for q in range(lo, hi):
        twins.setdefault(int(same[q]), []).append(q)
    last_hit, last_miss, misses = -1, -1, False
    for q in range(lo, hi):
        h = int(held[q - lo])
        if h < 0:
            continue
        cands = [c for c in twins.get(int(same[h]), []) if c != q]
        hit = [c for c in cands if c > max(q, last_hit)]
        if hit and not misses:
            last_hit = hit[0]
            continue
        miss = [c for c in cands if last_miss < c < q]
        if not miss:
            return False
        misses, last_miss = True, miss[0]
    return True


def _fit_batches(same: np.ndarray, p: np.ndarray, h: np.ndarray) -> KindFit | None:
    """Holders inside their chunk's batch: the smallest batch size (from ``max |offset|``
    + 1 to ``MAX_BATCH``) that keeps the most of them there, at least ``FIT_SHARE``."""
    n = len(same)
    shares = _inside_shares(n, p, h)
    if not shares:
        return None
    top = max(shares.values())
    if top < FIT_SHARE:
        return None
    batch = min(b for b, s in shares.items() if s >= top - 0.05)  # twins blur the share
    outers = [o for o in OUTER if o is None or o < n]
    outer = max(outers, key=lambda o: int((batch_lo(p, batch, o) == batch_lo(h, batch, o)).sum()))
    inside = batch_lo(p, batch, outer) == batch_lo(h, batch, outer)
    for i in np.flatnonzero(~inside):  # a holder that reads like one inside the batch
        lo = int(batch_lo(int(p[i]), batch, outer))
        hi = batch_hi(lo, batch, outer, n)
        twins = np.flatnonzero(same[lo:hi] == same[h[i]]) + lo
        inside[i] = bool((twins != p[i]).any())
    if len(np.unique(batch_lo(p[inside], batch, outer))) < 2:
        return None
    if not ((h - p) > 0).any() or not ((h - p) < 0).any():
        return None
    return KindFit(
        PERMUTED_IN_BATCHES, p[inside], None, batch=batch, predicted=int(inside.sum()), outer=outer
    )


def holder(fit: KindFit, same: np.ndarray, p: int, h: int) -> int:
    """The holder the kind predicts for ``p`` among those that read like ``h``."""
    if fit.source is not None:
        s = int(fit.source[p])
        return s if same[s] == same[h] else h
    lo = int(batch_lo(p, fit.batch, fit.outer))
    hi = batch_hi(p, fit.batch, fit.outer, len(same))
    twins = np.flatnonzero(same[lo:hi] == same[h]) + lo
    twins = twins[twins != p]
    return int(twins[np.argmin(np.abs(twins - p))]) if twins.size else h


def kind_details(fit: KindFit, ids: Any, all_checked: bool, checked: int) -> dict[str, Any]:
    """The root finding's figures: start, chunks, blocks (``stretches``) or batches."""
    ex = fit.explained
    start = fit.blocks[0].start if fit.blocks else fit.start if fit.start >= 0 else int(ex[0])
    d: dict[str, Any] = {
        "model": fit.kind,
        "start_position": start,
        "start_id": ids[start],
        "shifted_checked": int(len(ex)),
        "chunks_affected": int(len(ex)) if all_checked else fit.predicted,
        "chunks_predicted": fit.predicted if fit.source is not None else int(len(ex)),
    }
    if not all_checked and fit.source is None:  # a sample: extrapolate the share
        d["chunks_predicted"] = d["chunks_affected"] = 0
        d["estimated_share"] = round(len(ex) / max(1, checked), 4)
    if fit.blocks:
        offs = [b.offset for b in fit.blocks]
        d["start_offset"] = offs[0]
        d["offset_range"] = [min(offs), max(offs)]
        d["stretches"] = [
            {"start": b.start, "end": b.end, "start_id": ids[b.start], "offset": b.offset,
             "chunks": b.end - b.start + 1, "shifted_checked": b.observed,
             "trigger_position": None, "trigger_id": None}
            for b in fit.blocks
        ]  # fmt: skip
        d["stretches_total"] = len(fit.blocks)
    if fit.batch and fit.source is not None:  # every batch the prediction shifts
        d["batch_size"] = fit.batch
        d["batches_affected"] = fit.batches
    elif fit.batch:
        per = np.unique(batch_lo(ex, fit.batch, fit.outer), return_counts=True)
        d["batch_size"] = fit.batch
        d["batches_affected"] = int(len(per[0]))
        d["batches"] = [
            {"start": int(b), "chunks": int(c)}
            for b, c in zip(per[0][:1000], per[1][:1000], strict=True)
        ]
    return d


def headline(fit: KindFit, d: dict[str, Any], start_id: str, tail_ok: bool) -> str:
    """The first sentence: kind, start, cause and fix."""
    s = d["start_position"]
    at = f"'{start_id}' (position {s})"
    if fit.kind in (DROPPED_ITEM, DUPLICATED_ITEM):
        k = abs(d["start_offset"])
        drops = len(fit.blocks)
        what = "dropped item" if fit.kind == DROPPED_ITEM else "duplicated item"
        if drops > 1:
            what = f"{what} ({drops} of them, the offset one more at each)"
        end = "to the end" if tail_ok else f"to position {fit.blocks[-1].end}"
        where = "after" if fit.kind == DROPPED_ITEM else "before"
        cause = (
            "the provider skipped an input and the indexer zipped the rest by position"
            if fit.kind == DROPPED_ITEM
            else "an input came back twice and the indexer zipped the rest by position"
        )
        redo = f"from position {s} on" if tail_ok else f"positions {s}-{fit.blocks[-1].end}"
        return (
            f"one {what} at {at}: from there {end} each chunk holds the vector {k} "
            f"position(s) {where} it; {cause}; fix: pair each vector with its input (check "
            f"the count returned per batch) and re-embed {redo}"
        )
    if fit.kind == BATCH_MISPLACED:
        b = fit.blocks[0]
        more = f" ({len(fit.blocks)} blocks)" if len(fit.blocks) > 1 else ""
        return (
            f"one misplaced batch{more} at {at}: positions {b.start}-{b.end} hold the vectors "
            f"of positions {b.start + b.offset}-{b.end + b.offset}; batches were stored in "
            "the order they finished, not the order sent; fix: keep each batch's results "
            f"with its inputs and re-embed positions {b.start}-{fit.blocks[-1].end}"
        )
    if fit.kind == CACHE_HITS_FIRST:
        return (
            f"a cache returned its hits before its misses inside each batch of {fit.batch} "
            f"from {at} on: each batch's cached texts got the first vectors back and the "
            "texts embedded afresh the rest, zipped with the texts by position; fix: zip the "
            "cache's results back by the texts' positions (fill each miss into its own slot) "
            f"and re-embed the {d['batches_affected']} affected batches from position {s} on"
        )
    return (
        f"results permuted inside batches of {fit.batch} from {at} on: chunks hold the "
        "vector of another chunk of their own batch, never of another batch; the provider "
        "or a concurrent client returned each batch in another order, or a cache returned "
        "its hits before its misses, and the indexer zipped it in request order; fix: map "
        f"each result to its input by index and re-embed the {d['batches_affected']} "
        "affected batches"
    )
