"""Benchmark diff-index out of core: old/new pairs of 200k and 2M x 384 with planted faults.

Each pair is written as two Parquet files, block by block (never whole in memory), and read
back by a streaming reader (``parquet:`` stores read a file whole, which is what this
benchmark must not measure). Each diff runs in its own child process, which reports its peak
RSS (DuckDB runs inside it). Planted in every new index: renumbered ids, a positional shift
run, moved vectors, zero / NaN / missing / wrong-length vectors, added, removed and changed
texts, repeated texts; plus, at the smallest size, a second pair rebuilt with another model
(a random rotation). The script fails unless every planted fault is found with its status,
and prints RSS(largest) / RSS(smallest), which must be at most 2.

    .venv/bin/python scripts/bench_diff_index.py [--sizes 200000,2000000] [--dir /tmp/x]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

D = 384
BLOCK = 65536
SHIFT_AT, SHIFT_LEN = 1000, 2000  # new rows [1000, 3000) hold the old vector of their predecessor
MOVED = range(5000, 5100)  # vector_changed
ZERO = range(6000, 6010)
NAN = range(6010, 6020)
MISSING = range(6020, 6030)
WRONG_DIM = range(6030, 6040)
REMOVED = range(7000, 7500)
CHANGED = range(8000, 8100)
DUPS = range(9000, 9010)  # new texts repeating texts 9100..9109 (they pair as "added")
ADDED = 500


def text_of(k: int) -> str:
    return f"chunk {k}: a paragraph about topic {k % 997}"


def old_block(start: int, n: int) -> np.ndarray:
    return np.random.default_rng(start).standard_normal((n, D), dtype=np.float32)


def write_pair(folder: Path, n: int, model_change: bool = False) -> tuple[Path, Path]:
    """Write old.parquet and new.parquet (id, text, dim, vector) block by block."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tag = f"{n}{'-model' if model_change else ''}"
    old_p, new_p = folder / f"old-{tag}.parquet", folder / f"new-{tag}.parquet"
    if old_p.exists() and new_p.exists():
        return old_p, new_p
    schema = pa.schema(
        [
            ("id", pa.string()),
            ("text", pa.string()),
            ("dim", pa.int32()),
            ("vector", pa.list_(pa.float32(), D)),
        ]
    )
    rot = None
    if model_change:
        rot, _ = np.linalg.qr(np.random.default_rng(7).standard_normal((D, D)))
        rot = rot.astype(np.float32)

    def table(ids: list[str], texts: list[str], dims: np.ndarray, vecs: np.ndarray) -> pa.Table:
        flat = pa.array(vecs.reshape(-1), pa.float32())
        return pa.table(
            {
                "id": ids,
                "text": texts,
                "dim": pa.array(dims, pa.int32()),
                "vector": pa.FixedSizeListArray.from_arrays(flat, D),
            },
            schema=schema,
        )

    wo, wn = pq.ParquetWriter(old_p, schema), pq.ParquetWriter(new_p, schema)
    # (row groups of one block: 100 MB of vectors each)
    for start in range(0, n, BLOCK):
        m = min(BLOCK, n - start)
        ks = np.arange(start, start + m)
        vo = old_block(start, m)
        wo.write_table(
            table([f"o{k}" for k in ks], [text_of(int(k)) for k in ks], np.full(m, D, np.int32), vo)
        )
        vn = vo.copy() if rot is None else vo @ rot
        texts = [text_of(int(k)) for k in ks]
        ids = [f"n{k}" for k in ks]  # a reindex renumbers every id
        dims = np.full(m, D, np.int32)
        if rot is None and start == 0:
            shifted = vo[SHIFT_AT - 1 : SHIFT_AT + SHIFT_LEN - 1].copy()
            vn[SHIFT_AT : SHIFT_AT + SHIFT_LEN] = shifted
            rng = np.random.default_rng(99)
            for k in MOVED:
                vn[k] = rng.standard_normal(D)
            for k in ZERO:
                vn[k] = 0.0
            for k in NAN:
                vn[k] = np.nan
            for k in MISSING:
                dims[k] = 0
            for k in WRONG_DIM:
                dims[k] = D // 2
            for k in CHANGED:
                texts[k] = text_of(k) + " (edited)"
                ids[k] = f"o{k}"  # keeps its old id: a changed text
                vn[k] = rng.standard_normal(D)
            for k in DUPS:
                texts[k] = text_of(k + 100)
                vn[k] = vo[k + 100]
            keep = np.ones(m, dtype=bool)
            keep[list(REMOVED)] = False
            sel = np.flatnonzero(keep)
            ids, texts = [ids[i] for i in sel], [texts[i] for i in sel]
            dims, vn = dims[sel], vn[sel]
        wn.write_table(table(ids, texts, dims, vn))
    add = np.random.default_rng(5).standard_normal((ADDED, D), dtype=np.float32)
    wn.write_table(
        table(
            [f"new{k}" for k in range(ADDED)],
            [f"added text {k}" for k in range(ADDED)],
            np.full(ADDED, D, np.int32),
            add,
        )
    )
    wo.close()
    wn.close()
    return old_p, new_p


