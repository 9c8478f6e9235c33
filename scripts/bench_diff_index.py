"""Benchmark diff-index through the CLI and the shipped ``parquet:`` store, beside DuckDB.

Each old/new pair is written as two Parquet files block by block (never whole in memory):
``id``, ``text``, ``vector`` (list<float32>; a missing vector is null, a wrong-length one
shorter). Planted in every new index: renumbered ids, a positional shift run, moved
vectors, zero / NaN / missing / wrong-length vectors, added, removed and changed texts,
repeated texts; plus, at the smallest size, a pair rebuilt with another model (a random
rotation). Then, in the same run and on the same files, each in its own process under
``/usr/bin/time -v`` (wall time, peak RSS):

- ``indexcheck diff-index --old parquet:OLD --new parquet:NEW --workdir W --json OUT``:
  the shipped command and store, no reader written for the benchmark (the id maps are
  rebuilt, never reused from a cache); the script fails unless every planted fault is
  found with its status;
- the DuckDB anchor: one query joining the two files on the text and counting the pairs
  whose ``array_cosine_similarity`` is under 0.999;
- the floor: reading both files once with pyarrow ``iter_batches``.

Before the three, the pair's files are read once, untimed, so that each run starts from a
warm page cache (the machine evicts files read minutes before; unwarmed, the first command
timed on a pair paid that read alone). The three run ``--repeat`` times (3 by default),
interleaved, and the median run of each is printed with the spread of the walls: the
machine is shared, and one run of either command moved by 20-40% from one to the next.

It prints the ratios diff-index / anchor and diff-index / floor, the CPU time (user +
system) of diff-index and of the anchor and their ratio, the spill at its largest
(sampled) against the input files, RSS(largest) / RSS(smallest) (target <= 1.3), and the
1-minute load average (the machine is shared).

    .venv/bin/python scripts/bench_diff_index.py [--sizes 400000,1600000] [--dir /tmp/x]
        [--no-model] [--dim 384] [--repeat 3] [--text-bytes 1024]

``--text-bytes`` pads every text to about that many bytes, as real chunks are (0.5-2 KB); by
default the texts are about 45 bytes, which flatters any per-byte cost of the text keys.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

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


#: --text-bytes: each text padded to about this many bytes (0: the short texts, ~45 bytes)
TEXT_BYTES = 0
_FILLER = (
    "The library lends books, ebooks and rooms; a card is renewed at the desk or online, and a "
    "fine is waived for the first late return of the year. "
)


def text_of(k: int) -> str:
    head = f"chunk {k}: a paragraph about topic {k % 997}"
    if TEXT_BYTES <= len(head):
        return head
    body = (_FILLER * (TEXT_BYTES // len(_FILLER) + 1))[: TEXT_BYTES - len(head) - 8]
    return f"{head}. {body} ({k})"


def old_block(start: int, n: int) -> np.ndarray:
    return np.random.default_rng(start).standard_normal((n, D), dtype=np.float32)


def write_pair(folder: Path, n: int, model_change: bool = False) -> tuple[Path, Path]:
    """Write old.parquet and new.parquet (id, text, vector) block by block."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    tag = f"{n}{'-model' if model_change else ''}{'' if D == 384 else f'-d{D}'}"
    tag += f"-t{TEXT_BYTES}" if TEXT_BYTES else ""
    old_p, new_p = folder / f"old-{tag}.parquet", folder / f"new-{tag}.parquet"
    if old_p.exists() and new_p.exists():
        return old_p, new_p
    schema = pa.schema(
        [("id", pa.string()), ("text", pa.string()), ("vector", pa.list_(pa.float32()))]
    )
    rot = None
    if model_change:
        rot, _ = np.linalg.qr(np.random.default_rng(7).standard_normal((D, D)))
        rot = rot.astype(np.float32)

    def table(ids: list[str], texts: list[str], dims: np.ndarray, vecs: np.ndarray) -> pa.Table:
        # dims: the stored length of each row (0: a null vector, under D: a short one)
        keep = np.arange(D)[None, :] < dims[:, None]
        offsets = pa.array(np.concatenate([[0], np.cumsum(dims)]).astype(np.int32))
        vector = pa.ListArray.from_arrays(
            offsets, pa.array(vecs[keep], pa.float32()), mask=pa.array(dims == 0)
        )
        return pa.table({"id": ids, "text": texts, "vector": vector}, schema=schema)

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


