"""diff-index's join: old and new rows paired by text hash in DuckDB over the spilled
files, each pair's vectors compared, moved vectors' holders found through LSH buckets of
the old vectors, and the rows only one side has listed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..hash_join import Flag, VectorFile, sql_str
from .result import DiffFinding, DiffResult, DiffRow, DiffStatus
from .statuses import _BY_FLAG, MESSAGES
from .vectors import MovedVectors, find_holders

BLOCK = 16384


class _Pairs:
    """The paired rows (both sides present), ordered by new seq, taken a block at a time."""

    def __init__(self, con: Any) -> None:
        sql = (
            "SELECT nseq, oseq, oflag FROM pairs "
            "WHERE nseq IS NOT NULL AND oseq IS NOT NULL ORDER BY nseq"
        )
        self._reader = con.sql(sql).to_arrow_reader(BLOCK)
        self._rb: Any = None
        self._nseq = np.zeros(0, dtype=np.int64)
        self._at = 0

    def upto(self, stop: int) -> Any:
        """The next pairs whose new seq is under ``stop``, as one Arrow table (or None)."""
        import pyarrow as pa

        parts = []
        while True:
            if self._rb is None or self._at >= self._rb.num_rows:
                try:
                    self._rb = self._reader.read_next_batch()
                except StopIteration:
                    self._rb = None
                    break
                self._nseq = self._rb.column(0).to_numpy()
                self._at = 0
            end = int(np.searchsorted(self._nseq, stop, side="left"))
            if end > self._at:
                parts.append(self._rb.slice(self._at, end - self._at))
            self._at = end
            if end < self._rb.num_rows:
                break
        if not parts:
            return None
        return pa.Table.from_batches(parts)


def _join(
    con: Any,
    so: Any,
    sn: Any,
    blocks: Iterator[tuple[int, np.ndarray, np.ndarray]],
    folder: Path,
    min_cosine: float,
    say: Callable[[str], None],
) -> DiffResult:
    """Pair the spilled keys, compare each new block (``blocks``: first seq, unit rows,
    flags, in seq order) with its old partners in the old spill, explain the moved ones."""
    # the keys stay in their files (views); only the pairs, without ids, are a table: the
    # ids of the few rows reported are looked up by seq (:func:`_names`)
    for name, side in (("o", so), ("n", sn)):
        con.execute(
            f"CREATE VIEW {name} AS SELECT seq, id, h1, h2, flag FROM "
            f"read_parquet({sql_str(side.keys)}) WHERE flag <> {int(Flag.ORPHAN)}"
        )
    ranked = "seq, h1, h2, flag, row_number() OVER (PARTITION BY h1, h2 ORDER BY seq) AS r"
    con.execute(
        f"CREATE TABLE pairs AS WITH rn AS (SELECT {ranked} FROM n), "
        f"ro AS (SELECT {ranked} FROM o) "
        "SELECT rn.seq AS nseq, rn.r AS nr, ro.seq AS oseq, ro.flag AS oflag "
        "FROM rn FULL OUTER JOIN ro ON rn.h1 = ro.h1 AND rn.h2 = ro.h2 AND rn.r = ro.r"
    )
    counts: dict[str, int] = {}
    vo = VectorFile(so.vectors, so.dimension)
    moved = MovedVectors(folder, so.dimension)
    # reported pairs, named after the loop: (new seq, old seq, status) / (.., cosine)
    unusable_at: list[tuple[np.ndarray, ...]] = []
    moved_at: list[tuple[np.ndarray, ...]] = []
    bad_seq: list[np.ndarray] = []  # new rows whose vector is not usable, and their flags
    bad_flag: list[np.ndarray] = []
    compared = 0
    low = np.inf
    say("comparing the vectors of unchanged texts")
    try:
        pairs = _Pairs(con)
        for start, unit, flags in blocks:
            nz = np.flatnonzero(flags != Flag.OK)
            bad_seq.append(nz + start)
            bad_flag.append(flags[nz])
            tb = pairs.upto(start + len(flags))
            if tb is None:
                continue
            nseq = tb.column("nseq").to_numpy()
            local = nseq - start
            oseq = tb.column("oseq").to_numpy()
            nflag = flags[local]
            oflag = tb.column("oflag").to_numpy()
            usable = (nflag == Flag.OK) & (oflag == Flag.OK)
            unusable = np.flatnonzero(~usable)
            if unusable.size:
                unusable_at.append((nseq[unusable], oseq[unusable], nflag[unusable]))
            idx = np.flatnonzero(usable)
            if idx.size == 0:
                continue
            mine = unit[local[idx]]
            # the products in place in the gathered copy, summed as numpy sums (the golden
            # results hold these cosines to 8 digits)
            theirs = vo.gather(oseq[idx])
            cos = np.multiply(theirs, mine, out=theirs).sum(axis=1)
            compared += idx.size
            low = min(low, float(cos.min()))
            same = int((cos >= min_cosine).sum())
            if same:
                counts[DiffStatus.UNCHANGED] = counts.get(DiffStatus.UNCHANGED, 0) + same
            bad = np.flatnonzero(cos < min_cosine)
            if bad.size:
                moved.add(nseq[idx[bad]], mine[bad])
                moved_at.append((nseq[idx[bad]], oseq[idx[bad]], cos[bad]))
        moved_seq = moved.done()
        rows: list[DiffRow] = []
        if unusable_at:
            ns, os_, fl = (np.concatenate(c) for c in zip(*unusable_at, strict=True))
            for nid, oid, f in zip(
                _names(con, "n", ns), _names(con, "o", os_), fl.tolist(), strict=True
            ):
                rows.append(DiffRow(nid, oid, _BY_FLAG.get(Flag(f)) or DiffStatus.UNCHECKED))
        if moved_at:
            ns, os_, cs = (np.concatenate(c) for c in zip(*moved_at, strict=True))
            moved_rows = [
                DiffRow(nid, oid, DiffStatus.VECTOR_CHANGED, c)
                for nid, oid, c in zip(
                    _names(con, "n", ns), _names(con, "o", os_), cs.tolist(), strict=True
                )
            ]
            say(f"looking for the texts {len(moved_rows)} moved vectors belong to")
            matches = _find_holders(con, so, moved, min_cosine)
            unexplained = 0
            for seq, row in zip(moved_seq, moved_rows, strict=True):
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
        moved.close()
    say("listing added, changed and removed texts")
    flagged = (np.concatenate(bad_seq), np.concatenate(bad_flag)) if bad_seq else None
    rows.extend(_unpaired(con, sn.keys, flagged))
    q = "SELECT n.id FROM pairs p JOIN n ON n.seq = p.nseq WHERE p.nr > 1 ORDER BY p.nseq"
    dups = [str(r[0]) for r in con.execute(q).fetchall()]
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


def _names(con: Any, view: str, seqs: np.ndarray) -> list[Any]:
    """The ids (``n`` or ``o``) at ``seqs``, in that order (a seq may repeat)."""
    import pyarrow as pa

    uniq = np.unique(seqs)
    con.register("wanted", pa.table({"seq": pa.array(uniq, pa.int64())}))
    got = con.sql(
        f"SELECT k.seq, k.id FROM {view} k JOIN wanted w ON k.seq = w.seq ORDER BY k.seq"
    ).to_arrow_table()
    con.unregister("wanted")
    ids = got.column("id").to_pylist()
    at = np.searchsorted(got.column("seq").to_numpy(), seqs)
    return [ids[i] for i in at.tolist()]


def _find_holders(con: Any, so: Any, moved: MovedVectors, min_cosine: float) -> dict[int, str]:
    """New seq -> new id (old id if removed) of the text whose old vector it holds."""
    import pyarrow as pa

    best = find_holders(con, so, moved, min_cosine)
    if not best:
        return {}
    oseqs = sorted(set(best.values()))
    con.register("found", pa.table({"oseq": pa.array(oseqs, pa.int64())}))
    con.execute("CREATE TEMP TABLE fo AS SELECT oseq FROM found")
    con.unregister("found")
    named = con.execute(
        "SELECT p.oseq, coalesce(n.id, o.id) FROM pairs p JOIN o ON o.seq = p.oseq "
        "LEFT JOIN n ON n.seq = p.nseq WHERE p.oseq IN (SELECT oseq FROM fo)"
    ).fetchall()
    con.execute("DROP TABLE fo")
    name_of = {int(a): str(b) for a, b in named}
    return {ns: name_of[os_] for ns, os_ in best.items() if os_ in name_of}


def _unpaired(
    con: Any, new_keys: Path, flagged: tuple[np.ndarray, np.ndarray] | None
) -> list[DiffRow]:
    """Rows only in one index: added / changed / removed, or a new row's bad vector
    (``flagged``: the new seqs whose vector is not usable, ascending, and their flags)."""
    rows: list[DiffRow] = []
    q = (
        "WITH nu AS (SELECT p.nseq, n.id AS nid FROM pairs p JOIN n ON n.seq = p.nseq "
        "WHERE p.oseq IS NULL), "
        "ou AS (SELECT p.oseq, o.id AS oid FROM pairs p JOIN o ON o.seq = p.oseq "
        "WHERE p.nseq IS NULL) "
        "SELECT nu.nid, ou.oid, nu.nseq FROM nu LEFT JOIN ou ON nu.nid = ou.oid "
        "ORDER BY nu.nseq"
    )
    changed: set[str] = set()
    got = con.sql(q).to_arrow_table()
    nseq = got.column("nseq").to_numpy()
    flag = np.zeros(len(nseq), dtype=np.int64)
    if flagged is not None and len(flagged[0]) and len(nseq):
        seqs, flags = flagged
        at = np.minimum(np.searchsorted(seqs, nseq), len(seqs) - 1)
        hit = seqs[at] == nseq
        flag[hit] = flags[at[hit]]
    nids, oids = got.column("nid").to_pylist(), got.column("oid").to_pylist()
    for nid, oid, f in zip(nids, oids, flag.tolist(), strict=True):
        st = _BY_FLAG.get(Flag(f))
        if oid is not None:
            changed.add(str(oid))
        if st is None:
            st = DiffStatus.CHANGED if oid is not None else DiffStatus.ADDED
        rows.append(DiffRow(str(nid), None if oid is None else str(oid), st))
    q = "SELECT o.id FROM pairs p JOIN o ON o.seq = p.oseq WHERE p.nseq IS NULL ORDER BY p.oseq"
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
