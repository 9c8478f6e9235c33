"""diff-index: is the new index the old one plus the changes?

Old and new rows are paired by xxh3-128 of the normalised chunk text
(:mod:`indexcheck.commands.diff_index.hash_join`), so renumbered ids still pair; a text
repeated k times pairs its copies in store order. Each pair's vectors are compared by cosine;
a pair under ``min_cosine`` is explained, most specific first: ``shift`` (the new vector is
another text's old vector, found through LSH buckets and re-checked exactly;
``holds_vector_of`` names it by new id, or old id when removed), ``model_change`` (half or
more pairs moved and none of the unexplained holds another text's vector), ``vector_changed``
(an isolated moved vector). Unusable new vectors get check-index's statuses; ids not in
``--chunks-new`` are ``orphan_vector``; texts only in the new index are ``added`` (``changed``
when their id held another text), only in the old ``removed``. With an embedder a seeded
sample of added and changed texts is re-embedded and checked (:mod:`.new_texts`).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...embedders.base import Embedder
from ...errors import DataFileError, DimensionMismatchError, InputError
from ...inputs.corpus import Corpus
from ...inputs.given import corpus_of
from ...stores.base import VectorStore
from ...stores.files.id_map import duplicate_ids
from ..kit.blas_threads import one_blas_thread
from .arrow_spill import Fallback, new_blocks, respill_new, row_count, spill_pair, store_dimension
from .band import band_compare, band_keys, first_dimension
from .hash_join import Side, check_memory_limit, connect, sql_str
from .join import _join
from .result import DiffFinding as DiffFinding
from .result import DiffResult as DiffResult
from .result import DiffStatus as DiffStatus
from .settings import DiffIndexSettings as DiffIndexSettings
from .statuses import ERRORS, MESSAGES
from .vectors import spilled_blocks


def _remove_new(folder: Path, before: set[str]) -> None:
    """Remove what this run wrote in ``folder`` (names not there before it began)."""
    for entry in folder.iterdir():
        if entry.name in before:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def _empty(store: VectorStore) -> bool:
    """True when the store holds no vector (its count says 0 and a scan finds none)."""
    if row_count(store):
        return False
    return all(len(batch.ids) == 0 for batch in store.iter_vectors(16))


def diff_index(
    settings: DiffIndexSettings,
    old: VectorStore,
    new: VectorStore,
    embedder: Embedder | None = None,
    progress: Callable[[str], None] | None = None,
    engine: Any = None,
) -> DiffResult:
    """Pair old and new by text hash and compare every unchanged text's vectors.

    Vectors are float32 (n, d) in any scale (compared as unit vectors, cosine). The
    stores, the ``embedder`` (None: no new text re-embedded) and the ``engine``
    (:mod:`indexcheck.engines`, local by default) are opened by the caller; the rest comes
    from ``settings``: ``chunks_old``/``chunks_new`` (a Corpus, or a file read with
    ``id_column``/``text_column``), ``sample_new`` (None: every added or changed text),
    ``seed``, ``min_cosine``, ``workdir`` for the spill files (a temporary folder, removed
    after, by default) and ``memory_limit``. Raises DimensionMismatchError when the
    embedder and the new index disagree, before any work.
    """
    sample_new, min_cosine, memory_limit, workdir = (
        settings.sample_new, settings.min_cosine, settings.memory_limit, settings.workdir
    )  # fmt: skip
    chunks_old, chunks_new = chunks_of(settings)
    say = progress or (lambda _msg: None)
    if sample_new is not None and sample_new < 0:
        raise InputError("--sample-new must be 0 or more")
    if not -1.0 <= min_cosine <= 1.0:  # also refuses NaN
        raise InputError(f"--min-cosine {min_cosine} is not a cosine; use a number in [-1, 1]")
    check_memory_limit(memory_limit)
    # an empty new index is a wrong spec or a failed build, never a pass on nothing
    # compared (an empty old one is a first build: every text is added)
    if _empty(new):
        raise DataFileError(
            f"{new.spec} holds no chunks (no vectors); check the --new spec, or the build "
            "that wrote it"
        )
    if embedder is not None and (d_new := store_dimension(new)) and embedder.dimension != d_new:
        raise DimensionMismatchError(
            f"the new index holds {d_new}-d vectors but {embedder.model_id} gives "
            f"{embedder.dimension}-d; pass the --embedder the new index was built with"
        )
    own = workdir is None
    folder = Path(tempfile.mkdtemp(prefix="indexcheck-diff-")) if own else Path(workdir or ".")
    folder.mkdir(parents=True, exist_ok=True)
    before = set() if own else {p.name for p in folder.iterdir()}
    try:
        with one_blas_thread():  # the readers' threads are the parallelism
            side_old, side_new, result = _diffed(
                old, new, folder, chunks_old, chunks_new, memory_limit, min_cosine, say
            )
        d_old = side_old.dimension
    except BaseException:  # a failed or stopped run: its half-written spill is scratch
        if not own:
            _remove_new(folder, before)
        raise
    finally:
        if own:
            shutil.rmtree(folder, ignore_errors=True)
    try:
        result.new_count = side_new.rows
        result.old_count = side_old.rows
        d_new = store_dimension(new)
        if d_new and d_old and d_new != d_old:
            result.findings.append(
                DiffFinding(
                    "dimension_mismatch",
                    "error",
                    f"the old index holds {d_old}-d vectors and the new one {d_new}-d: "
                    "they were built with different models",
                    [],
                    {"old_dimension": d_old, "new_dimension": d_new},
                )
            )
        if embedder is not None:
            from .new_texts import check_new_texts

            check_new_texts(settings, result, new, chunks_new, embedder, say, engine)
        checked_new = int((result.new_texts or {}).get("checked", 0) or 0)
        if result.compared == 0 and checked_new == 0:
            # no text in both indexes and none re-embedded: nothing was verified, never a pass
            result.findings.append(
                DiffFinding(
                    "nothing_compared",
                    "error",
                    "no text is in both indexes and no new text was re-embedded, so nothing was "
                    "verified; check that --old/--new (and --chunks-old/--chunks-new) are the "
                    "right pair, or add --embedder to check the new texts",
                )
            )
    except BaseException:  # stopped while re-embedding: the spill kept so far is scratch
        if not own:
            _remove_new(folder, before)
        raise
    _finish(result)
    return result


def chunks_of(settings: DiffIndexSettings) -> tuple[Corpus | None, Corpus | None]:
    """The old and new chunks the settings give, each loaded when given as a file."""
    columns = (settings.id_column, settings.text_column)
    return corpus_of(settings.chunks_old, *columns), corpus_of(settings.chunks_new, *columns)


def _banded(
    old: VectorStore,
    new: VectorStore,
    folder: Path,
    memory_limit: str,
    min_cosine: float,
    say: Callable[[str], None],
) -> tuple[Side, Side, DiffResult] | None:
    """Both sides' keys, and the comparison over both vector streams (:mod:`.band`);
    None when the stores need the spill."""
    sides = band_keys(old, new, folder)
    if sides is None:
        return None
    side_old, side_new = sides
    side_old.dimension = side_new.dimension = first_dimension(old)
    if not side_old.dimension:
        return None
    refuse_repeated_ids(folder, memory_limit, (old, side_old), (new, side_new))
    con = connect(folder, memory_limit)
    try:
        result = band_compare(con, old, new, side_old, side_new, folder, min_cosine, say)
    except Fallback:  # a null element, or another dimension than the first vector's
        return None
    finally:
        con.close()
    return side_old, side_new, result


def _diffed(
    old: VectorStore,
    new: VectorStore,
    folder: Path,
    chunks_old: Corpus | None,
    chunks_new: Corpus | None,
    memory_limit: str,
    min_cosine: float,
    say: Callable[[str], None],
) -> tuple[Side, Side, DiffResult]:
    """Both sides' keys and the comparison: the band pass over two ``parquet:`` stores,
    else the spill of both sides."""
    say(f"reading the old index {old.spec} and the new index {new.spec}")
    if chunks_old is None and chunks_new is None:
        banded = _banded(old, new, folder, memory_limit, min_cosine, say)
        if banded is not None:
            return banded
    side_old, side_new = spill_pair(old, new, folder, chunks_old, chunks_new)
    refuse_repeated_ids(folder, memory_limit, (old, side_old), (new, side_new))
    try:
        result = _compare(side_old, side_new, new, folder, memory_limit, min_cosine, say)
    except Fallback:  # the new vectors need the row reader: spill them, compare again
        side_new = respill_new(new, folder, side_old.dimension)
        result = _compare(side_old, side_new, new, folder, memory_limit, min_cosine, say)
    return side_old, side_new, result


def refuse_repeated_ids(folder: Path, memory_limit: str, *sides: tuple[VectorStore, Side]) -> None:
    """Refuse a store opened without lookups (its id map not built) whose keys file holds
    an id twice, as its id map would have: before any vector is compared (DuckDB within
    ``memory_limit``, spilling to ``folder``). The sides are read at once, each grouped by
    a 64-bit hash of the id first: only a hash seen twice costs the exact grouping by id
    (the first side given with a repeated id is named)."""
    todo = [(store, side) for store, side in sides if not getattr(store, "ids_checked", True)]
    if not todo:
        return
    from concurrent.futures import ThreadPoolExecutor

    con = connect(folder, memory_limit)  # one database: one memory limit, one spill folder

    def repeated(keys: Path) -> bool:
        cur = con.cursor()  # a connection of its own to the same database, for this thread
        try:
            for by in ("hash(id)", "id"):  # no repeated hash: no repeated id
                q = f"SELECT 1 FROM read_parquet({sql_str(keys)}) GROUP BY {by} HAVING count(*) > 1"
                if cur.execute(q + " LIMIT 1").fetchone() is None:
                    return False
            return True
        finally:
            cur.close()

    try:
        with ThreadPoolExecutor(len(todo)) as pool:  # DuckDB runs each without the GIL
            found = list(pool.map(repeated, [side.keys for _, side in todo]))
    finally:
        con.close()
    for (store, _), bad in zip(todo, found, strict=True):
        if bad:
            raise duplicate_ids(getattr(store, "path", store.spec))


def _compare(
    side_old: Side,
    side_new: Side,
    new: VectorStore,
    folder: Path,
    memory_limit: str,
    min_cosine: float,
    say: Callable[[str], None],
) -> DiffResult:
    """The join and the comparison, the new side's vectors read from its spill, or from
    the store again when it was not spilled."""
    if side_new.vectors is None:
        blocks = new_blocks(new, side_old.dimension)
    else:
        blocks = spilled_blocks(side_new)
    con = connect(folder, memory_limit)
    try:
        return _join(con, side_old, side_new, blocks, folder, min_cosine, say)
    finally:
        blocks.close()
        con.close()


def _finish(result: DiffResult) -> None:
    """Counts by status, one finding per status, and the verdict."""
    for r in result.chunks:
        result.counts[r.status] = result.counts.get(r.status, 0) + 1
    for st in DiffStatus:
        if st in (DiffStatus.UNCHANGED, DiffStatus.DUPLICATE_TEXT):
            continue
        rows = [r for r in result.chunks if r.status == st]
        if not rows:
            continue
        if st in ERRORS:
            severity = "error"
        elif st == DiffStatus.UNCHECKED:
            severity = "warning"
        else:
            severity = "info"
        ids = [str(r.id if r.id is not None else r.old_id) for r in rows]
        result.findings.append(
            DiffFinding(st, severity, f"{len(rows)} chunk(s): {MESSAGES[st]}", ids)
        )
    order = {s: i for i, s in enumerate(DiffStatus)}
    result.chunks.sort(key=lambda r: order[DiffStatus(r.status)])
    result.counts = {
        k: result.counts[k] for k in sorted(result.counts, key=lambda s: order[DiffStatus(s)])
    }
    result.ok = not any(f.severity == "error" for f in result.findings)
