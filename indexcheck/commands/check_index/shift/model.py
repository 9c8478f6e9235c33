"""The positional-cache bug as a model: which vector each chunk holds, predicted from the
repeats alone. Two forms, over positions in build order:

- ``skip_repeat``: a text-hash cache hands a repeated text its first copy's vector without
  advancing into the fresh embeddings, so a new text at position ``i`` holds the fresh vector
  of ``i - r(i)``, ``r(i)`` the repeats met before it. A repeat holds whatever its first copy
  holds, so its ``holds_vector_of`` is ambiguous: part of the story, not a new stretch.
- ``dedup_by_position``: position ``i`` holds the ``i``-th distinct text's vector (positions
  past the distinct list hold their own).

Either may ``stop``: from that position on every chunk holds its own vector (the cache
restarts with the indexer's next embedding call, e.g. langchain-mongodb's 100 texts).

:func:`fit` keeps the form that explains most of the observed chunks; it fits when it
explains at least ``FIT_SHARE``, and at least two, of the checked chunks it predicts shifted
(the rest are another fault). Texts are compared by identity (the first copy's position),
never by the position a nearest-match search happened to pick.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

FIT_SHARE = 0.9
STRETCHES_LISTED = 1000
SKIP_REPEAT = "skip_repeat"
DEDUP_BY_POSITION = "dedup_by_position"


@dataclass(frozen=True)
class CacheModel:
    """One form of the bug over ``n`` positions. ``source`` int64 (n,): the position whose
    fresh embedding each position's stored vector is; ``first`` int64 (n,): the first copy
    of each position's text; ``shifted`` bool (n,): the held text is not the chunk's own."""

    kind: str
    source: np.ndarray
    first: np.ndarray
    shifted: np.ndarray
    repeats: np.ndarray  # int64, sorted positions whose text repeats an earlier one
    stop: int | None = None  # from here on each position holds its own vector

    def holds_text_of(self, p: int) -> int:
        """The first copy of the text whose embedding position ``p`` holds."""
        return int(self.first[self.source[p]])


def first_copies(n: int, dup_of: Mapping[int, int]) -> np.ndarray:
    first = np.arange(n, dtype=np.int64)
    if dup_of:
        rep = np.fromiter(dup_of.keys(), np.int64, len(dup_of))
        first[rep] = np.fromiter(dup_of.values(), np.int64, len(dup_of))
    return first


def predict(
    n: int,
    dup_of: Mapping[int, int],
    kind: str = SKIP_REPEAT,
    same: np.ndarray | None = None,
    stop: int | None = None,
) -> CacheModel:
    """The model of ``kind`` for ``n`` positions whose repeats are ``dup_of`` (repeat ->
    first copy, :meth:`indexcheck.inputs.corpus.Corpus.duplicate_of`). ``same`` int64
    (n,): each position's embedding identity (:func:`.kinds.identity`; default the text's
    first copy): a chunk holding a vector that reads like its own is not shifted; ``stop``:
    the position from which each holds its own vector (None: the bug runs to the end)."""
    first = first_copies(n, dup_of)
    pos = np.arange(n, dtype=np.int64)
    is_rep = first != pos
    if kind == SKIP_REPEAT:
        before = np.cumsum(is_rep) - is_rep  # repeats strictly before each position
        source = pos - before
        source[is_rep] = source[first[is_rep]]  # a repeat holds its first copy's vector
    elif kind == DEDUP_BY_POSITION:
        uniq = np.flatnonzero(~is_rep)
        source = pos.copy()
        source[: len(uniq)] = uniq
    else:
        raise ValueError(f"unknown cache model {kind!r}")
    if stop is not None:
        source[stop:] = pos[stop:]
    ident = first if same is None else same
    shifted = ident[source] != ident
    return CacheModel(kind, source, first, shifted, np.flatnonzero(is_rep), stop)


@dataclass(frozen=True)
class Fit:
    """A model that fits: ``explained`` positions (sorted) are the shifted chunks it
    accounts for; ``checked_predicted`` how many checked chunks it predicts shifted."""

    model: CacheModel
    explained: np.ndarray
    checked_predicted: int


def fit(
    n: int,
    dup_of: Mapping[int, int],
    checked: np.ndarray,
    held: np.ndarray,
    same: np.ndarray | None = None,
    stop: int | None = None,
) -> Fit | None:
    """The form of the bug that explains the observations, or None.

    ``checked`` int64 (m,): checked positions with a comparable vector; ``held`` int64
    (m,): the position whose fresh embedding each one's stored vector matched, ``-1`` when
    it matched its own text (ok) or none (low); ``same`` and ``stop`` as in :func:`predict`."""
    best: Fit | None = None
    for kind in (SKIP_REPEAT, DEDUP_BY_POSITION):
        m = predict(n, dup_of, kind, same, stop)
        ident = m.first if same is None else same
        predicted = m.shifted[checked]
        has = held >= 0
        agree = has & predicted
        agree[agree] = ident[held[agree]] == ident[m.source[checked[agree]]]
        n_agree, n_pred = int(agree.sum()), int(predicted.sum())
        if n_agree < 2 or n_agree < FIT_SHARE * n_pred:
            continue
        if best is None or n_agree > len(best.explained):
            best = Fit(m, np.sort(checked[agree]), n_pred)
    return best


def candidates(model: CacheModel, p: int) -> int | None:
    """The position whose embedding the model says ``p`` holds, if another text's."""
    if not model.shifted[p]:
        return None
    return int(model.source[p])


