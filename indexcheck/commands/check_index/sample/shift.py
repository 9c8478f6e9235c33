"""check-index on a sample: the shift model's candidate holders of a low chunk, and the
shift findings (the root finding when the positional-cache model fits, then one run per
offset, each run's start pinned by bisection).

``fresh`` is check-index's fresh-vector holder: ``vectors`` (position -> unit vector),
``ensure(positions, extra=True)`` and ``embedder``.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ....inputs.corpus import Corpus
from ....vectors import normalize_rows as _unit
from ...kit.verdicts import Status
from ..findings import (
    RUNS_LISTED,
    ChunkCheck,
    Finding,
    permuted_finding,
    run_finding,
    story_finding,
)
from ..shift.kinds import identity, vector_keys
from ..shift.model import DEDUP_BY_POSITION, SKIP_REPEAT, first_copies, predict

CACHE_KINDS = (SKIP_REPEAT, DEDUP_BY_POSITION)
#: a sample pins the start of a permutation inside batches up to this size
PIN_BATCH = 64

#: texts embedded at most per low chunk to test the shift model's predicted holders: the
#: two forms of the bug (``shift_model.predict``) and the offsets of the nearest shifted
#: checked neighbour on each side
SHIFT_MODEL_PER_LOW = 4


def model_candidates(
    low: list[ChunkCheck], checks: list[ChunkCheck], corpus: Corpus, fresh: Mapping[int, Any]
) -> list[int]:
    """Positions to embed so that each low chunk's predicted holder can be compared: what
    each form of the positional-cache bug says it holds, and its position plus the offset
    of the nearest shifted checked chunk before and after it. At most
    ``SHIFT_MODEL_PER_LOW`` per low chunk; a text already embedded is not embedded again."""
    n = len(corpus)
    dup_of = corpus.duplicate_of()
    models = [predict(n, dup_of, k) for k in (SKIP_REPEAT, DEDUP_BY_POSITION)] if dup_of else []
    first = first_copies(n, dup_of)
    moved = sorted(
        (c.position, c.offset) for c in checks if c.status == Status.SHIFT and c.offset is not None
    )
    at = [p for p, _ in moved]
    embedded = {int(first[p]) for p in fresh}
    want: list[int] = []
    for c in low:
        p = c.position
        cands = [int(m.source[p]) for m in models if m.shifted[p]]
        j = bisect.bisect_left(at, p)
        for k in (j - 1, j):
            if 0 <= k < len(moved):
                cands.append(p + int(moved[k][1]))
        picked = 0
        for q in dict.fromkeys(cands):
            if not 0 <= q < n or first[q] == first[p] or picked == SHIFT_MODEL_PER_LOW:
                continue
            picked += 1
            if int(first[q]) not in embedded:
                embedded.add(int(first[q]))
                want.append(q)
    return want


def shift_findings(
    checks: list[ChunkCheck],
    corpus: Corpus,
    stored: dict[str, np.ndarray],
    stored_dims: dict[str, int],
    fresh: Any,
    fetch: Callable[[Sequence[int]], None],
    min_cosine: float,
    order: str,
) -> list[Finding]:
    """Group shifted chunks into runs of one offset; pin each run's start by bisection."""
    dup_of = corpus.duplicate_of()
    by_pos = {c.position: c for c in checks}
    runs: list[list[ChunkCheck]] = []
    prev: ChunkCheck | None = None
    for c in sorted(checks, key=lambda c: c.position):
        if c.status == Status.SHIFT:
            if prev is not None and prev.status == Status.SHIFT and prev.offset == c.offset:
                runs[-1].append(c)
            else:
                runs.append([c])
        prev = c

    def has_offset(p: int, offset: int) -> bool:
        q = p + offset
        if not 0 <= q < len(corpus):
            return False
        fetch([p])
        cid = corpus.ids[p]
        if stored_dims.get(cid, 0) != fresh.embedder.dimension:
            return False
        fresh.ensure([q], extra=True)
        return float(np.dot(_unit(stored[cid]), fresh.vectors[q])) >= min_cosine

    findings = []
    same = fresh_identity(corpus, fresh.vectors)

    def pin(start: int, offset: int, batch: int = 0, last: bool = False) -> int:
        """A constant offset's start, by bisection; with ``last``, its end from ``start``
        (which holds it) on; with ``batch``, the first chunk from ``start + offset`` on
        holding another vector of that batch (at most PIN_BATCH)."""
        if last:
            after = [q for q in by_pos if q > start]
            return _bisect(start, min(after, default=len(corpus)), offset, has_offset, last=True)
        before = [q for q in by_pos if q < start]
        lo = max(before) if before else -1
        if not batch:
            return _bisect(lo, start, offset, has_offset)
        b0 = start + offset
        if batch > PIN_BATCH:
            return start
        for p in range(max(lo + 1, b0), start):
            if not has_offset(p, 0) and any(
                has_offset(p, q - p) for q in range(b0, b0 + batch) if q != p
            ):
                return p
        return start

    root, rest = story_finding(
        checks, corpus, dup_of, order, len(by_pos) == len(corpus), same=same, pin=pin
    )
    if root is not None and root.details["model"] in CACHE_KINDS:
        start = root.details["start_position"]
        if start not in by_pos:  # a sample: confirm the predicted first shifted chunk
            root.details["start_verified"] = has_offset(start, root.details["start_offset"])
            if not root.details["start_verified"]:
                root.message += (
                    f"; position {start} does not hold the predicted vector, so the start is "
                    "not confirmed: run with --all to pin it"
                )
    if root is not None:
        findings.append(root)
        keep = {c.position for c in rest}
        runs = [[c for c in run if c.position in keep] for run in runs]
        runs = [run for run in runs if run]
    if len(runs) > RUNS_LISTED:
        rows = [c for run in runs for c in run]
        return [*findings, permuted_finding(rows, corpus, order, root is not None)]
    for run in runs:
        offset = run[0].offset
        assert offset is not None
        first = run[0].position
        before = [q for q in by_pos if q < first]
        hi = _bisect(max(before) if before else -1, first, offset, has_offset)
        findings.append(run_finding(run, hi, corpus, dup_of, order))
    return findings


def _bisect(
    lo: int, hi: int, offset: int, has_offset: Callable[[int, int], bool], last: bool = False
) -> int:
    """The first position after ``lo`` with ``offset`` (``hi`` has it, ``lo`` does not);
    with ``last``, the last one before ``hi`` (``lo`` has it, ``hi`` does not)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if has_offset(mid, offset) != last:
            hi = mid
        else:
            lo = mid
    return lo if last else hi


def fresh_identity(corpus: Corpus, vectors: Mapping[int, np.ndarray]) -> np.ndarray:
    """int64 (n,): :func:`..shift.kinds.identity` over the fresh vectors embedded so far."""
    first = first_copies(len(corpus), corpus.duplicate_of())
    pos = np.fromiter(vectors.keys(), np.int64, len(vectors))
    if not len(pos):
        return first
    keys = vector_keys(np.stack([vectors[int(p)] for p in pos]))
    return identity(first, pos, keys)
