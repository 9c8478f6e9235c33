"""check-index: prove each stored vector belongs to its chunk, and diagnose the ones that don't.

A stored vector is compared by cosine with a fresh embedding of its chunk's text. A chunk
under ``min_cosine`` is then explained, most specific first:

- ``shift``: its stored vector is (cosine >= min_cosine) the fresh embedding of another
  chunk; ``holds_vector_of`` names it and ``offset`` is their distance in corpus order.
  Shifted chunks with one offset form a run; the run's first position is pinned by
  bisection (a few extra fetches and embeddings when sampling) and the duplicate text
  that precedes it, the trigger of the positional-cache bug, is named.
- ``model_mismatch``: at least half the comparable chunks are low and none of them holds a
  known chunk's vector: the index was built with another model.
- ``stale_vector``: an isolated low chunk holding no known chunk's vector (its text was
  edited after it was embedded).

Vectors that cannot be compared get ``missing_vector``, ``dimension_mismatch``,
``non_finite`` or ``zero_vector``; ids in the store but not in the chunks are
``orphan_vector``; repeated texts are reported as a ``duplicate_text`` warning even when
every vector is right.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..corpus import Corpus, corpus_from_pairs
from ..embedders.base import Embedder
from ..errors import DataFileError, DimensionMismatchError, IncompleteResultError, InputError
from ..sections import Section
from ..stores.base import VectorStore
from ..vectors import normalize_rows as _unit
from .verdicts import Status

FETCH_BATCH = 256
ITER_BATCH = 1000
STATUS_OK = Status.OK
ERROR_KINDS = (
    "shift",
    "model_mismatch",
    "stale_vector",
    "missing_vector",
    "orphan_vector",
    "dimension_mismatch",
    "non_finite",
    "zero_vector",
)


@dataclass
class ChunkCheck:
    """One checked chunk: its cosine (None when there is no comparable vector) and status."""

    id: str
    position: int
    cosine: float | None
    status: Status
    holds_vector_of: str | None = None
    offset: int | None = None
    stored_dimension: int | None = None


@dataclass
class Finding:
    """A fault (severity ``error``) or a warning, with the chunks it concerns."""

    kind: str
    severity: str
    message: str
    chunk_ids: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class CheckIndexResult:
    """What check-index found; ``ok`` is True only when no error finding exists."""

    ok: bool
    checked: int
    mode: str
    threshold: float
    min_cosine: float | None
    median_cosine: float | None
    below_threshold: int
    chunks: list[ChunkCheck]
    findings: list[Finding]
    counts: dict[str, int]
    diagnosis_embeddings: int
    manifest: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def cosines(self) -> np.ndarray:
        """float32 (m,) cosines of the chunks that had a comparable vector."""
        vals = [c.cosine for c in self.chunks if c.cosine is not None]
        return np.asarray(vals, dtype=np.float32)

    def sections(self) -> list[Section]:
        """The report's sections, then the terminal summary (``terminal=True``)."""
        from .sections import sections_of
        from .summaries import check_index_summary

        return [*sections_of(self.to_dict()), *check_index_summary(self)]


IntegrityResult = CheckIndexResult  # the name before 0.2; kept for one release


