"""diff-index's join: old and new rows paired by text hash in DuckDB over the spilled
files, each pair's vectors compared, moved vectors' holders found through LSH buckets of
the old vectors, and the rows only one side has listed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..arrow_spill import moved_keys
from ..hash_join import Flag, VectorFile, batches, sql_str
from .result import DiffFinding, DiffResult, DiffRow, DiffStatus
from .statuses import _BY_FLAG, MESSAGES

BLOCK = 16384


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
