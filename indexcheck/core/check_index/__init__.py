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
- ``embedded_text_differs``: as above, but the cosines are high (median >= 0.6) and each
  low vector is still nearest its own text's embedding (``core/text_differs.py``): the
  indexer embedded another text (metadata header, prefix, template, truncation).

Where the rows have no build order (a store whose ``ordered`` is False read without
``--chunks``), shifts are reported as ``holds_vector_of`` chains (one finding per chain,
``core/shift_chains.py``), not as positional runs; ``details.order`` says which order a
shift finding used.
- ``stale_vector``: an isolated low chunk holding no known chunk's vector (its text was
  edited after it was embedded).

Vectors that cannot be compared get ``missing_vector``, ``dimension_mismatch``,
``non_finite`` or ``zero_vector``; ids in the store but not in the chunks are
``orphan_vector``; repeated texts are reported as a ``duplicate_text`` warning even when
every vector is right.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...corpus import Corpus, corpus_from_pairs
from ...embed_text import EmbedTemplate
from ...embedders.base import Embedder
from ...errors import DataFileError, DimensionMismatchError, IncompleteResultError
from ...stores.base import VectorStore
from ...vectors import normalize_rows as _unit
from ..stats import fault_rate_upper
from ..verdicts import Status
from .findings import (
    ChunkCheck,
    annotate,
    chain_findings,
    other_findings,
    truncated_finding,
)
from .order import (
    MismatchWhy,
    mismatch_verdict,
    order_label,
    ordered_rows,
    render_corpus,
)
from .result import CheckIndexResult
from .sampling import plan_sample
from .shift_sample import model_candidates, shift_findings

FETCH_BATCH = 256
ITER_BATCH = 1000
STATUS_OK = Status.OK
ERROR_KINDS = (
    "shift",
    "model_mismatch",
    "embedded_text_differs",
    "stale_vector",
    "missing_vector",
    "orphan_vector",
    "dimension_mismatch",
    "non_finite",
    "zero_vector",
)


IntegrityResult = CheckIndexResult  # the name before 0.2; kept for one release


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
    metas: list[dict[str, Any]] = []
    for batch in store.iter_vectors(ITER_BATCH):
        metas.extend(batch.metadata or [{} for _ in batch.ids])
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
    return corpus_from_pairs(ids, texts, store.spec, metas), vecs, dims


