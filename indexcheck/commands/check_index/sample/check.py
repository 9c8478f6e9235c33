"""check-index on a sample or on given ids: fetch the stored vectors by id, compare each
with a fresh embedding, then explain the low ones (``shift`` first, then another model or
another text, else ``stale_vector``). The steps, in the order they run:

1. :func:`_positions`: which chunks (``--only`` ids, else the targeted-then-random sample);
2. :func:`_compare`: one row per chunk, ``Status.OK`` or ``Status.LOW`` where a cosine
   exists, a fault status where none can be computed;
3. :func:`_diagnose_low`: the low rows' neighbours, the shift model's predicted holders,
   then (within ``diagnose_budget``) every chunk are embedded, each step searching only
   what the last left unexplained;
4. :func:`_findings` and :func:`_result`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ....embedders.base import Embedder
from ....inputs.corpus import Corpus
from ....stores.base import StoreInfo, VectorStore
from ....vectors import absurd_magnitude
from ....vectors import normalize_rows as _unit
from ...kit.stats import fault_rate_upper
from ...kit.verdicts import Status
from ..findings import (
    ChunkCheck,
    Finding,
    annotate,
    chain_findings,
    other_findings,
    truncated_finding,
)
from ..order import MismatchWhy, mismatch_verdict, order_label, ordered_rows, render_corpus
from ..prefix import PrefixFit, embedder_spec, find_prefix, with_prefix_finding
from ..result import CheckIndexResult, check_result
from ..settings import CheckIndexSettings
from .draw import plan_sample
from .shift import model_candidates, shift_findings
from .vectors import FreshVectors, StoredVectors, load_corpus_from_store

#: stored vectors compared at once against every fresh one when searching for shifts
MATCH_BLOCK = 1024


@dataclass
class _Sampled:
    """What every step of one sampled check reads."""

    store: VectorStore
    corpus: Corpus
    from_store: bool
    stored: StoredVectors
    fresh: FreshVectors
    min_cosine: float
    #: the prefix some low chunks' stored vectors were embedded with (:mod:`..prefix`)
    prefix: PrefixFit | None = None

    @property
    def ordered(self) -> bool:
        return ordered_rows(self.store, self.from_store)


def check_sampled(
    settings: CheckIndexSettings,
    store: VectorStore,
    embedder: Embedder,
    corpus: Corpus | None,
    info: StoreInfo,
    say: Callable[[str], None],
) -> CheckIndexResult:
    """``check_index`` on a sample (``settings.sample`` chunks, or enough for
    ``max_fault_rate``) or on the ``only`` ids; the options as there."""
    only, min_cosine, template = settings.only, settings.min_cosine, settings.embed_template
    if corpus is not None and only is None:  # other ids than the store's: exit 2
        from ...kit.id_pairing import refuse_foreign_chunk_ids

        refuse_foreign_chunk_ids(store, corpus, corpus.source)
    from_store = corpus is None
    vectors: dict[str, np.ndarray] = {}
    dims: dict[str, int] = {}
    if corpus is None:
        say("reading chunk texts from the store")
        corpus, vectors, dims = load_corpus_from_store(store)
    if template is not None:
        corpus = render_corpus(corpus, template)
    positions, targeted, dropped = _positions(corpus, settings)
    run = _Sampled(
        store,
        corpus,
        from_store,
        StoredVectors(store, corpus, vectors, dims),
        FreshVectors(corpus, embedder),
        min_cosine,
    )
    say(f"fetching {len(positions)} stored vectors")
    run.stored.fetch(positions)
    say(f"embedding {len(positions)} chunks with {embedder.model_id}")
    run.fresh.ensure(positions)
    checks = [_compare(run, p) for p in positions]
    if targeted is not None:
        for c in checks:
            c.targeted = c.position in targeted
    why: MismatchWhy | None = None
    shift_model_embeddings = 0
    low = [c for c in checks if c.status == Status.LOW]
    if low:
        say(f"diagnosing {len(low)} low chunks")
        why, shift_model_embeddings = _diagnose_low(run, low, checks, settings)
    findings = _findings(run, checks, why, info.count, by_ids=only is not None)
    cut = getattr(embedder, "truncated", None) or set()
    long_ids = [c.id for c in checks if corpus.hashes[c.position] in cut]
    if (warn := truncated_finding(long_ids, embedder.model_id)) is not None:
        findings.append(warn)
    return _result(
        checks,
        findings,
        min_cosine,
        targeted,
        mode="ids" if only is not None else "sample",
        diagnosis_embeddings=run.fresh.extra,
        shift_model_embeddings=shift_model_embeddings,
        targets_dropped=dropped,
    )


def _positions(
    corpus: Corpus, settings: CheckIndexSettings
) -> tuple[list[int], set[int] | None, int]:
    """(sorted positions to check, the targeted ones or None for ``only``, the targets
    the per-text cap dropped)."""
    if settings.only is not None:
        position = corpus.position
        return sorted({position[i] for i in settings.only if i in position}), None, 0
    plan = plan_sample(
        len(corpus), settings.sample, settings.seed, corpus.duplicate_of(),
        settings.max_fault_rate,
    )  # fmt: skip
    return plan.positions, plan.targeted, plan.dropped


def _compare(run: _Sampled, p: int) -> ChunkCheck:
    """One chunk's row: its cosine and ``Status.OK``/``Status.LOW``, or why none exists."""
    cid = run.corpus.ids[p]
    sd = run.stored.dims.get(cid, 0)
    if sd == 0:
        return ChunkCheck(cid, p, None, Status.MISSING_VECTOR)
    if sd != run.fresh.embedder.dimension:
        return ChunkCheck(cid, p, None, Status.DIMENSION_MISMATCH, stored_dimension=sd)
    v = run.stored.vectors[cid]
    if not np.isfinite(v).all():
        return ChunkCheck(cid, p, None, Status.NON_FINITE)
    if not np.any(v):
        return ChunkCheck(cid, p, None, Status.ZERO_VECTOR)
    if absurd_magnitude(v):
        return ChunkCheck(cid, p, None, Status.ABSURD_MAGNITUDE)
    cos = float(np.dot(_unit(v), run.fresh.vectors[p]))
    return ChunkCheck(cid, p, cos, Status.OK if cos >= run.min_cosine else Status.LOW)


