"""check-index --all, pass 3: the stored vectors no neighbour explained, searched against
every fresh vector on the scratch file, block by block, through a FAISS inner-product index
built on the fly; each candidate is re-checked exactly and the nearest by ``|offset|``
(ties to the chunk before) wins."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .state import StreamRun

#: Above this many unexplained low chunks, a seeded sample of them is searched first; the
#: rest are searched only if the sample finds a shifted vector (a model change leaves
#: every chunk low and none matching, and searching all of them would cost n^2).
GLOBAL_CAP = 20_000


def nearest(match: np.ndarray, p: int) -> int:
    """The match nearest to p; at equal distance the one before p (as the local check)."""
    dist = np.abs(match - p) * 2 + (match > p)
    return int(match[np.argmin(dist)])


def global_search(run: StreamRun, waiting: list[int], shift: dict[int, int]) -> list[int]:
    """Search each waiting stored vector (``run.pending``, in ``waiting``'s order) among all
    fresh vectors, adding the matches to ``shift``; returns the unexplained positions."""
    if not waiting:
        return []
    order = np.arange(len(waiting))
    if len(waiting) > GLOBAL_CAP:
        order = np.random.default_rng(0).permutation(len(waiting))
    first, rest = order[:GLOBAL_CAP], order[GLOBAL_CAP:]
    found = _search(run, waiting, first, shift)
    if rest.size and found:
        _search(run, waiting, rest, shift)
    return [q for q in waiting if q not in shift]


def block_matches(
    f: np.ndarray, start: int, q: np.ndarray, wp: np.ndarray, min_cosine: float
) -> tuple[np.ndarray, np.ndarray]:
    """(key int64 (k,), position int64 (k,)) of each query's nearest match by ``|offset|``
    (ties to the chunk before; key max and -1 where none) among the unit fresh vectors
    ``f`` float32 (m, d) at positions ``start..``: unit stored vectors ``q`` (k, d) of the
    low chunks at positions ``wp``, matched when the exact cosine is at least
    ``min_cosine``."""
    import faiss

    best = np.full(len(q), -1, np.int64)
    best_key = np.full(len(q), np.iinfo(np.int64).max, np.int64)
    index = faiss.IndexFlatIP(f.shape[1])
    index.add(f)
    lims, _dist, hit = index.range_search(q, float(min_cosine) - 1e-4)
    for r in range(len(q)):
        h = hit[lims[r] : lims[r + 1]]
        if not h.size:
            continue
        exact = f[h] @ q[r]  # re-check the candidates exactly
        m = h[exact >= min_cosine] + start
        m = m[m != wp[r]]
        if not m.size:
            continue
        key = np.abs(m - wp[r]) * 2 + (m > wp[r])
        j = int(np.argmin(key))
        best_key[r], best[r] = int(key[j]), int(m[j])
    return best_key, best


def _fresh_blocks(fresh: Any, step: int, fn: Any, *args: Any) -> Iterator[tuple[int, int, Any]]:
    """(first position, rows, ``fn(vectors, first position, *args)``) over every fresh
    vector: where they are when the engine left them on its workers (``map_blocks``), else
    read from the scratch file ``step`` rows at a time."""
    mapper = getattr(fresh, "map_blocks", None)
    if mapper is not None:
        starts = list(getattr(fresh, "starts", [0, fresh.n]))
        for j, (start, out) in enumerate(mapper(fn, *args)):
            yield start, int(starts[j + 1]) - start, out
        return
    for start in range(0, fresh.n, step):
        f = fresh.read(start, min(fresh.n, start + step))
        yield start, f.shape[0], fn(f, start, *args)


def _search(run: StreamRun, waiting: list[int], which: np.ndarray, shift: dict[int, int]) -> int:
    fresh, pending, tick = run.fresh, run.pending, run.tick
    min_cosine, block = run.settings.min_cosine, run.settings.block
    run.say(f"searching {len(which)} low chunks among all {fresh.n} fresh vectors")
    w = np.asarray(waiting, np.int64)
    found = 0
    for s in range(0, len(which), block):
        part = np.sort(which[s : s + block])
        q = pending.take(part)
        wp = w[part]
        best = np.full(len(part), -1, np.int64)
        best_key = np.full(len(part), np.iinfo(np.int64).max, np.int64)
        blocks = _fresh_blocks(fresh, block * 4, block_matches, q, wp, float(min_cosine))
        for start, rows, (key, at) in blocks:
            nearer = key < best_key  # the first block wins a tie, as in one pass
            best_key[nearer], best[nearer] = key[nearer], at[nearer]
            tick("shift search", start + rows, fresh.n)
        for hit in np.flatnonzero(best >= 0).tolist():
            shift[int(wp[hit])] = int(best[hit])
            found += 1
    return found


def fresh_keys(fresh: Any, step: int, keys: Any) -> np.ndarray:
    """int64 (n,): ``keys(vectors, first position)`` of every fresh vector, block by block
    (on the engine's workers when the vectors were left there)."""
    out = np.empty(fresh.n, np.int64)
    for start, rows, got in _fresh_blocks(fresh, step, keys):
        out[start : start + rows] = got
    return out


def window_matches(
    f: np.ndarray, start: int, u: np.ndarray, pos: np.ndarray, window: int, min_cosine: float
) -> tuple[np.ndarray, np.ndarray]:
    """(key int64 (k,), position int64 (k,)) of each low chunk's nearest match by
    ``|offset|`` (ties to the chunk before; key max and -1 where none) among the unit fresh
    vectors ``f`` float32 (m, d) at positions ``start..`` that lie within ``window`` of it:
    unit stored vectors ``u`` (k, d) of the low chunks at positions ``pos`` (k,). The cosines
    are row by row (einsum), so a window cut across blocks gives the same bits."""
    best = np.full(len(pos), -1, np.int64)
    best_key = np.full(len(pos), np.iinfo(np.int64).max, np.int64)
    for r, q in enumerate(np.asarray(pos, np.int64).tolist()):
        lo, hi = max(start, q - window), min(start + f.shape[0], q + window + 1)
        if lo >= hi:
            continue
        sims = np.einsum("ij,j->i", f[lo - start : hi - start], u[r])
        match = np.flatnonzero(sims >= min_cosine) + lo
        match = match[match != q]
        if match.size:
            best[r] = nearest(match, q)
            best_key[r] = abs(best[r] - q) * 2 + int(best[r] > q)
    return best_key, best


def window_search(
    fresh: Any,
    pending: Any,
    q: int,
    u: np.ndarray,
    settings: Any,
    shift: dict[int, int],
    waiting: list[int],
) -> None:
    """A low chunk ``q`` (unit stored vector ``u`` float32 (d,)) searched among its
    ``settings.window`` neighbours' fresh vectors: the nearest match goes to ``shift``,
    else ``q`` waits (``u`` appended to ``pending``) for :func:`global_search`."""
    lo, hi = max(0, q - settings.window), min(fresh.n, q + settings.window + 1)
    _key, at = window_matches(
        fresh.read(lo, hi), lo, u[None, :], np.asarray([q]), settings.window,
        settings.min_cosine,
    )  # fmt: skip
    settle(q, int(at[0]), u, shift, waiting, pending)


def settle(
    q: int, match: int, u: np.ndarray, shift: dict[int, int], waiting: list[int], pending: Any
) -> None:
    """The low chunk ``q``'s window search done: its match (-1: none) goes to ``shift``,
    else ``q`` waits (its unit stored vector ``u`` appended to ``pending``)."""
    if match >= 0:
        shift[q] = match
    else:
        waiting.append(q)
        pending.append(u[None, :])
