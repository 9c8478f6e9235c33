"""diff-index's join: old and new rows paired by text hash in DuckDB over the spilled
files, each pair's vectors compared, moved vectors' holders found through LSH buckets of
the old vectors, and the rows only one side has listed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from .hash_join import Flag, VectorFile, sql_str
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


class Tally:
    """What the comparison of the paired rows found, pair by pair, in any order: counts,
    the unusable and the moved pairs (named after the loop, in new seq order), the moved
    new vectors (for the holder search), the compared count and the lowest cosine."""

    def __init__(self, moved: MovedVectors, min_cosine: float) -> None:
        self.moved, self.min_cosine = moved, min_cosine
        self.counts: dict[str, int] = {}
        self.unusable: list[tuple[np.ndarray, ...]] = []  # (new seq, old seq, new flag)
        self.moved_at: list[tuple[np.ndarray, ...]] = []  # (new seq, old seq, cosine)
        self.bad_seq: list[np.ndarray] = []  # new rows whose vector is not usable
        self.bad_flag: list[np.ndarray] = []  # and their flags
        self.compared = 0
        self.low = np.inf

    def new_flags(self, start: int, flags: np.ndarray) -> None:
        """A new block's flags (from seq ``start``): its unusable rows are kept."""
        nz = np.flatnonzero(flags != Flag.OK)
        self.bad_seq.append(nz + start)
        self.bad_flag.append(flags[nz])

    def add(
        self,
        nseq: np.ndarray,
        oseq: np.ndarray,
        nflag: np.ndarray,
        oflag: np.ndarray,
        mine: np.ndarray,
        theirs: np.ndarray,
    ) -> None:
        """Pairs (new seq, old seq), their flags, and their new and old unit rows (views or
        copies; rows of unusable pairs are not read)."""
        usable = (nflag == Flag.OK) & (oflag == Flag.OK)
        unusable = np.flatnonzero(~usable)
        if unusable.size:
            self.unusable.append((nseq[unusable], oseq[unusable], nflag[unusable]))
            idx = np.flatnonzero(usable)
            if idx.size == 0:
                return
            nseq, oseq, mine, theirs = nseq[idx], oseq[idx], mine[idx], theirs[idx]
        if not len(nseq):
            return
        # the products summed as numpy sums, row by row (the golden results hold these
        # cosines to 8 digits)
        cos = np.multiply(theirs, mine).sum(axis=1)
        self.compared += len(nseq)
        self.low = min(self.low, float(cos.min()))
        same = int((cos >= self.min_cosine).sum())
        if same:
            self.counts[DiffStatus.UNCHANGED] = self.counts.get(DiffStatus.UNCHANGED, 0) + same
        bad = np.flatnonzero(cos < self.min_cosine)
        if bad.size:
            self.moved.add(nseq[bad], mine[bad])
            self.moved_at.append((nseq[bad], oseq[bad], cos[bad]))


def rows_at(a: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``a[at]``: a view when ``at`` is one ascending run of rows, else a copy."""
    if len(at) and int(at[-1]) - int(at[0]) == len(at) - 1 and bool((np.diff(at) == 1).all()):
        return a[int(at[0]) : int(at[-1]) + 1]
    return np.take(a, at, axis=0)


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
    pair_keys(con, so, sn)
    moved = MovedVectors(folder, so.dimension)
    tally = Tally(moved, min_cosine)
    vo = VectorFile(so.vectors, so.dimension)
    say("comparing the vectors of unchanged texts")
    try:
        pairs = _Pairs(con)
        for start, unit, flags in blocks:
            tally.new_flags(start, flags)
            tb = pairs.upto(start + len(flags))
            if tb is None:
                continue
            nseq = tb.column("nseq").to_numpy()
            local, oseq = nseq - start, tb.column("oseq").to_numpy()
            oflag = tb.column("oflag").to_numpy()
            tally.add(nseq, oseq, flags[local], oflag, rows_at(unit, local), vo.gather(oseq))
        return explain(con, tally, sn, lambda: find_holders(con, so, moved, min_cosine), say)
    finally:
        vo.close()
        moved.close()


def pair_keys(con: Any, so: Any, sn: Any) -> None:
    """The views ``o`` and ``n`` of the spilled keys and the table ``pairs`` (new seq, its
    rank among its text's copies, old seq, old flag): rows paired by text hash, the k-th
    copy of a text in one index with its k-th copy in the other."""
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


def _by_nseq(parts: list[tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    """The columns of ``parts`` concatenated, ordered by their first (new seq)."""
    cols = [np.concatenate(c) for c in zip(*parts, strict=True)]
    order = np.argsort(cols[0], kind="stable")
    return tuple(c[order] for c in cols)


def explain(
    con: Any,
    tally: Tally,
    sn: Any,
    holders: Callable[[], dict[int, int]],
    say: Callable[[str], None],
) -> DiffResult:
    """The result of a finished comparison: the unusable and moved pairs named (moved ones
    explained by ``holders``: new seq -> old seq of the text whose vector it holds), the
    unpaired rows listed, repeated texts found."""
    rows: list[DiffRow] = []
    moved_seq = tally.moved.done()
    if tally.unusable:
        ns, os_, fl = _by_nseq(tally.unusable)
        for nid, oid, f in zip(
            _names(con, "n", ns), _names(con, "o", os_), fl.tolist(), strict=True
        ):
            rows.append(DiffRow(nid, oid, _BY_FLAG.get(Flag(f)) or DiffStatus.UNCHECKED))
    if tally.moved_at:
        ns, os_, cs = (np.concatenate(c) for c in zip(*tally.moved_at, strict=True))
        moved_rows = [
            DiffRow(nid, oid, DiffStatus.VECTOR_CHANGED, c)
            for nid, oid, c in zip(
                _names(con, "n", ns), _names(con, "o", os_), cs.tolist(), strict=True
            )
        ]
        say(f"looking for the texts {len(moved_rows)} moved vectors belong to")
        matches = _holder_names(con, holders())
        unexplained = 0
        for seq, row in zip(moved_seq, moved_rows, strict=True):
            holder = matches.get(int(seq))
            if holder is not None:
                row.status, row.holds_vector_of = DiffStatus.SHIFT, holder
            else:
                unexplained += 1
        if unexplained >= max(2, tally.compared / 2):
            for row in moved_rows:
                if row.status == DiffStatus.VECTOR_CHANGED:
                    row.status = DiffStatus.MODEL_CHANGE
        order = np.argsort(ns, kind="stable")  # found in any order, listed by new seq
        rows.extend(moved_rows[i] for i in order.tolist())
    say("listing added, changed and removed texts")
    flagged = None
    if tally.bad_seq:
        seqs, flags = np.concatenate(tally.bad_seq), np.concatenate(tally.bad_flag)
        order = np.argsort(seqs, kind="stable")
        flagged = (seqs[order], flags[order])
    rows.extend(_unpaired(con, sn.keys, flagged))
    q = "SELECT n.id FROM pairs p JOIN n ON n.seq = p.nseq WHERE p.nr > 1 ORDER BY p.nseq"
    dups = [str(r[0]) for r in con.execute(q).fetchall()]
    result = DiffResult(
        ok=True,
        old_count=0,
        new_count=0,
        compared=tally.compared,
        threshold=tally.min_cosine,
        min_cosine=None if tally.compared == 0 else tally.low,
        counts=tally.counts,
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


def _holder_names(con: Any, best: dict[int, int]) -> dict[int, str]:
    """New seq -> new id (old id if removed) of the text at old seq ``best[new seq]``."""
    import pyarrow as pa

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