def _moved_vectors(
    store: VectorStore,
    cands: list[ChunkCheck],
    corpus: Corpus,
    fresh: _FreshVectors,
    min_cosine: float,
    k: int = 4,
) -> list[ChunkCheck]:
    """Mark candidates whose own fresh vector is stored under another id (``shift``, with
    ``vector_held_by``); return the rest. One ANN query per candidate, k results, then the
    returned ids' stored vectors fetched and compared exactly (cosine >= min_cosine)."""
    queries = np.stack([fresh.vectors[c.position] for c in cands]).astype(np.float32)
    _, found = store.query(queries, k)
    wanted = sorted({str(i) for row in found for i in row if i is not None})
    if not wanted:
        return cands
    got = store.fetch(wanted)
    held = {
        cid: _unit(got.vectors[i].reshape(1, -1))[0]
        for i, cid in enumerate(got.ids)
        if got.found[i] and np.isfinite(got.vectors[i]).all() and np.any(got.vectors[i])
    }
    left = []
    for row, c in enumerate(cands):
        own = fresh.vectors[c.position]
        holder = next(
            (
                str(i)
                for i in found[row]
                if i is not None and str(i) != c.id and str(i) in held
                and float(np.dot(held[str(i)], own)) >= min_cosine
            ),
            None,
        )  # fmt: skip
        if holder is None:
            left.append(c)
        else:
            c.status, c.vector_held_by = Status.SHIFT, holder
    return left


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
    max_fault_rate: float | None = None,
    template: EmbedTemplate | None = None,
) -> CheckIndexResult:
    """Re-embed chunks and compare with their stored vectors (cosine, unit-free).

    ``sample=None`` checks every chunk (and lists orphan vectors); otherwise ``sample``
    chunks are drawn with ``numpy.random.default_rng(seed)``. ``window`` bounds the
    neighbour search for a shifted chunk before falling back to embedding up to
    ``diagnose_budget`` more chunks. ``only`` checks just those chunk ids (ids not in the
    corpus are ignored), as diagnose does for expected chunks. ``template`` (an
    ``--embed-template``, parsed at the edge) rebuilds the text the indexer embedded from
    each chunk's text and metadata. Raises DimensionMismatchError
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
    if sample is None and only is None and max_fault_rate is None:  # core/check_stream.py
        from .streamed import check_all

        return check_all(
            store, embedder, corpus, min_cosine=min_cosine, window=window, say=say,
            template=template,
        )  # fmt: skip
    if corpus is not None and only is None:  # other ids than the store's: exit 2
        from ..id_pairing import refuse_foreign_chunk_ids

        refuse_foreign_chunk_ids(store, corpus, corpus.source)
    d = embedder.dimension
    stored: dict[str, np.ndarray] = {}
    stored_dims: dict[str, int] = {}
    store_ids: set[str] | None = None
    from_store = corpus is None
    if corpus is None:
        say("reading chunk texts from the store")
        corpus, stored, stored_dims = _load_corpus_from_store(store)
        store_ids = set(corpus.ids)
    if template is not None:
        corpus = render_corpus(corpus, template)
    n = len(corpus)
    all_mode = sample is None and only is None and max_fault_rate is None
    targeted: set[int] | None = None
    dropped = 0
    if only is not None:
        checked_pos = sorted({corpus.position[i] for i in only if i in corpus.position})
    elif all_mode:
        checked_pos = list(range(n))
    else:
        plan = plan_sample(n, sample, seed, corpus.duplicate_of(), max_fault_rate)
        checked_pos, targeted, dropped = plan.positions, plan.targeted, plan.dropped

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
    if targeted is not None:
        for c in checks:
            c.targeted = c.position in targeted
    low = [c for c in checks if c.status == "low"]
    why: MismatchWhy | None = None
    shift_model_embeddings = 0

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
        if unexplained and ordered_rows(store, from_store):
            # before calling a low chunk stale, test whose vector the shift model says it
            # holds (beyond the window too): at most SHIFT_MODEL_PER_LOW texts each
            before = fresh.extra
            fresh.ensure(model_candidates(unexplained, checks, corpus, fresh.vectors), extra=True)
            shift_model_embeddings = fresh.extra - before
            unexplained = explain(unexplained)
        if unexplained and len(fresh.vectors) < n and n - len(fresh.vectors) <= diagnose_budget:
            fresh.ensure(range(n), extra=True)
            unexplained = explain(unexplained)
        if unexplained and not ordered_rows(store, from_store):
            # positions are no build order: the window searched random neighbours. A
            # shifted chunk's own vector is still in the index under another id; ask the
            # index for it (a confirmed match is re-checked exactly)
            unexplained = _moved_vectors(store, unexplained, corpus, fresh, min_cosine)
        comparable = sum(1 for c in checks if c.cosine is not None)
        mismatch = len(unexplained) >= max(2, comparable / 2)
        why = _explain_mismatch(checks, stored, fresh, min_cosine) if mismatch else None
        for c in unexplained:
            c.status = why.status if why is not None else Status.STALE_VECTOR

    if ordered_rows(store, from_store):
        order = order_label(store, from_store)
        findings = shift_findings(
            checks, corpus, stored, stored_dims, fresh, fetch, min_cosine, order
        )
    else:
        findings = chain_findings(checks, corpus, all_mode or only is not None)
    findings += other_findings(
        checks, corpus, store_ids, info.count, all_mode or only is not None, from_store
    )
    if low and why is not None:
        for f in findings:
            if f.kind == why.status:
                f.details.update(why.details)
    annotate(checks, corpus.texts, store, findings)
    cut = getattr(embedder, "truncated", None) or set()
    long_ids = [c.id for c in checks if corpus.hashes[c.position] in cut]
    if (warn := truncated_finding(long_ids, embedder.model_id)) is not None:
        findings.append(warn)
    cos = np.asarray([c.cosine for c in checks if c.cosine is not None], dtype=np.float64)
    counts: dict[str, int] = {}
    for c in checks:
        counts[c.status] = counts.get(c.status, 0) + 1
    ok = not any(f.severity == "error" for f in findings)
    bound = None
    if targeted is not None:
        rand = [c for c in checks if not c.targeted]
        bound = fault_rate_upper(sum(c.status != STATUS_OK for c in rand), len(rand))
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
        fault_rate_upper_95=bound,
        shift_model_embeddings=shift_model_embeddings,
        targets_dropped=dropped,
    )


def _explain_mismatch(
    checks: list[ChunkCheck], stored: dict[str, np.ndarray], fresh: _FreshVectors, min_cosine: float
) -> MismatchWhy:
    """Another model, or another text embedded (``explain_low_cosines``), from the
    comparable chunks that hold no other chunk's vector."""
    pos, mat = fresh.matrix()
    at = {p: i for i, p in enumerate(pos)}
    cands = [c for c in checks if c.cosine is not None and c.status != Status.SHIFT]
    cos = np.asarray([c.cosine for c in cands], dtype=np.float64)
    vecs = _unit(np.stack([stored[c.id] for c in cands])) if cands else mat[:0]
    own = np.asarray([at[c.position] for c in cands], dtype=np.int64)
    return mismatch_verdict(cos, vecs, mat, own, min_cosine)
