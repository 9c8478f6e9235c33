"""diff-index: is the new index the old one plus the changes?

Old and new rows are paired by xxh3-128 of the normalised chunk text (see
:mod:`indexcheck.core.hash_join`), so renumbered ids still pair; a text repeated k times
pairs its copies in store order. For each pair the new vector is compared with the old one
(cosine of unit vectors). A pair under ``min_cosine`` is explained, most specific first:

- ``shift``: the new vector is (cosine >= min_cosine) the old vector of another text;
  ``holds_vector_of`` names that text's chunk by its new id (its old id when the text was
  removed). Candidates come from LSH buckets of the old vectors and are re-checked exactly.
- ``model_change``: at least half the compared pairs moved and none of the unexplained
  ones holds another text's vector: the new index was built with another model.
- ``vector_changed``: an isolated moved vector that matches no other text.

Rows without a usable new vector get check-index's statuses (``missing_vector``,
``dimension_mismatch`` against the old dimension, ``non_finite``, ``zero_vector``);
new vectors whose id is not in ``--chunks-new`` are ``orphan_vector``. Texts only in the
new index are ``added`` (``changed`` when their id held another text before), texts only
in the old one ``removed``; these are listed, not errors. With an embedder, a seeded
sample of added and changed texts is re-embedded (through the engine: here or on Ray)
and checked as check-index does (:mod:`indexcheck.core.diff_index.new_texts`).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ...corpus import Corpus
from ...embedders.base import Embedder
from ...errors import DataFileError, DimensionMismatchError, InputError
from ...stores.base import VectorStore
from ..arrow_spill import moved_keys, row_count, spill_pair
from ..hash_join import Flag, VectorFile, batches, check_memory_limit, connect, sql_str
from .result import DiffFinding, DiffResult, DiffRow, DiffStatus

BLOCK = 16384


ERRORS = (
    DiffStatus.SHIFT,
    DiffStatus.MODEL_CHANGE,
    DiffStatus.VECTOR_CHANGED,
    DiffStatus.MISSING_VECTOR,
    DiffStatus.ORPHAN_VECTOR,
    DiffStatus.DIMENSION_MISMATCH,
    DiffStatus.NON_FINITE,
    DiffStatus.ZERO_VECTOR,
)
_BY_FLAG = {
    Flag.MISSING: DiffStatus.MISSING_VECTOR,
    Flag.DIMENSION: DiffStatus.DIMENSION_MISMATCH,
    Flag.NON_FINITE: DiffStatus.NON_FINITE,
    Flag.ZERO: DiffStatus.ZERO_VECTOR,
    Flag.ORPHAN: DiffStatus.ORPHAN_VECTOR,
}
MESSAGES = {
    DiffStatus.SHIFT: "unchanged texts whose new vector is the old vector of another text: "
    "vectors were attached by position; rebuild attaching vectors by text hash",
    DiffStatus.MODEL_CHANGE: "most unchanged texts moved and none holds another text's "
    "vector: the new index was built with another model (or settings)",
    DiffStatus.VECTOR_CHANGED: "unchanged texts whose vector moved and matches no other "
    "text; re-embed these chunks",
    DiffStatus.MISSING_VECTOR: "no vector in the new index for these chunks; index them",
    DiffStatus.ORPHAN_VECTOR: "vectors in the new index have no chunk in --chunks-new; "
    "delete them or add their chunks",
    DiffStatus.DIMENSION_MISMATCH: "new vectors whose length differs from the old index's; "
    "re-embed them with the index's model",
    DiffStatus.NON_FINITE: "new vectors contain NaN or infinity; re-embed these chunks",
    DiffStatus.ZERO_VECTOR: "new vectors are all zeros; re-embed these chunks",
    DiffStatus.ADDED: "texts only in the new index",
    DiffStatus.CHANGED: "ids whose text changed",
    DiffStatus.REMOVED: "texts only in the old index",
    DiffStatus.UNCHECKED: "old vectors unusable (missing, NaN, zero or wrong length): these "
    "pairs could not be compared",
    DiffStatus.DUPLICATE_TEXT: "new chunks repeat an earlier chunk's text; a cache keyed by "
    "position misaligns every vector after the first repeat",
}


def _dimension(store: VectorStore) -> int:
    d = store.info().dimension
    if d:
        return d
    for batch in store.iter_vectors(16):
        return int(batch.vectors.shape[1])
    return 0


def _empty(store: VectorStore) -> bool:
    """True when the store holds no vector (its count says 0 and a scan finds none)."""
    if row_count(store):
        return False
    return all(len(batch.ids) == 0 for batch in store.iter_vectors(16))


def diff_index(
    old: VectorStore,
    new: VectorStore,
    *,
    chunks_old: Corpus | None = None,
    chunks_new: Corpus | None = None,
    embedder: Embedder | None = None,
    sample_new: int | None = 100,
    seed: int = 0,
    min_cosine: float = 0.999,
    workdir: Path | None = None,
    memory_limit: str = "256MB",
    progress: Callable[[str], None] | None = None,
    engine: Any = None,
) -> DiffResult:
    """Pair old and new by text hash and compare every unchanged text's vectors.

    Vectors are float32 (n, d) in any scale (compared as unit vectors, cosine).
    ``sample_new=None`` re-embeds every added or changed text (needs ``embedder``).
    ``workdir`` holds the spill files (a temporary folder, removed after, by default).
    ``engine`` (:mod:`indexcheck.engine`, local by default) embeds the sampled new texts.
    Raises DimensionMismatchError when the embedder and the new index disagree, before
    any work.
    """
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
    if embedder is not None and (d_new := _dimension(new)) and embedder.dimension != d_new:
        raise DimensionMismatchError(
            f"the new index holds {d_new}-d vectors but {embedder.model_id} gives "
            f"{embedder.dimension}-d; pass the --embedder the new index was built with"
        )
    own = workdir is None
    folder = Path(tempfile.mkdtemp(prefix="indexcheck-diff-")) if own else Path(workdir or ".")
    folder.mkdir(parents=True, exist_ok=True)
    try:
        say(f"reading the old index {old.spec} and the new index {new.spec}")
        side_old, side_new = spill_pair(old, new, folder, chunks_old, chunks_new)
        d_old = side_old.dimension
        con = connect(folder, memory_limit)
        try:
            result = _join(con, side_old, side_new, folder, min_cosine, say)
        finally:
            con.close()
    finally:
        if own:
            shutil.rmtree(folder, ignore_errors=True)
    result.new_count = side_new.rows
    result.old_count = side_old.rows
    d_new = _dimension(new)
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

        check_new_texts(
            result, new, chunks_new, embedder, sample_new, seed, min_cosine, say, engine
        )
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
    _finish(result)
    return result


def _join(
    con: Any,
    so: Any,
    sn: Any,
    folder: Path,
    min_cosine: float,
    say: Callable[[str], None],
) -> DiffResult:
    keys = "seq, id, h1, h2, flag, k0, k1, k2, k3"
    for name, side in (("o", so), ("n", sn)):
        con.execute(
            f"CREATE TABLE {name} AS SELECT {keys}, row_number() OVER "
            f"(PARTITION BY h1, h2 ORDER BY seq) AS r FROM read_parquet({sql_str(side.keys)}) "
            f"WHERE flag <> {int(Flag.ORPHAN)}"
        )
    con.execute(
        "CREATE TABLE pairs AS SELECT n.seq AS nseq, n.id AS nid, n.flag AS nflag, "
        "o.seq AS oseq, o.id AS oid, o.flag AS oflag FROM n FULL OUTER JOIN o "
        "ON n.h1 = o.h1 AND n.h2 = o.h2 AND n.r = o.r"
    )
    import pyarrow as pa

    rows: list[DiffRow] = []
    counts: dict[str, int] = {}
    vo, vn = VectorFile(so.vectors, so.dimension), VectorFile(sn.vectors, so.dimension)
    moved_seq: list[np.ndarray] = []
    moved_rows: list[DiffRow] = []
    compared = 0
    low = np.inf
    say("comparing the vectors of unchanged texts")
    try:
        sql = (
            "SELECT nseq, oseq, nid, oid, nflag, oflag FROM pairs "
            "WHERE nseq IS NOT NULL AND oseq IS NOT NULL ORDER BY nseq"
        )
        for rb in con.sql(sql).to_arrow_reader(BLOCK):
            # ids stay Arrow strings: only the rows that are not unchanged become Python
            nseq = rb.column("nseq").to_numpy()
            oseq = rb.column("oseq").to_numpy()
            nflag = rb.column("nflag").to_numpy().astype(int)
            oflag = rb.column("oflag").to_numpy().astype(int)

            def names(at: np.ndarray, rb: Any = rb) -> tuple[list[Any], list[Any]]:
                take = pa.array(at, pa.int64())
                return rb.column("nid").take(take).to_pylist(), rb.column("oid").take(
                    take
                ).to_pylist()

            usable = (nflag == Flag.OK) & (oflag == Flag.OK)
            unusable = np.flatnonzero(~usable)
            for i, nid, oid in zip(unusable.tolist(), *names(unusable), strict=True):
                st = _BY_FLAG.get(Flag(nflag[i])) or DiffStatus.UNCHECKED
                rows.append(DiffRow(nid, oid, st))
            idx = np.flatnonzero(usable)
            if idx.size == 0:
                continue
            cos = (vn.gather(nseq[idx]) * vo.gather(oseq[idx])).sum(axis=1)
            compared += idx.size
            low = min(low, float(cos.min()))
            same = int((cos >= min_cosine).sum())
            if same:
                counts[DiffStatus.UNCHANGED] = counts.get(DiffStatus.UNCHANGED, 0) + same
            bad = np.flatnonzero(cos < min_cosine)
            moved_seq.append(nseq[idx[bad]].astype(np.int64))
            for j, nid, oid in zip(bad.tolist(), *names(idx[bad]), strict=True):
                moved_rows.append(DiffRow(nid, oid, DiffStatus.VECTOR_CHANGED, float(cos[j])))
        if moved_rows:
            say(f"looking for the texts {len(moved_rows)} moved vectors belong to")
            matches = _find_holders(con, np.concatenate(moved_seq), vo, vn, min_cosine)
            unexplained = 0
            for seq, row in zip(np.concatenate(moved_seq), moved_rows, strict=True):
                holder = matches.get(int(seq))
                if holder is not None:
                    row.status, row.holds_vector_of = DiffStatus.SHIFT, holder
                else:
                    unexplained += 1
            if unexplained >= max(2, compared / 2):
                for row in moved_rows:
                    if row.status == DiffStatus.VECTOR_CHANGED:
                        row.status = DiffStatus.MODEL_CHANGE
            rows.extend(moved_rows)
    finally:
        vo.close()
        vn.close()
    say("listing added, changed and removed texts")
    rows.extend(_unpaired(con, sn.keys))
    dups = [str(r[0]) for r in con.execute("SELECT id FROM n WHERE r > 1 ORDER BY seq").fetchall()]
    result = DiffResult(
        ok=True,
        old_count=0,
        new_count=0,
        compared=compared,
        threshold=min_cosine,
        min_cosine=None if compared == 0 else low,
        counts=counts,
        chunks=rows,
        findings=[],
    )
    if dups:
        result.findings.append(
            DiffFinding(
                DiffStatus.DUPLICATE_TEXT,
                "warning",
                f"{len(dups)} chunk(s): {MESSAGES[DiffStatus.DUPLICATE_TEXT]}",
                dups,
            )
        )
        result.counts[DiffStatus.DUPLICATE_TEXT] = len(dups)
    return result


def _find_holders(
    con: Any, moved: np.ndarray, vo: VectorFile, vn: VectorFile, min_cosine: float
) -> dict[int, str]:
    """New seq -> new id (old id if removed) of the text whose old vector it holds."""
    import pyarrow as pa

    # Small tables of known size first, so that every join builds its hash table on them
    # and streams the 2 x n key rows past it (never the other way round).
    con.register("moved", pa.table({"seq": pa.array(moved)}))
    con.execute("CREATE TEMP TABLE mv AS SELECT seq FROM moved")
    con.unregister("moved")
    moved_keys(con, moved, vn, vo.dimension)
    best: dict[int, tuple[float, int]] = {}
    for t in range(4):
        sql = (
            f"SELECT mk.seq AS nseq, o.seq AS oseq FROM mk JOIN "
            f"(SELECT seq, h1, h2, k{t} FROM o WHERE flag = {int(Flag.OK)}) o "
            f"ON o.k{t} = mk.k{t} WHERE o.h1 <> mk.h1 OR o.h2 <> mk.h2"
        )
        for b in batches(con, sql, BLOCK):
            order = np.argsort(b["nseq"], kind="stable")
            nseq, oseq = b["nseq"][order], b["oseq"][order]
            cos = (vn.gather(nseq) * vo.gather(oseq)).sum(axis=1)
            for i in np.flatnonzero(cos >= min_cosine):
                ns, c = int(nseq[i]), float(cos[i])
                if ns not in best or c > best[ns][0]:
                    best[ns] = (c, int(oseq[i]))
    con.execute("DROP TABLE mk")
    con.execute("DROP TABLE mv")
    if not best:
        return {}
    oseqs = sorted({v[1] for v in best.values()})
    con.register("found", pa.table({"oseq": pa.array(oseqs, pa.int64())}))
    con.execute("CREATE TEMP TABLE fo AS SELECT oseq FROM found")
    con.unregister("found")
    named = con.execute(
        "SELECT oseq, coalesce(nid, oid) FROM pairs WHERE oseq IN (SELECT oseq FROM fo)"
    ).fetchall()
    con.execute("DROP TABLE fo")
    name_of = {int(a): str(b) for a, b in named}
    return {ns: name_of[os_] for ns, (_, os_) in best.items() if os_ in name_of}


def _unpaired(con: Any, new_keys: Path) -> list[DiffRow]:
    """Rows only in one index: added / changed / removed, or a new row's bad vector."""
    rows: list[DiffRow] = []
    q = (
        "WITH nu AS (SELECT nseq, nid, nflag FROM pairs WHERE oseq IS NULL), "
        "ou AS (SELECT oseq, oid FROM pairs WHERE nseq IS NULL) "
        "SELECT nu.nid, ou.oid, nu.nflag FROM nu LEFT JOIN ou ON nu.nid = ou.oid "
        "ORDER BY nu.nseq"
    )
    changed: set[str] = set()
    for nid, oid, flag in con.execute(q).fetchall():
        st = _BY_FLAG.get(Flag(int(flag)))
        if oid is not None:
            changed.add(str(oid))
        if st is None:
            st = DiffStatus.CHANGED if oid is not None else DiffStatus.ADDED
        rows.append(DiffRow(str(nid), None if oid is None else str(oid), st))
    q = "SELECT oid FROM pairs WHERE nseq IS NULL ORDER BY oseq"
    for (oid,) in con.execute(q).fetchall():
        if str(oid) not in changed:
            rows.append(DiffRow(None, str(oid), DiffStatus.REMOVED))
    # orphans were kept out of the join; list them from the spilled keys of the new side
    q = (
        f"SELECT id FROM read_parquet({sql_str(new_keys)}) "
        f"WHERE flag = {int(Flag.ORPHAN)} ORDER BY seq"
    )
    rows.extend(
        DiffRow(str(i), None, DiffStatus.ORPHAN_VECTOR) for (i,) in con.execute(q).fetchall()
    )
    return rows


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