def story(fit_: Fit, ids: Any, all_checked: bool) -> dict[str, Any]:
    """The figures of the root finding (``details``): start, first trigger, chunks, offset
    range, repeats that widened the lag, and the stretches (at most ``STRETCHES_LISTED``).

    ``ids`` answers ``ids[p]`` (a list or an id index); ``all_checked``: every position was
    checked (--all), so the counts are observed, not predicted."""
    m = fit_.model
    n = len(m.source)
    shifted = np.flatnonzero(m.shifted)
    start = int(shifted[0])
    last = int(shifted[-1])
    pos = np.arange(n, dtype=np.int64)
    new_text = m.first == pos
    lag = m.source - pos
    own = shifted[new_text[shifted]]  # shifted chunks with a text of their own
    offs = lag[own] if own.size else lag[shifted]
    if m.kind == SKIP_REPEAT:
        reps = m.repeats[m.repeats < last]
        first_trigger = int(m.repeats[0])
    else:
        reps = m.repeats[m.repeats <= int(m.source[last])]
        first_trigger = int(m.repeats[0])
    keep = np.flatnonzero(new_text[start : last + 1] & m.shifted[start : last + 1]) + start
    if not keep.size:
        keep = shifted[:1]
    cut = np.concatenate([[0], np.flatnonzero(np.diff(lag[keep]) != 0) + 1])
    starts = keep[cut]
    bounds = np.concatenate([starts[1:], [last + 1]])
    lo_s, hi_s = np.searchsorted(shifted, starts), np.searchsorted(shifted, bounds)
    lo_e = np.searchsorted(fit_.explained, starts)
    hi_e = np.searchsorted(fit_.explained, bounds)
    stretches: list[dict[str, Any]] = []
    for j in range(min(len(starts), STRETCHES_LISTED)):
        s0, off = int(starts[j]), int(lag[starts[j]])
        trig = _trigger(m, s0, off)
        stretches.append(
            {
                "start": s0, "end": int(shifted[hi_s[j] - 1]), "start_id": ids[s0],
                "offset": off, "chunks": int(hi_s[j] - lo_s[j]),
                "shifted_checked": int(hi_e[j] - lo_e[j]), "trigger_position": trig,
                "trigger_id": None if trig is None else ids[trig],
            }
        )  # fmt: skip
    n_stretches = len(starts)
    d: dict[str, Any] = {
        "model": m.kind,
        "start_position": start,
        "start_id": ids[start],
        "start_offset": int(lag[start]),
        "first_trigger_position": first_trigger,
        "chunks_affected": int(len(fit_.explained)) if all_checked else int(shifted.size),
        "chunks_predicted": int(shifted.size),
        "shifted_checked": int(len(fit_.explained)),
        "offset_range": [int(offs.min()), int(offs.max())],
        "repeats_widening": int(reps.size),
        "stretches_total": n_stretches,
        "stretches": stretches,
    }
    if m.stop is not None:  # the cache restarted: the last shifted position
        d["end_position"] = last
    return d


def _trigger(m: CacheModel, start: int, off: int) -> int | None:
    """The repeat behind a stretch of offset ``off``: the ``|off|``-th repeat, since each
    repeat moves the cache one step (skip_repeat: always before the stretch;
    dedup_by_position: it may lie inside it, where the de-duplicated list runs short)."""
    k = abs(off)
    return int(m.repeats[k - 1]) if 1 <= k <= len(m.repeats) else None