def _excerpt(text: str, n: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= n else one[: n - 1] + "…"


class _FreshVectors:
    """Fresh embeddings by corpus position, embedding only what was not embedded yet."""

    def __init__(self, corpus: Corpus, embedder: Embedder) -> None:
        self.corpus = corpus
        self.embedder = embedder
        self.vectors: dict[int, np.ndarray] = {}
        self.extra = 0

    def ensure(self, positions: Sequence[int], extra: bool = False) -> None:
        todo = sorted({p for p in positions if p not in self.vectors})
        if not todo:
            return
        vecs = self.embedder.embed([self.corpus.texts[p] for p in todo])
        if vecs.shape[1] != self.embedder.dimension:
            raise DimensionMismatchError("the embedder returned vectors of another dimension")
        vecs = _unit(vecs)
        for p, v in zip(todo, vecs, strict=True):
            self.vectors[p] = v
        if extra:
            self.extra += len(todo)

    def matrix(self) -> tuple[list[int], np.ndarray]:
        pos = sorted(self.vectors)
        d = self.embedder.dimension
        if not pos:
            return pos, np.zeros((0, d), dtype=np.float32)
        return pos, np.stack([self.vectors[p] for p in pos]).astype(np.float32)


def _load_corpus_from_store(
    store: VectorStore,
) -> tuple[Corpus, dict[str, np.ndarray], dict[str, int]]:
    ids: list[str] = []
    texts: list[str] = []
    vecs: dict[str, np.ndarray] = {}
    dims: dict[str, int] = {}
    for batch in store.iter_vectors(ITER_BATCH):
        if batch.texts is None:
            raise DataFileError(
                f"{store.spec} holds no chunk texts; pass --chunks with the id and text "
                "of every chunk"
            )
        for i, cid in enumerate(batch.ids):
            text = batch.texts[i]
            if text is None:
                raise DataFileError(
                    f"{store.spec}: vector '{cid}' has no stored text; pass --chunks"
                )
            ids.append(cid)
            texts.append(text)
            vecs[cid] = batch.vectors[i]
            dims[cid] = int(batch.dims[i])
    return corpus_from_pairs(ids, texts, source=store.spec), vecs, dims


def check_index(
    store: VectorStore,
    embedder: Embedder,
    corpus: Corpus | None = None,
    *,
    sample: int | None = 100,
    seed: int = 0,
    min_cosine: float = 0.999,
    window: int = 16,
    diagnose_budget: int = 2000,
    only: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> CheckIndexResult:
    """Re-embed chunks and compare with their stored vectors (cosine, unit-free).

    ``sample=None`` checks every chunk (and lists orphan vectors); otherwise ``sample``
    chunks are drawn with ``numpy.random.default_rng(seed)``. ``window`` bounds the
    neighbour search for a shifted chunk before falling back to embedding up to
    ``diagnose_budget`` more chunks. ``only`` checks just those chunk ids (ids not in the
    corpus are ignored), as diagnose does for expected chunks. Raises DimensionMismatchError
    when the store and
    embedder dimensions differ, InputError for a sample larger than the corpus.
    """
    say = progress or (lambda _msg: None)
    info = store.info()
    if info.dimension and info.dimension != embedder.dimension:
        raise DimensionMismatchError(
            f"the store holds {info.dimension}-d vectors but {embedder.model_id} gives "
            f"{embedder.dimension}-d; pass the --embedder the index was built with"
        )
    d = embedder.dimension
    stored: dict[str, np.ndarray] = {}
    stored_dims: dict[str, int] = {}
    store_ids: set[str] | None = None
    from_store = corpus is None
    if corpus is None:
        say("reading chunk texts from the store")
        corpus, stored, stored_dims = _load_corpus_from_store(store)
        store_ids = set(corpus.ids)
    n = len(corpus)
    all_mode = sample is None and only is None
    if only is not None:
        checked_pos = sorted({corpus.position[i] for i in only if i in corpus.position})
    elif all_mode:
        checked_pos = list(range(n))
    else:
        assert sample is not None
        if sample < 1:
            raise InputError("--sample must be at least 1")
        if sample > n:
            raise InputError(
                f"--sample {sample} is larger than the corpus ({n} chunks); "
                f"use --sample {n} or --all"
            )
        rng = np.random.default_rng(seed)
        checked_pos = sorted(int(p) for p in rng.choice(n, size=sample, replace=False))

    # Stored vectors: --all streams the whole store (and so finds orphans); a sample
    # fetches by id in batches.
    if all_mode and not from_store:
        say("reading every stored vector")
        store_ids = set()
        for batch in store.iter_vectors(ITER_BATCH):
            for i, cid in enumerate(batch.ids):
                store_ids.add(cid)
                if cid in corpus.position:
                    stored[cid] = batch.vectors[i]
                    stored_dims[cid] = int(batch.dims[i])

    def fetch(positions: Sequence[int]) -> None:
        want = [corpus.ids[p] for p in positions if corpus.ids[p] not in stored_dims]
        for start in range(0, len(want), FETCH_BATCH):
            part = want[start : start + FETCH_BATCH]
            got = store.fetch(part)
            if len(got.ids) != len(part) or got.vectors.shape[0] != len(part):
                raise IncompleteResultError(
                    f"{store.spec} returned {got.vectors.shape[0]} vectors for {len(part)} ids"
                )
            for i, cid in enumerate(part):
                stored_dims[cid] = int(got.dims[i]) if got.found[i] else 0
                if got.found[i]:
                    stored[cid] = got.vectors[i]

    if not all_mode:
        say(f"fetching {len(checked_pos)} stored vectors")
        fetch(checked_pos)

    say(f"embedding {len(checked_pos)} chunks with {embedder.model_id}")
    fresh = _FreshVectors(corpus, embedder)
    fresh.ensure(checked_pos)

    def compare(p: int) -> ChunkCheck:
        cid = corpus.ids[p]
        sd = stored_dims.get(cid, 0)
        if sd == 0:
            return ChunkCheck(cid, p, None, Status.MISSING_VECTOR)
        if sd != d:
            return ChunkCheck(cid, p, None, Status.DIMENSION_MISMATCH, stored_dimension=sd)
        v = stored[cid]
        if not np.isfinite(v).all():
            return ChunkCheck(cid, p, None, Status.NON_FINITE)
        if not np.any(v):
            return ChunkCheck(cid, p, None, Status.ZERO_VECTOR)
        cos = float(np.dot(_unit(v), fresh.vectors[p]))
        return ChunkCheck(cid, p, cos, STATUS_OK if cos >= min_cosine else Status.LOW)

    checks = [compare(p) for p in checked_pos]
    low = [c for c in checks if c.status == "low"]

    def explain(cands: list[ChunkCheck]) -> list[ChunkCheck]:
        """Mark candidates whose stored vector is another chunk's fresh one; return the rest."""
        pos, mat = fresh.matrix()
        posarr = np.asarray(pos)
        left = []
        for start in range(0, len(cands), 1024):
            block = cands[start : start + 1024]
            sims = _unit(np.stack([stored[c.id] for c in block])) @ mat.T
            for row, c in enumerate(block):
                match = posarr[sims[row] >= min_cosine]
                match = match[match != c.position]
                if match.size == 0:
                    left.append(c)
                    continue
                dist = np.abs(match - c.position) * 2 + (match > c.position)
                best = int(match[np.argmin(dist)])
                c.status, c.holds_vector_of, c.offset = (
                    Status.SHIFT,
                    corpus.ids[best],
                    best - c.position,
                )
        return left

    if low:
        say(f"diagnosing {len(low)} low chunks")
        near = {q for c in low for q in range(c.position - window, c.position + window + 1)}
        fresh.ensure([q for q in near if 0 <= q < n], extra=True)
        unexplained = explain(low)
        if unexplained and len(fresh.vectors) < n and n - len(fresh.vectors) <= diagnose_budget:
            fresh.ensure(range(n), extra=True)
            unexplained = explain(unexplained)
        comparable = sum(1 for c in checks if c.cosine is not None)
        mismatch = len(unexplained) >= max(2, comparable / 2)
        for c in unexplained:
            c.status = Status.MODEL_MISMATCH if mismatch else Status.STALE_VECTOR

    findings = _shift_findings(checks, corpus, stored, stored_dims, fresh, fetch, min_cosine)
    findings += _other_findings(
        checks, corpus, store_ids, info.count, all_mode or only is not None, from_store
    )
    cos = np.asarray([c.cosine for c in checks if c.cosine is not None], dtype=np.float64)
    counts: dict[str, int] = {}
    for c in checks:
        counts[c.status] = counts.get(c.status, 0) + 1
    ok = not any(f.severity == "error" for f in findings)
    return CheckIndexResult(
        ok=ok,
        checked=len(checks),
        mode="all" if all_mode else ("ids" if only is not None else "sample"),
        threshold=min_cosine,
        min_cosine=float(cos.min()) if cos.size else None,
        median_cosine=float(np.median(cos)) if cos.size else None,
        below_threshold=int((cos < min_cosine).sum()),
        chunks=checks,
        findings=findings,
        counts=counts,
        diagnosis_embeddings=fresh.extra,
    )


def _shift_findings(
    checks: list[ChunkCheck],
    corpus: Corpus,
    stored: dict[str, np.ndarray],
    stored_dims: dict[str, int],
    fresh: _FreshVectors,
    fetch: Callable[[Sequence[int]], None],
    min_cosine: float,
) -> list[Finding]:
    """Group shifted chunks into runs of one offset; pin each run's start by bisection."""
    dup_of = corpus.duplicate_of()
    by_pos = {c.position: c for c in checks}
    runs: list[list[ChunkCheck]] = []
    prev: ChunkCheck | None = None
    for c in sorted(checks, key=lambda c: c.position):
        if c.status == "shift":
            if prev is not None and prev.status == "shift" and prev.offset == c.offset:
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
    for run in runs:
        offset = run[0].offset
        assert offset is not None
        first = run[0].position
        before = [q for q in by_pos if q < first]
        lo = max(before) if before else -1
        hi = first
        while hi - lo > 1:  # invariant: hi has the run's offset, lo does not
            mid = (lo + hi) // 2
            if has_offset(mid, offset):
                hi = mid
            else:
                lo = mid
        start = hi
        dups = [q for q in sorted(dup_of) if q < start]
        trigger = dups[-1] if dups else None
        details: dict[str, Any] = {
            "offset": offset,
            "start_id": corpus.ids[start],
            "start_position": start,
            "checked_in_run": len(run),
        }
        where = "before" if offset < 0 else "after"
        msg = (
            f"offset {offset:+d}: from '{corpus.ids[start]}' (position {start}) on, chunks "
            f"hold the vector of the chunk {abs(offset)} position(s) {where} them "
            f"({len(run)} checked chunk(s) in this run)"
        )
        if trigger is not None:
            details["preceding_duplicate"] = {
                "id": corpus.ids[trigger],
                "position": trigger,
                "duplicate_of": corpus.ids[dup_of[trigger]],
                "text": _excerpt(corpus.texts[trigger]),
            }
            msg += (
                f"; it starts after '{corpus.ids[trigger]}', whose text repeats "
                f"'{corpus.ids[dup_of[trigger]]}': a cache filled by position skips a repeat "
                "without advancing"
            )
        findings.append(Finding("shift", "error", msg, [c.id for c in run], details))
    return findings


def _other_findings(
    checks: list[ChunkCheck],
    corpus: Corpus,
    store_ids: set[str] | None,
    store_count: int,
    all_mode: bool,
    from_store: bool,
) -> list[Finding]:
    findings: list[Finding] = []
    messages = {
        "model_mismatch": "stored vectors match no chunk's fresh embedding: the index was "
        "built with another model than the embedder; re-embed or pass the right --embedder",
        "stale_vector": "stored vector differs from its text's embedding and matches no "
        "other chunk: the text changed after it was embedded; re-embed these chunks",
        "missing_vector": "no stored vector for these chunk ids; index them",
        "dimension_mismatch": "stored vectors of the wrong length; re-embed these chunks",
        "non_finite": "stored vectors contain NaN or infinity; re-embed these chunks",
        "zero_vector": "stored vectors are all zeros; re-embed these chunks",
    }
    for kind, msg in messages.items():
        ids = [c.id for c in checks if c.status == kind]
        if ids:
            findings.append(Finding(kind, "error", f"{len(ids)} chunk(s): {msg}", ids))
    if store_ids is not None and not from_store:
        orphans = sorted(store_ids - set(corpus.ids))
        if orphans:
            findings.append(
                Finding(
                    "orphan_vector",
                    "error",
                    f"{len(orphans)} vector(s) in the index have no chunk: delete them or "
                    "add their chunks",
                    orphans,
                )
            )
    elif not all_mode and not from_store and store_count != len(corpus):
        diff = store_count - len(corpus)
        kind = "orphan_vector" if diff > 0 else "missing_vector"
        findings.append(
            Finding(
                kind,
                "error",
                f"the index holds {store_count} vectors for {len(corpus)} chunks "
                f"({abs(diff)} {'more' if diff > 0 else 'fewer'}); run with --all to list them",
                [],
                {"store_count": store_count, "chunks": len(corpus)},
            )
        )
    dup_of = corpus.duplicate_of()
    if dup_of:
        groups: dict[int, list[str]] = {}
        for p, first in dup_of.items():
            groups.setdefault(first, [corpus.ids[first]]).append(corpus.ids[p])
        findings.append(
            Finding(
                "duplicate_text",
                "warning",
                f"{len(dup_of)} chunk(s) repeat an earlier chunk's text; a cache keyed by "
                "position misaligns every vector after the first repeat",
                [i for g in groups.values() for i in g[1:]],
                {
                    "groups": [
                        {"ids": g, "text": _excerpt(corpus.texts[corpus.position[g[0]]])}
                        for g in groups.values()
                    ]
                },
            )
        )
    return findings
