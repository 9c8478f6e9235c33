"""check-index --all, streamed: memory that does not grow with the vectors.

Three passes, each over blocks: (1) the chunks, in corpus order, embedded through the engine
(a hash-keyed cache commits each block, so a killed run loses at most one) and their unit
fresh vectors appended to a scratch file; (2) the store, in its own order, each batch compared
with its chunks' fresh vectors read back; a low chunk is searched among its ``window``
neighbours, else its stored vector waits in a second scratch file; (3) the waiting vectors
searched against every fresh vector through FAISS inner-product indexes, block by block,
each candidate re-checked exactly. Statuses and diagnosis equal the in-memory check's.

Held per chunk: a status byte and a float32 cosine (5 bytes; 5 more for a moment while the
figures are taken); ids, id keys and text hashes live on disk (:mod:`.chunk_spill`). Rows go
to ``settings.rows`` block by block; the result keeps every row up to ``JSON_ROWS_LIMIT``
chunks, then only the rows not ``ok`` (``chunks_truncated``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ....embedders.base import Embedder
from ....errors import DataFileError, DimensionMismatchError, InputError, OutputError
from ....inputs.chunk_stream import ChunkSource, CorpusChunks, StoreChunks
from ....inputs.corpus import Corpus
from ....stores.base import VectorStore
from ....vectors import normalize_rows as _unit
from ...kit.verdicts import Status
from ..findings import ChunkCheck
from ..order import TemplatedStoreChunks, render_corpus, why_low_streamed
from ..prefix import PrefixFit, embedder_spec, find_prefix, with_prefix_finding
from ..result import CheckIndexResult, check_result
from ..settings import CheckIndexSettings
from .chunk_spill import ChunkSpill
from .compare import ABSURD, DIM, LOW, MISSING, NONFINITE, OK, ZERO, compare_rows
from .findings import _texts_at, streamed_findings
from .on_workers import compared_on_workers
from .scratch import OK_CODE, ScratchRows, cosine_figures, refuse_repeated_ids, write_rows
from .scratch_search import global_search, window_search
from .state import StreamRun, Tick

BLOCK = 4096
ITER_BATCH = 1000
JSON_ROWS_LIMIT = 100_000
#: unexplained low chunks judged for "another model or another text" (seeded sample)
WHY_SAMPLE = 2000
#: unexplained low chunks tested one by one for another prefix (seeded sample); beyond
#: it, the rest follow the sample when at least PREFIX_SHARE of it matched
PREFIX_SAMPLE = 2000
PREFIX_SHARE = 0.9

_MISSING, _OK, _LOW, _DIM, _NONFINITE, _ZERO, _ABSURD = (
    MISSING, OK, LOW, DIM, NONFINITE, ZERO, ABSURD
)  # fmt: skip
assert _OK == OK_CODE
_STATUS = {
    _MISSING: Status.MISSING_VECTOR,
    _OK: Status.OK,
    _DIM: Status.DIMENSION_MISMATCH,
    _NONFINITE: Status.NON_FINITE,
    _ZERO: Status.ZERO_VECTOR,
    _ABSURD: Status.ABSURD_MAGNITUDE,
}


def check_all(
    settings: CheckIndexSettings,
    store: VectorStore,
    embedder: Embedder,
    chunks: Corpus | ChunkSource | None,
    *,
    engine: Any = None,
    say: Callable[[str], None] | None = None,
    tick: Tick | None = None,
    scratch_dir: str | None = None,
) -> CheckIndexResult:
    """Check every chunk against its stored vector in blocks of ``settings.block``; the
    result of ``check_index`` with ``sample=None``. ``chunks`` None reads the texts from the
    store. ``engine`` (see :mod:`indexcheck.engines`; None: this process) embeds the blocks;
    rows go to ``settings.rows`` when given. ``settings.template`` rebuilds the embedded
    text of a Corpus or of the store's own texts."""
    from ....engines import LocalEngine

    template = settings.embed_template
    info = store.info()
    if info.dimension and info.dimension != embedder.dimension:
        raise DimensionMismatchError(
            f"the store holds {info.dimension}-d vectors but {embedder.model_id} gives "
            f"{embedder.dimension}-d; pass the --embedder the index was built with"
        )
    if chunks is not None:  # other ids than the store's: exit 2 (commands/kit/id_pairing.py)
        from ...kit.id_pairing import refuse_foreign_chunk_ids

        refuse_foreign_chunk_ids(store, chunks, chunks.source)
    source: ChunkSource
    if chunks is None:
        source = StoreChunks(store) if template is None else TemplatedStoreChunks(store, template)
    elif isinstance(chunks, Corpus):
        source = CorpusChunks(chunks if template is None else render_corpus(chunks, template))
    elif template is not None:
        raise InputError(
            "--embed-template needs the chunks in memory (their metadata); load them with "
            "load_chunks and pass the Corpus"
        )
    else:
        source = chunks
    d = embedder.dimension
    with tempfile.TemporaryDirectory(prefix="indexcheck-", dir=scratch_dir) as tmp:
        refuse_repeated_ids(store, tmp)  # before the first chunk is embedded
        run = StreamRun(
            settings, store, embedder, source, chunks is None, ScratchRows(d, tmp),
            ScratchRows(d, tmp), ChunkSpill(tmp), engine or LocalEngine(),
            say or (lambda _m: None), tick or (lambda _t, _d, _n: None), info.count,
        )  # fmt: skip
        try:
            return _run(run)
        finally:
            run.fresh.close()
            run.pending.close()
            run.ids.close()