def timed(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str, float]:
    """(wall s, peak RSS MB, stdout, CPU s) of ``args`` run under /usr/bin/time -v (CPU:
    user + system, which the other jobs on a shared machine inflate less than the wall)."""
    done = subprocess.run(["/usr/bin/time", "-v", *args], capture_output=True, text=True, env=env)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", done.stderr)
    if rss is None or wall is None or done.returncode not in (0, 1):
        raise SystemExit(f"{args[:3]} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    h, m, sec = wall.groups()
    cpu = sum(
        float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", done.stderr)
    )
    seconds = int(h or 0) * 3600 + int(m) * 60 + float(sec)
    return seconds, int(rss.group(1)) / 1024, done.stdout, cpu


ANCHOR = """
import sys
import duckdb
o, n, d = sys.argv[1], sys.argv[2], int(sys.argv[3])
q = (
    f"SELECT count(*) FROM read_parquet('{o}') o JOIN read_parquet('{n}') n ON o.text = n.text "
    f"WHERE len(o.vector) = {d} AND len(n.vector) = {d} AND "
    f"array_cosine_similarity(o.vector::FLOAT[{d}], n.vector::FLOAT[{d}]) < 0.999"
)
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
print(con.execute(q).fetchone()[0])
"""

FLOOR = """
import sys
import pyarrow.parquet as pq
rows = 0
for path in sys.argv[1:]:
    for rb in pq.ParquetFile(path, pre_buffer=False).iter_batches(batch_size=16384):
        rows += rb.num_rows
print(rows)
"""


class DiskWatch:
    """The largest size a folder reaches while a command runs (sampled every 0.2 s)."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.peak, self._stop = folder, 0, threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            size = 0
            for root, _, files in os.walk(self.folder):
                for f in files:
                    try:
                        size += os.path.getsize(os.path.join(root, f))
                    except OSError:
                        pass
            self.peak = max(self.peak, size)

    def __enter__(self) -> DiskWatch:
        self._t.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._t.join()


def run_diff(folder: Path, old_p: Path, new_p: Path) -> tuple[float, float, int, dict, float]:
    """(wall, RSS MB, spill peak bytes, result, CPU s) of the CLI's diff-index on the pair."""
    exe = Path(sys.executable).with_name("indexcheck")
    work = folder / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    out = folder / "diff.json"
    args = [str(exe), "diff-index", "--old", f"parquet:{old_p}", "--new", f"parquet:{new_p}"]
    args += ["--workdir", str(work), "--json", str(out)]
    cache = folder / "cache"
    shutil.rmtree(cache, ignore_errors=True)  # the id maps are built in the run, not reused
    env = {**os.environ, "INDEXCHECK_CACHE_DIR": str(cache)}
    with DiskWatch(work) as disk:
        wall, rss, _, cpu = timed(args, env)
    shutil.rmtree(work, ignore_errors=True)
    res = json.loads(out.read_text())
    by: dict[str, dict[str, str]] = {}
    for c in res["chunks"]:
        key = str(c["id"] if c["id"] is not None else c["old_id"])
        by.setdefault(c["status"], {})[key] = str(c["holds_vector_of"])
    summary = {"compared": res["compared"], "counts": res["counts"], "rows": by}
    return wall, rss, disk.peak, summary, cpu


def warm(*paths: Path) -> None:
    """Read the files once, untimed: every timed run starts from a warm page cache (this
    machine's memory reclaim evicts files read minutes before, and the first command timed
    on a pair would pay that read alone)."""
    buf = bytearray(1 << 22)
    for path in paths:
        with path.open("rb", buffering=0) as f:
            while f.readinto(buf):
                pass


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


def _median(runs: list[Any]) -> Any:
    """The run of median wall time (its other figures with it)."""
    return sorted(runs, key=lambda r: r[0])[len(runs) // 2]


def main() -> None:
    global D, TEXT_BYTES
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="400000,1600000")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/indexcheck-bench-diff"))
    ap.add_argument("--no-model", action="store_true", help="skip the model-change pair")
    ap.add_argument("--dim", type=int, default=384, help="vector length (default 384)")
    ap.add_argument(
        "--text-bytes", type=int, default=0,
        help="pad each text to about this many bytes, as real chunks are (default: ~45)",
    )  # fmt: skip
    ap.add_argument(
        "--repeat", type=int, default=3,
        help="runs of each command, interleaved; the medians are printed (default 3)",
    )  # fmt: skip
    args = ap.parse_args()
    D = args.dim
    TEXT_BYTES = args.text_bytes
    if not Path("/usr/bin/time").exists():
        raise SystemExit("needs /usr/bin/time (Debian: apt-get install -y time)")
    args.dir.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    runs = [(n, False) for n in sizes] + ([] if args.no_model else [(sizes[0], True)])
    rss: dict[int, float] = {}
    failed = False
    py = sys.executable
    from importlib.metadata import version

    # the anchor's speed is its DuckDB's: name the versions the figures were measured with
    print(", ".join(f"{m} {version(m)}" for m in ("duckdb", "pyarrow", "numpy")))
    print(
        f"{'pair':>16} {'diff s':>7} {'RSS MB':>7} {'duckdb s':>8} {'RSS MB':>7} "
        f"{'floor s':>7} {'x duckdb':>8} {'x floor':>7} {'spill/in':>8} {'load':>5}  faults"
    )
    for n, model in runs:
        t0 = time.perf_counter()
        old_p, new_p = write_pair(args.dir, n, model)
        gen = time.perf_counter() - t0
        warm(old_p, new_p)
        load = os.getloadavg()[0]
        diffs, anchors, floors = [], [], []
        for _ in range(max(1, args.repeat)):  # interleaved: each sees the machine the same
            diffs.append(run_diff(args.dir, old_p, new_p))
            anchors.append(timed([py, "-c", ANCHOR, str(old_p), str(new_p), str(D)]))
            floors.append(timed([py, "-c", FLOOR, str(old_p), str(new_p)]))
        walls = sorted(r[0] for r in diffs)
        a_walls = sorted(r[0] for r in anchors)
        wall, mem, spill, res, cpu = _median(diffs)
        a_wall, a_mem, a_out, a_cpu = _median(anchors)
        f_wall = _median(floors)[0]
        load = max(load, os.getloadavg()[0])
        inputs = old_p.stat().st_size + new_p.stat().st_size
        missing = verify(res, model)
        failed |= bool(missing)
        if not model:
            rss[n] = mem
        label = f"{n:,}{' model' if model else ''}"
        print(
            f"{label:>16} {wall:7.1f} {mem:7.0f} {a_wall:8.1f} {a_mem:7.0f} {f_wall:7.1f} "
            f"{wall / a_wall:8.2f} {wall / f_wall:7.2f} {spill / inputs:8.2f} {load:5.1f}  "
            f"{'all found' if not missing else 'NOT FOUND: ' + ', '.join(missing)}"
            f"  (CPU s: diff-index {cpu:.1f}, duckdb {a_cpu:.1f}, x {cpu / a_cpu:.2f}; "
            f"duckdb: {a_out.strip()} under 0.999; data written in {gen:.0f}s; "
            f"counts {res['counts']}; medians of {len(walls)} runs: diff-index "
            f"{walls[0]:.1f}-{walls[-1]:.1f} s, duckdb {a_walls[0]:.1f}-{a_walls[-1]:.1f} s)",
            flush=True,
        )
    if len(rss) > 1:
        ratio = rss[max(rss)] / rss[min(rss)]
        print(f"RSS({max(rss):,}) / RSS({min(rss):,}) = {ratio:.2f} (target <= 1.3)")
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