def _diagnose_low(
    run: _Sampled,
    low: list[ChunkCheck],
    checks: list[ChunkCheck],
    settings: CheckIndexSettings,
) -> tuple[MismatchWhy | None, int]:
    """Give every low row its final status; returns (why they are low when most are,
    texts embedded to test the shift model's predicted holders)."""
    window, diagnose_budget = settings.window, settings.diagnose_budget
    fresh, n = run.fresh, len(run.corpus)
    near = {q for c in low for q in range(c.position - window, c.position + window + 1)}
    fresh.ensure([q for q in near if 0 <= q < n], extra=True)
    unexplained = _match_shifts(run, low)
    shift_model_embeddings = 0
    if unexplained and run.ordered:
        # before calling a low chunk stale, test whose vector the shift model says it
        # holds (beyond the window too): at most SHIFT_MODEL_PER_LOW texts each
        before = fresh.extra
        fresh.ensure(model_candidates(unexplained, checks, run.corpus, fresh.vectors), extra=True)
        shift_model_embeddings = fresh.extra - before
        unexplained = _match_shifts(run, unexplained)
    if unexplained and len(fresh.vectors) < n and n - len(fresh.vectors) <= diagnose_budget:
        fresh.ensure(range(n), extra=True)
        unexplained = _match_shifts(run, unexplained)
    if unexplained and not run.ordered:
        # positions are no build order: the window searched random neighbours. A
        # shifted chunk's own vector is still in the index under another id; ask the
        # index for it (a confirmed match is re-checked exactly)
        unexplained = _moved_vectors(run, unexplained)
    if unexplained:  # another prefix or instruction before the text (E5, BGE, Nomic, ...)
        unexplained = _prefixed(run, unexplained, embedder_spec(settings.embedder, fresh.embedder))
    comparable = sum(1 for c in checks if c.cosine is not None)
    mismatch = len(unexplained) >= max(2, comparable / 2)
    why = _explain_mismatch(run, checks) if mismatch else None
    for c in unexplained:
        c.status = why.status if why is not None else Status.STALE_VECTOR
    return why, shift_model_embeddings


def _match_shifts(run: _Sampled, cands: list[ChunkCheck]) -> list[ChunkCheck]:
    """Mark candidates whose stored vector is another chunk's fresh one (the nearest by
    position, ties to the chunk before) as ``Status.SHIFT``; return the rest."""
    pos, mat = run.fresh.matrix()
    posarr = np.asarray(pos)
    left = []
    for start in range(0, len(cands), MATCH_BLOCK):
        block = cands[start : start + MATCH_BLOCK]
        sims = _unit(np.stack([run.stored.vectors[c.id] for c in block])) @ mat.T
        for row, c in enumerate(block):
            match = posarr[sims[row] >= run.min_cosine]
            match = match[match != c.position]
            if match.size == 0:
                left.append(c)
                continue
            dist = np.abs(match - c.position) * 2 + (match > c.position)
            best = int(match[np.argmin(dist)])
            c.status, c.holds_vector_of, c.offset = (
                Status.SHIFT,
                run.corpus.ids[best],
                best - c.position,
            )
    return left