def _embed_pass(
    source: ChunkSource,
    embedder: Embedder,
    fresh: ScratchRows,
    spill: ChunkSpill,
    block: int,
    engine: Any,
    tick: Tick,
) -> None:
    total = source.count()

    def texts() -> Iterator[list[str]]:
        for ids, txt in source.blocks(block):
            spill.add(ids, txt)
            yield txt

    def on_workers() -> Iterator[np.ndarray]:  # read and hashed where they are embedded
        for ids, digests, vecs in remote or ():
            spill.add_hashed(ids, digests)
            yield vecs

    reader = getattr(engine, "read_on_workers", None)
    remote = reader(embedder, source, block) if reader is not None else None
    done = 0
    tick("embedding", 0, total)
    blocks = on_workers() if remote is not None else engine.embed_blocks(embedder, texts())
    for vecs in blocks:
        if vecs.ndim != 2 or vecs.shape[1] != embedder.dimension:
            raise DimensionMismatchError("the embedder returned vectors of another dimension")
        fresh.append(_unit(np.asarray(vecs, np.float32)))
        done += vecs.shape[0]
        tick("embedding", done, total)
    spill.finish(source.source)


def _prefixed(
    run: StreamRun, waiting: list[int], unexplained: list[int]
) -> tuple[PrefixFit | None, frozenset[int], int]:
    """(the prefix some unexplained low chunks were embedded with, those chunks, the texts
    embedded to find out): at most
    ``PREFIX_SAMPLE`` of them (seeded) tested one by one (:func:`..prefix.find_prefix`)."""
    if not unexplained:
        return None, frozenset(), 0
    picked = sorted(unexplained)
    if len(picked) > PREFIX_SAMPLE:
        at = np.random.default_rng(0).choice(len(picked), PREFIX_SAMPLE, replace=False)
        picked = [picked[int(i)] for i in np.sort(at)]
    row_of = {q: j for j, q in enumerate(waiting)}
    stored = run.pending.take(np.asarray([row_of[q] for q in picked], dtype=np.int64))
    text_of = _texts_at(run.source, picked, run.settings.block)
    spec = embedder_spec(run.settings.embedder, run.embedder)
    fit, spent = find_prefix(
        run.embedder, spec, picked, [text_of[q] for q in picked], stored,
        run.settings.min_cosine,
    )  # fmt: skip
    if fit is None or not fit.matched:
        return None, frozenset(), spent
    if len(picked) < len(unexplained) and fit.share >= PREFIX_SHARE:
        return fit, frozenset(unexplained), spent  # the rest follow the sample
    return fit, fit.matched, spent


Passes = tuple[np.ndarray, np.ndarray, dict[int, int], list[str]]
"""What the embed and compare passes leave: status uint8 (n,), cosine float32 (n,), the
stored lengths of the DIM rows by position, the orphan ids."""


def _embed_and_compare(run: StreamRun, shift: dict[int, int], waiting: list[int]) -> Passes:
    """Passes 1 and 2 in this process: every chunk embedded through the engine to the
    fresh scratch file, then the store read in its own order and compared batch by batch;
    each low chunk searched among its neighbours (``shift``) or left ``waiting``."""
    store, embedder, source, fresh, pending, ids = (
        run.store, run.embedder, run.source, run.fresh, run.pending, run.ids
    )  # fmt: skip
    min_cosine, block = run.settings.min_cosine, run.settings.block
    tick, d = run.tick, embedder.dimension
    _embed_pass(source, embedder, fresh, ids, block, run.engine, tick)
    n = len(ids)
    if n == 0:
        raise DataFileError(f"{source.source or 'the corpus'} holds no chunks; nothing to check")
    status = np.zeros(n, np.uint8)
    cosine = np.full(n, np.nan, np.float32)
    bad_dim: dict[int, int] = {}
    orphans: list[str] = []

    run.say("reading every stored vector")
    scanned = 0
    expect: int | None = 0  # where the next batch starts when the store yields corpus order
    tick("store scan", 0, run.store_count or None)
    for batch in store.iter_vectors(ITER_BATCH):
        scanned += len(batch.ids)
        tick("store scan", scanned, run.store_count or None)
        pos = ids.positions(batch.ids, expect)
        expect = int(pos[-1]) + 1 if len(pos) and pos[-1] >= 0 else None
        if not run.from_store:
            orphans.extend(i for i, p in zip(batch.ids, pos, strict=True) if p < 0)
        keep = np.flatnonzero(pos >= 0)
        keep = keep[status[pos[keep]] == _MISSING]  # an id stored twice: the first counts
        if not len(keep):
            continue
        p = pos[keep]
        dims = np.asarray(batch.dims)[keep]
        v = np.asarray(batch.vectors, np.float32)[keep]
        st, cos, low_u = compare_rows(fresh.take(p), v, dims, d, min_cosine)
        for q, sd in zip(p[st == _DIM], dims[st == _DIM], strict=True):
            bad_dim[int(q)] = int(sd)
        cosine[p] = cos
        low_at = p[st == _LOW]
        st[st == _MISSING] = _LOW + 10  # seen, but the store has no vector for it
        status[p] = st
        for q, u in zip(low_at.tolist(), low_u, strict=True):
            window_search(fresh, pending, q, u, run.settings, shift, waiting)
    status[status == _LOW + 10] = _MISSING
    return status, cosine, bad_dim, orphans


