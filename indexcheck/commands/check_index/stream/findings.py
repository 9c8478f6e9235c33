"""check-index --all: what the streamed rows are reported as. The finding builders read a
Corpus; a :class:`SparseCorpus` view answers for the positions they quote (run starts,
their triggers, repeats, the rows shown), whose texts are read back from the source."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ....embedders.base import Embedder
from ....inputs.chunk_stream import ChunkSource, CorpusChunks
from ...kit.verdicts import Status
from ..findings import (
    RUNS_LISTED,
    SNIPPET_ROWS,
    ChunkCheck,
    Finding,
    annotate,
    chain_findings,
    other_findings,
    permuted_finding,
    run_finding,
    story_finding,
    truncated_finding,
)
from ..order import MismatchWhy, order_label, ordered_rows
from ..shift.chains import blame_stretches
from ..shift.kinds import identity, vector_keys
from ..shift.model import first_copies
from .chunk_spill import ChunkSpill
from .scratch import SparseCorpus
from .scratch_search import fresh_keys
from .state import StreamRun


def streamed_findings(
    run: StreamRun,
    bad: dict[int, ChunkCheck],
    compared: np.ndarray,
    shift: dict[int, int],
    orphans: list[str],
    why: MismatchWhy | None,
) -> list[Finding]:
    """The findings of a streamed check from its rows that are not ok (``bad`` by
    position), ``compared`` bool (n,) (a cosine was computed), ``shift`` (position ->
    position whose fresh vector it holds); the text hashes are on ``run.ids``'s disk."""
    store, source, ids, from_store = run.store, run.source, run.ids, run.from_store
    block = run.settings.block
    n = len(ids)
    dup_of = ids.duplicates()
    checks = [bad[q] for q in sorted(bad)]
    runs: list[list[ChunkCheck]] = []  # every position is checked: a run is consecutive
    for c in checks:
        if c.status != Status.SHIFT:
            continue
        prev = bad.get(c.position - 1)
        if runs and prev is not None and prev.status == Status.SHIFT and prev.offset == c.offset:
            runs[-1].append(c)
        else:
            runs.append([c])
    dup_pos = sorted(dup_of)
    starts = [r[0].position for r in runs]
    triggers = {max((x for x in dup_pos if x < s), default=-1) for s in starts} - {-1}
    blamed = blame_stretches(
        [(r[0].position, r[-1].position, r[0].offset or 0) for r in runs], dup_pos
    )
    triggers |= {b.repeat_position for b in blamed if b.repeat_position is not None}
    triggers |= set(starts) | ({min(dup_of)} if dup_of else set())  # quoted by the root
    worst = sorted((c for c in checks if c.cosine is not None), key=lambda c: c.cosine or 0.0)
    shown = {c.position for c in checks[:SNIPPET_ROWS]} | {c.position for c in worst[:SNIPPET_ROWS]}
    # the finding builders read a Corpus; this view answers for the positions they quote
    quoted = triggers | shown | set(dup_of.values())
    view: Any = SparseCorpus(ids, dup_of, _texts_at(source, quoted, block))
    if ordered_rows(store, from_store):
        order = order_label(store, from_store)
        observed, same = None, None  # arrays of n, only when something is shifted
        if any(c.status == Status.SHIFT and c.offset is not None for c in checks):
            seen = np.flatnonzero(compared)
            held = np.full(n, -1, np.int64)
            for q, t in shift.items():
                held[q] = t
            observed = (seen, held[seen])
            del held
            same = _identity(run, dup_of)
        root, rest = story_finding(checks, view, dup_of, order, True, observed, same)
        findings = [] if root is None else [root]
        left = {c.position for c in rest}
        runs = [kept for r in runs if (kept := [c for c in r if c.position in left])]
        if len(runs) > RUNS_LISTED:
            rows = [c for r in runs for c in r]
            findings.append(permuted_finding(rows, view, order, root is not None))
        else:
            findings += [run_finding(r, r[0].position, view, dup_of, order) for r in runs]
    else:
        view = SparseCorpus(ids, dup_of, _texts_at(source, quoted | set(dup_of), block))
        findings = chain_findings(checks, view)
    findings += other_findings(checks, view, set(orphans), run.store_count, True, from_store)
    annotate(checks, view.texts, store, findings)
    if why is not None:
        for found in findings:
            if found.kind == why.status:
                found.details.update(why.details)
    if (warn := _truncated(run.embedder, ids)) is not None:
        findings.append(warn)
    return findings


def _identity(run: StreamRun, dup_of: dict[int, int]) -> np.ndarray:
    """int64 (n,): each position's embedding identity (:func:`..shift.kinds.identity`),
    from the fresh vectors on the scratch file read a few blocks at a time."""
    n = run.fresh.n
    keys = fresh_keys(run.fresh, run.settings.block * 4, _keys_of)
    return identity(first_copies(n, dup_of), np.arange(n, dtype=np.int64), keys)


def _keys_of(vectors: np.ndarray, _start: int) -> np.ndarray:
    return vector_keys(vectors)


def _texts_at(source: ChunkSource, need: Iterable[int], block: int) -> dict[int, str]:
    want = set(need)
    out: dict[int, str] = {}
    if not want:
        return out
    if isinstance(source, CorpusChunks):
        return {p: source.corpus.texts[p] for p in want}
    start = 0
    for _ids, texts in source.blocks(block):
        for p in range(start, start + len(texts)):
            if p in want:
                out[p] = texts[p - start]
        start += len(texts)
        if len(out) == len(want):
            break
    return out


def _truncated(embedder: Embedder, ids: ChunkSpill) -> Any:
    """The truncated-text warning: chunks whose text hash the embedder recorded as cut."""
    cut = getattr(embedder, "truncated", None) or set()
    if not cut:
        return None
    hits = ids.with_text_hash(cut)
    return truncated_finding([ids.id_at(q) for q in hits], embedder.model_id)
