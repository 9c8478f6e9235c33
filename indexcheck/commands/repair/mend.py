"""The repair on opened objects: the plan (:mod:`.plan`) checked on a seeded sample, then
the copy written a batch at a time (:mod:`.fill` reads the store again and embeds the
vectors that exist nowhere; :mod:`.targets` writes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...embedders.base import Embedder
from ...stores.base import VectorStore
from ...vectors import normalize_rows
from .fill import Plan, embed_texts, repaired_batches
from .plan import AS_BUILT, READINGS, Way, choose, holders, matches, sample_for
from .result import ROWS_LISTED, RepairResult
from .rows import SourceRows, texts_at, vectors_at
from .settings import RepairSettings
from .targets import source_of, write_copy


def _reason(rows: SourceRows, j: int, reading: str) -> str:
    if j in rows.unusable:
        return rows.unusable[j]
    if rows.now[j] != rows.built[j]:
        return "text_changed"
    return "shift_tail" if reading != "as_built" else "held_nowhere"


def mend(
    settings: RepairSettings,
    store: VectorStore,
    embedder: Embedder,
    rows: SourceRows,
    say: Callable[[str], None],
    engine: Any = None,
) -> tuple[RepairResult, str | None]:
    """The plan for every chunk of ``rows`` and, unless ``settings.dry_run``, the copy
    written to ``settings.out`` a batch at a time (the stored bits where reused, the
    embedder's where embedded), with the spec check-index opens it with (it may hold a
    password: ``result.target_spec`` is the same without)."""
    n = len(rows)
    # an unordered store read without --chunks: no build order for a shift to walk
    readings = READINGS if rows.ordered else (AS_BUILT,)
    held = {r: holders(rows, r) if r in readings else np.full(n, -1, np.int64) for r in READINGS}
    k = None if settings.verify_all else int(settings.verify)
    sample = sample_for(held, k, settings.seed)
    say(f"embedding {len(sample)} sampled chunks to check the reused vectors")
    sample_raw = embed_texts(embedder, texts_at(store, rows, sample), engine)
    sample_unit = normalize_rows(sample_raw)
    seen = np.unique(np.concatenate([held[r][sample] for r in READINGS]))
    seen = seen[seen >= 0]
    seen_vectors = vectors_at(store, rows, seen, embedder.dimension)

    def stored(at: np.ndarray) -> np.ndarray:
        return seen_vectors[np.searchsorted(seen, at)]

    choice = choose(stored, held, sample, sample_unit, settings.min_cosine)
    holder = held[choice.reading]
    del held
    way = np.where(holder < 0, 2, np.where(holder == np.arange(n), 0, 1)).astype(np.int8)
    way[~rows.chunk] = 4  # an orphan: not written
    good = matches(stored, holder[sample], sample_unit, settings.min_cosine)
    tried = holder[sample] >= 0
    failed = sample[tried & ~good]
    way[failed] = 3
    names = [Way.KEPT, Way.MOVED, Way.EMBEDDED, Way.FAILED_VERIFICATION]
    fresh = (way == 2) | (way == 3)
    sample_keys = set(rows.now[sample].tolist())
    fresh_keys, fresh_counts = np.unique(rows.now[fresh], return_counts=True)
    more = len(set(fresh_keys.tolist()) - sample_keys)
    if not settings.dry_run and settings.out is not None:
        target = settings.out
        say(f"writing {target.text}, embedding {more} texts whose vector exists nowhere")
        memo = {int(k): v for k, v in zip(rows.now[sample].tolist(), sample_raw, strict=True)}
        plan = Plan(holder, fresh, memo, set(fresh_keys[fresh_counts > 1].tolist()), engine)
        batches = repaired_batches(store, embedder, rows, plan)
        written = write_copy(target, source_of(store), embedder.dimension, batches)
        result_target = (target, written)
    else:
        result_target = None
    reasons: dict[str, int] = {}
    listed: list[dict[str, Any]] = []
    for j in np.flatnonzero((way != 0) & (way != 4)).tolist():
        w = names[int(way[j])]
        row: dict[str, Any] = {"id": rows.ids[j], "position": j, "way": str(w)}
        if w is Way.MOVED:
            row["from_id"] = rows.ids[int(holder[j])]
            row["from_position"] = int(holder[j])
        elif w is Way.EMBEDDED:
            row["reason"] = _reason(rows, j, choice.reading)
            reasons[row["reason"]] = reasons.get(row["reason"], 0) + 1
        else:
            reasons["failed_verification"] = reasons.get("failed_verification", 0) + 1
        if len(listed) < ROWS_LISTED:
            listed.append(row)
    counts = np.bincount(way, minlength=5)
    result = RepairResult(
        chunks=int(rows.chunk.sum()),
        reading=choice.reading,
        ways={str(names[i]): int(counts[i]) for i in range(4) if counts[i]},
        reasons=reasons,
        embedded=int(counts[2] + counts[3]),
        reused=int(counts[0] + counts[1]),
        texts_embedded=len(sample_keys) + (0 if settings.dry_run else more),
        sample_texts=len(sample_keys),
        texts_to_embed=more if settings.dry_run else 0,
        verified=int(tried.sum()),
        verify_failed=len(failed),
        verify_all=settings.verify_all,
        orphans=list(rows.orphans),
        rows=listed,
        sample_agree=choice.agree,
        dry_run=settings.dry_run,
    )
    if result_target is not None:
        target, written = result_target
        result.written = [str(p) for p in written.files]
        result.target = str(target.folder) if written.files else written.shown
        result.target_kind = written.kind
        result.target_spec = written.shown
    result.source_kind = str(getattr(store, "scheme", "") or "") or None
    return result, (result_target[1].proof if result_target is not None else None)


__all__ = ["mend"]