def _run(run: StreamRun) -> CheckIndexResult:
    min_cosine, block = run.settings.min_cosine, run.settings.block
    say = run.say
    say(f"embedding every chunk with {run.embedder.model_id}")
    shift: dict[int, int] = {}  # position -> position whose fresh vector it holds
    waiting: list[int] = []
    remote = compared_on_workers(run, shift, waiting)
    if remote is not None:
        run, passes = remote
    else:
        passes = _embed_and_compare(run, shift, waiting)
    status, cosine, bad_dim, orphans = passes
    fresh, pending, ids, n = run.fresh, run.pending, run.ids, len(status)

    unexplained = global_search(run, waiting, shift)
    fit, prefixed, prefix_embeddings = _prefixed(run, waiting, unexplained)
    unexplained = [q for q in unexplained if q not in prefixed]
    compared = (status == _OK) | (status == _LOW)
    comparable = int(np.count_nonzero(compared))
    mismatch = len(unexplained) >= max(2, comparable / 2)
    why = None
    if mismatch:
        why = why_low_streamed(
            fresh, pending, waiting, set(shift) | prefixed, compared, cosine, run.settings,
            WHY_SAMPLE,
        )  # fmt: skip
    bad: dict[int, ChunkCheck] = {}
    step = block * 16
    for lo in range(0, n, step):  # the ids of the rows that are not ok, a block at a time
        nz = np.flatnonzero(status[lo : lo + step] != _OK)
        if not nz.size:
            continue
        names = ids.ids_block(lo, min(n, lo + step)).take(nz).to_pylist()
        for q, name in zip((nz + lo).tolist(), names, strict=True):
            s = int(status[q])
            cv = None if np.isnan(cosine[q]) else float(cosine[q])
            if s != _LOW:
                bad[q] = ChunkCheck(name, q, None, _STATUS[s], stored_dimension=bad_dim.get(q))
            elif q in shift:
                t = shift[q]
                bad[q] = ChunkCheck(name, q, cv, Status.SHIFT, ids.id_at(t), t - q)
            elif q in prefixed:
                bad[q] = ChunkCheck(name, q, cv, Status.EMBEDDED_TEXT_DIFFERS)
            else:
                why_status = why.status if why is not None else Status.STALE_VECTOR
                bad[q] = ChunkCheck(name, q, cv, why_status)

    checks = [bad[q] for q in sorted(bad)]
    findings = streamed_findings(run, bad, compared, shift, orphans, why)
    if fit is not None:
        named = [bad[q].id for q in sorted(prefixed)]
        findings = with_prefix_finding(findings, fit, named, comparable)
    counts: dict[str, int] = {}
    n_ok = int(np.count_nonzero(status == _OK))
    if n_ok:
        counts[Status.OK] = n_ok
    for c in checks:
        counts[c.status] = counts.get(c.status, 0) + 1
    counts = {k: counts[k] for k in sorted(counts, key=lambda k: (k != Status.OK, k))}
    del compared
    truncated = n > JSON_ROWS_LIMIT
    rows_path = run.settings.rows
    if rows_path is not None:
        say(f"writing {n} rows to {rows_path}")
        try:
            write_rows(rows_path, ids, status, cosine, bad, block)
        except OSError as exc:  # the path was checked before the work; the disk can fill
            raise OutputError(
                f"could not write --rows {rows_path}: {exc.strerror or exc}"
            ) from None
    if truncated:
        rows = checks
    else:
        names = ids.ids_block(0, n).to_pylist()
        rows = [
            bad[q] if q in bad else ChunkCheck(names[q], q, float(cosine[q]), Status.OK)
            for q in range(n)
        ]
    result = check_result(
        "all", n, min_cosine, np.zeros(0), rows, findings, counts, prefix_embeddings
    )
    result.min_cosine, result.median_cosine, result.below_threshold = cosine_figures(
        cosine, min_cosine
    )
    result.chunks_truncated = truncated
    return result