def _prefixed(run: _Sampled, cands: list[ChunkCheck], spec: str) -> list[ChunkCheck]:
    """Mark candidates whose stored vector is their text's under a known prefix (E5's
    'passage: ', ...) as ``Status.EMBEDDED_TEXT_DIFFERS`` (``run.prefix``); return the rest."""
    texts = [run.corpus.texts[c.position] for c in cands]
    stored = _unit(np.stack([run.stored.vectors[c.id] for c in cands]))
    fit, spent = find_prefix(
        run.fresh.embedder, spec, [c.position for c in cands], texts, stored, run.min_cosine
    )
    run.fresh.extra += spent
    if fit is None or not fit.matched:
        return cands
    run.prefix = fit
    for c in cands:
        if c.position in fit.matched:
            c.status = Status.EMBEDDED_TEXT_DIFFERS
    return [c for c in cands if c.position not in fit.matched]


def _moved_vectors(run: _Sampled, cands: list[ChunkCheck], k: int = 4) -> list[ChunkCheck]:
    """Mark candidates whose own fresh vector is stored under another id (``shift``, with
    ``vector_held_by``); return the rest. One ANN query per candidate, k results, then the
    returned ids' stored vectors fetched and compared exactly (cosine >= min_cosine)."""
    fresh = run.fresh
    queries = np.stack([fresh.vectors[c.position] for c in cands]).astype(np.float32)
    _, found = run.store.query(queries, k)
    wanted = sorted({str(i) for row in found for i in row if i is not None})
    if not wanted:
        return cands
    got = run.store.fetch(wanted)
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
                and float(np.dot(held[str(i)], own)) >= run.min_cosine
            ),
            None,
        )  # fmt: skip
        if holder is None:
            left.append(c)
        else:
            c.status, c.vector_held_by = Status.SHIFT, holder
    return left


def _explain_mismatch(run: _Sampled, checks: list[ChunkCheck]) -> MismatchWhy:
    """Another model, or another text embedded (``explain_low_cosines``), from the
    comparable chunks that hold no other chunk's vector."""
    pos, mat = run.fresh.matrix()
    at = {p: i for i, p in enumerate(pos)}
    cands = [c for c in checks if c.cosine is not None and c.status != Status.SHIFT]
    cos = np.asarray([c.cosine for c in cands], dtype=np.float64)
    vecs = _unit(np.stack([run.stored.vectors[c.id] for c in cands])) if cands else mat[:0]
    own = np.asarray([at[c.position] for c in cands], dtype=np.int64)
    return mismatch_verdict(cos, vecs, mat, own, run.min_cosine)


def _findings(
    run: _Sampled,
    checks: list[ChunkCheck],
    why: MismatchWhy | None,
    store_count: int,
    by_ids: bool,
) -> list[Finding]:
    """Shift findings (runs pinned by bisection where positions are build order, else
    chains), then the other faults and warnings, with the rows annotated."""
    if run.ordered:
        findings = shift_findings(
            checks,
            run.corpus,
            run.stored.vectors,
            run.stored.dims,
            run.fresh,
            run.stored.fetch,
            run.min_cosine,
            order_label(run.store, run.from_store),
        )
    else:
        findings = chain_findings(checks, run.corpus, by_ids)
    # a sample never lists orphan ids (no store_ids): only --all reads every stored id
    findings += other_findings(checks, run.corpus, None, store_count, by_ids, run.from_store)
    if why is not None:
        for f in findings:
            if f.kind == why.status:
                f.details.update(why.details)
    if run.prefix is not None:
        ids = [c.id for c in checks if c.position in run.prefix.matched]
        compared = sum(1 for c in checks if c.cosine is not None)
        findings = with_prefix_finding(findings, run.prefix, ids, compared)
    annotate(checks, run.corpus.texts, run.store, findings)
    return findings


def _result(
    checks: list[ChunkCheck],
    findings: list[Finding],
    min_cosine: float,
    targeted: set[int] | None,
    *,
    mode: str,
    diagnosis_embeddings: int,
    shift_model_embeddings: int,
    targets_dropped: int,
) -> CheckIndexResult:
    """The result: its figures from the rows, the fault-rate bound from the random ones."""
    cos = np.asarray([c.cosine for c in checks if c.cosine is not None], dtype=np.float64)
    counts: dict[str, int] = {}
    for c in checks:
        counts[c.status] = counts.get(c.status, 0) + 1
    bound = None
    if targeted is not None:
        rand = [c for c in checks if not c.targeted]
        bound = fault_rate_upper(sum(c.status != Status.OK for c in rand), len(rand))
    result = check_result(
        mode, len(checks), min_cosine, cos, checks, findings, counts, diagnosis_embeddings
    )
    result.fault_rate_upper_95 = bound
    result.shift_model_embeddings = shift_model_embeddings
    result.targets_dropped = targets_dropped
    return result