class StreamedParquet:
    """A read-only store over a bench Parquet file, one row group at a time."""

    has_exact = False

    def __init__(self, path: Path) -> None:
        import pyarrow.parquet as pq

        self.path = path
        self.spec = f"bench-parquet:{path.name}"
        self._meta = pq.ParquetFile(path).metadata

    def info(self):  # type: ignore[no-untyped-def]
        from indexcheck.stores.base import StoreInfo

        return StoreInfo("bench", self._meta.num_rows, D, "cosine", "cos", True, False)

    def fingerprint(self) -> str:
        return str(self.path)

    def iter_vectors(self, batch: int = 1000) -> Iterator[object]:
        import pyarrow.parquet as pq

        from indexcheck.stores.base import VectorBatch

        # pre_buffer=False: pyarrow would otherwise cache every row group it is asked for
        f = pq.ParquetFile(self.path, pre_buffer=False)
        for rb in f.iter_batches(batch_size=batch):
            vec = rb.column("vector").flatten().to_numpy(zero_copy_only=False)
            yield VectorBatch(
                rb.column("id").to_pylist(),
                vec.reshape(len(rb), D).astype(np.float32, copy=False),
                rb.column("dim").to_numpy().astype(np.int32),
                rb.column("text").to_pylist(),
            )

    def close(self) -> None:
        return None


def child(old_p: str, new_p: str) -> None:
    from indexcheck.core.diff_index import diff_index

    t0 = time.perf_counter()
    r = diff_index(StreamedParquet(Path(old_p)), StreamedParquet(Path(new_p)))
    wall = time.perf_counter() - t0
    by: dict[str, dict[str, str]] = {}
    for c in r.chunks:
        by.setdefault(c.status, {})[str(c.id if c.id is not None else c.old_id)] = str(
            c.holds_vector_of
        )
    out = {
        "wall": wall,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "compared": r.compared,
        "counts": dict(r.counts),
        "rows": by,
    }
    print(json.dumps(out))


def verify(res: dict, model_change: bool) -> list[str]:
    """The planted faults that were not found as planted."""
    rows, bad = res["rows"], []
    if model_change:
        if res["counts"].get("model_change", 0) < res["compared"] * 0.99:
            bad.append("model_change")
        return bad

    def want(status: str, ks: range, idfmt: str = "n{}") -> None:
        got = rows.get(status, {})
        if any(idfmt.format(k) not in got for k in ks):
            bad.append(status)

    want("shift", range(SHIFT_AT, SHIFT_AT + SHIFT_LEN))
    shift = rows.get("shift", {})
    if any(shift.get(f"n{k}") != f"n{k - 1}" for k in range(SHIFT_AT, SHIFT_AT + SHIFT_LEN)):
        bad.append("shift holds_vector_of")
    want("vector_changed", MOVED)
    want("zero_vector", ZERO)
    want("non_finite", NAN)
    want("missing_vector", MISSING)
    want("dimension_mismatch", WRONG_DIM)
    want("removed", REMOVED, "o{}")
    want("changed", CHANGED, "o{}")
    want("added", range(ADDED), "new{}")
    if res["counts"].get("duplicate_text") != len(DUPS):
        bad.append("duplicate_text")
    return bad


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="200000,2000000")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/indexcheck-bench-diff"))
    ap.add_argument("--child", nargs=2)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    args.dir.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    runs = [(n, False) for n in sizes] + [(sizes[0], True)]
    rss: dict[int, float] = {}
    failed = False
    print(f"{'pair':>16} {'wall s':>8} {'peak RSS MB':>12} {'compared/s':>12}  faults")
    for n, model in runs:
        t0 = time.perf_counter()
        old_p, new_p = write_pair(args.dir, n, model)
        gen = time.perf_counter() - t0
        cmd = [sys.executable, __file__, "--child", str(old_p), str(new_p)]
        res = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        missing = verify(res, model)
        failed |= bool(missing)
        if not model:
            rss[n] = res["rss_mb"]
        label = f"{n:,}{' model' if model else ''}"
        print(
            f"{label:>16} {res['wall']:8.1f} {res['rss_mb']:12.0f} "
            f"{res['compared'] / res['wall']:12,.0f}  "
            f"{'all found' if not missing else 'NOT FOUND: ' + ', '.join(missing)}"
            f"  (data written in {gen:.0f}s; counts {res['counts']})"
        )
    ratio = rss[max(rss)] / rss[min(rss)]
    print(f"RSS({max(rss):,}) / RSS({min(rss):,}) = {ratio:.2f} (must be <= 2)")
    if failed or ratio > 2:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
