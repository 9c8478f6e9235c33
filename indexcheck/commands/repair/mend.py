"""The repair on opened objects: the plan (:mod:`.plan`) checked on a seeded sample, the
vectors that exist nowhere embedded, the copy written (:mod:`.targets`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ...embedders.base import Embedder
from ...errors import EmbedderOutputError
from ...inputs.corpus import text_hash
from ...stores.base import VectorStore
from ...vectors import normalize_rows
from .plan import AS_BUILT, READINGS, Way, choose, holders, matches, sample_for
from .result import ROWS_LISTED, RepairResult
from .rows import SourceRows
from .settings import RepairSettings
from .targets import Batch, parse_target, source_of, write_copy

#: rows handed to the target's writers at once
WRITE_ROWS = 8192


def embed_texts(embedder: Embedder, texts: list[str]) -> np.ndarray:
    """float32 (len(texts), d) as the embedder returns them, each distinct text sent once."""
    if not texts:
        return np.zeros((0, embedder.dimension), np.float32)
    uniq = list(dict.fromkeys(texts))
    got = np.asarray(embedder.embed(uniq), np.float32)
    if got.shape != (len(uniq), embedder.dimension):
        raise EmbedderOutputError(
            f"{embedder.model_id} returned {got.shape} for {len(uniq)} texts; expected "
            f"({len(uniq)}, {embedder.dimension})"
        )
    at = {t: i for i, t in enumerate(uniq)}
    return got[[at[t] for t in texts]]


def _reason(rows: SourceRows, j: int, reading: str) -> str:
    if j in rows.unusable:
        return rows.unusable[j]
    if rows.texts[j] != rows.built[j]:
        return "text_changed"
    return "shift_tail" if reading != "as_built" else "held_nowhere"


def mend(
    settings: RepairSettings,
    store: VectorStore,
    embedder: Embedder,
    rows: SourceRows,
    say: Callable[[str], None],
) -> tuple[RepairResult, np.ndarray | None]:
    """The plan for every chunk of ``rows`` and, unless ``settings.dry_run``, the repaired
    vectors float32 (n, d) (the stored bits where reused, the embedder's where embedded)
    and the copy written to ``settings.out``."""
    n = len(rows)
    # an unordered store read without --chunks: no build order for a shift to walk
    readings = READINGS if rows.ordered else (AS_BUILT,)
    held = {r: holders(rows, r) if r in readings else np.full(n, -1, np.int64) for r in READINGS}
    k = None if settings.verify_all else int(settings.verify)
    sample = sample_for(held, k, settings.seed)
    say(f"embedding {len(sample)} sampled chunks to check the reused vectors")
    sample_raw = embed_texts(embedder, [rows.texts[j] for j in sample.tolist()])
    sample_unit = normalize_rows(sample_raw)
    choice = choose(rows, held, sample, sample_unit, settings.min_cosine)
    holder = held[choice.reading]
    way = np.where(holder < 0, 2, np.where(holder == np.arange(n), 0, 1)).astype(np.int8)
    way[~rows.chunk] = 4  # an orphan: not written
    good = matches(rows, holder[sample], sample_unit, settings.min_cosine)
    tried = holder[sample] >= 0
    failed = sample[tried & ~good]
    way[failed] = 3
    names = [Way.KEPT, Way.MOVED, Way.EMBEDDED, Way.FAILED_VERIFICATION]
    need = np.flatnonzero((way == 2) | (way == 3))
    in_sample = np.zeros(n, bool)
    in_sample[sample] = True
    fresh_needed = need[~in_sample[need]]
    sampled_texts = {rows.texts[j] for j in sample.tolist()}
    more = len({rows.texts[j] for j in fresh_needed.tolist()} - sampled_texts)
    vectors = None
    if not settings.dry_run:
        say(f"embedding {len(fresh_needed)} chunks whose vector exists nowhere")
        extra = embed_texts(embedder, [rows.texts[j] for j in fresh_needed.tolist()])
        vectors = np.empty((n, embedder.dimension), np.float32)
        reuse = holder >= 0
        vectors[reuse] = rows.vectors[holder[reuse]]
        vectors[fresh_needed] = extra
        at = {int(j): i for i, j in enumerate(sample.tolist())}
        for j in need[in_sample[need]].tolist():
            vectors[j] = sample_raw[at[j]]
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
        texts_embedded=len(sampled_texts) + (0 if settings.dry_run else more),
        sample_texts=len(sampled_texts),
        texts_to_embed=more if settings.dry_run else 0,
        verified=int(tried.sum()),
        verify_failed=len(failed),
        verify_all=settings.verify_all,
        orphans=list(rows.orphans),
        rows=listed,
        sample_agree=choice.agree,
        dry_run=settings.dry_run,
    )
    if vectors is not None and settings.out is not None:
        target = parse_target(settings.out)
        say(f"writing {target.text}")
        kept = rows.written()
        kv = vectors[rows.chunk]

        def batches() -> Iterator[Batch]:
            for lo in range(0, len(kept), WRITE_ROWS):
                hi = lo + WRITE_ROWS
                texts = kept.texts[lo:hi]
                yield Batch(kept.ids[lo:hi], kv[lo:hi], texts, kept.metadata[lo:hi],
                            [text_hash(t) for t in texts])  # fmt: skip

        written = write_copy(target, source_of(store), embedder.dimension, batches())
        result.written = [str(p) for p in written.files]
        result.target = str(target.folder)
        result.target_kind = written.kind
        result.target_spec = written.proof
    result.source_kind = str(getattr(store, "scheme", "") or "") or None
    return result, vectors


__all__ = ["embed_texts", "mend"]
