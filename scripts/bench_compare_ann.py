"""Benchmark compare-ann's exact search and the full command on synthetic clustered data.

Prints, for N vectors (default 1,000,000 x 384 float32, unit length, drawn around 1000
cluster centres) and 1000 queries from the same clusters, k=10:

- ground-truth time of indexcheck's streamed exact search (``exact_topk`` over blocks of
  the matrix held in memory) divided by ``faiss.IndexFlatIP.search`` on the same matrix
  (target: at most 1.2), and divided by a plain numpy baseline (matmul + argpartition);
- peak resident memory of the streamed exact search in a subprocess that reads the
  vectors block by block from a ``.npy`` file (never the whole array), against the size of
  the raw vectors and of one block (target: bounded by the block size);
- the full ``compare-ann`` wall time (CLI command, in process) on a local FAISS HNSW index.

    .venv/bin/python scripts/bench_compare_ann.py [--n 1000000] [--queries 1000] [--k 10]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from indexcheck.commands.kit.caches import npy_blocks
from indexcheck.commands.kit.exact import BLOCK_BYTES, block_rows, exact_topk


def clustered(n: int, d: int, seed: int, centres: np.ndarray) -> np.ndarray:
    """n unit float32 vectors around random ``centres`` (c, d), made in chunks."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, d), dtype=np.float32)
    for s in range(0, n, 100_000):
        m = min(100_000, n - s)
        x = centres[rng.integers(0, len(centres), m)]
        x += rng.standard_normal((m, d), dtype=np.float32) * np.float32(0.6 / np.sqrt(d))
        out[s : s + m] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def best_of(runs: int, fn):  # type: ignore[no-untyped-def]
    best, result = float("inf"), None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def numpy_topk(x: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
    """Baseline: Q @ X.T in query chunks, argpartition, sort the k."""
    out = np.empty((len(q), k), dtype=np.int64)
    for s in range(0, len(q), 100):
        sims = q[s : s + 100] @ x.T
        part = np.argpartition(-sims, k, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(sims, part, 1), axis=1)
        out[s : s + 100] = np.take_along_axis(part, order, 1)
    return out


def rss_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def child(npy: str, queries: str, k: int) -> None:
    """Streamed exact search reading ``npy`` block by block; prints RSS figures as JSON."""
    import faiss

    q = np.load(queries)
    faiss.knn(q[:2], q[:10], 1)  # load BLAS and faiss before the baseline reading
    before = rss_kib("VmRSS")
    rows = block_rows(q.shape[1])

    def blocks():  # type: ignore[no-untyped-def]
        start = 0
        for vecs in npy_blocks(Path(npy), rows):
            m = len(vecs)
            yield [f"v{i}" for i in range(start, start + m)], vecs
            del vecs  # hold one block at a time
            start += m

    t0 = time.perf_counter()
    exact_topk(blocks(), q, k, "dot")
    secs = time.perf_counter() - t0
    print(
        json.dumps(
            {
                "before_kib": before,
                "peak_kib": rss_kib("VmHWM"),
                "seconds": secs,
                "rows_per_block": rows,
            }
        )
    )


def time_exact(x: np.ndarray, q: np.ndarray, ids: list[str], k: int, runs: int) -> None:
    """indexcheck's streamed exact search against faiss flat and numpy, same matrix."""
    import faiss

    n, d = x.shape
    rows = block_rows(d)

    def ours():  # type: ignore[no-untyped-def]
        blocks = ((ids[s : s + rows], x[s : s + rows]) for s in range(0, n, rows))
        return exact_topk(blocks, q, k, "dot")

    flat = faiss.IndexFlatIP(d)
    flat.add(x)
    # interleaved, so a change in the machine's load hits both alike; best of each
    pairs = []
    for _ in range(runs):
        tf, (Df, If) = best_of(1, lambda: flat.search(q, k))
        to, (Do, Io) = best_of(1, ours)
        pairs.append((to, tf))
    flat.reset()
    t_ours, t_faiss = min(p[0] for p in pairs), min(p[1] for p in pairs)
    t_numpy, In = best_of(1, lambda: numpy_topk(x, q, k))
    agree = float((Io == np.asarray(ids, dtype=object)[If]).mean())
    print(
        f"exact search: indexcheck exact_topk {t_ours:.2f}s ({-(-n // rows)} blocks of "
        f"{rows} rows), faiss IndexFlatIP.search {t_faiss:.2f}s, numpy matmul+argpartition "
        f"{t_numpy:.2f}s"
    )
    print(
        f"  ratio indexcheck / faiss IndexFlatIP = {t_ours / t_faiss:.3f} (target <= 1.2; "
        f"per interleaved pair: {', '.join(f'{a / b:.2f}' for a, b in pairs)})"
    )
    print(f"  ratio indexcheck / numpy baseline    = {t_ours / t_numpy:.3f}")
    print(
        f"  same ids as faiss: {100 * agree:.2f}%, max score difference "
        f"{float(np.abs(Do - Df).max()):.2e}; numpy ids agree with faiss "
        f"{100 * float((In == If).mean()):.2f}%"
    )


def measure_memory(npy: Path, qpath: Path, n: int, d: int, k: int) -> None:
    """Run the streamed exact search in a subprocess reading ``npy``; print its RSS."""
    out = subprocess.run(
        [sys.executable, __file__, "--k", str(k), "--child", str(npy), str(qpath)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    m = json.loads(out.strip().splitlines()[-1])
    raw = n * d * 4
    block = m["rows_per_block"] * d * 4
    delta = (m["peak_kib"] - m["before_kib"]) * 1024
    print(
        f"streamed exact search from {npy.name} in a subprocess ({m['seconds']:.2f}s): "
        f"peak RSS {m['peak_kib'] / 1024:.0f} MiB, {m['before_kib'] / 1024:.0f} MiB before "
        f"the search, growth {delta / 2**20:.0f} MiB"
    )
    print(
        f"  raw vectors {raw / 2**20:.0f} MiB; one block {m['rows_per_block']} rows = "
        f"{block / 2**20:.0f} MiB (BLOCK_BYTES {BLOCK_BYTES / 2**20:.0f} MiB); "
        f"growth / block = {delta / block:.2f}, growth / raw = {delta / raw:.3f}"
    )


def time_command(folder: Path, npy: Path, ids: list[str], args: argparse.Namespace) -> None:
    """Build a FAISS HNSW folder from ``npy`` and time the whole compare-ann command."""
    from click.testing import CliRunner

    from indexcheck.cli.compare_ann import compare_ann_cmd
    from indexcheck.stores.faiss.store import write_faiss_folder

    t0 = time.perf_counter()
    write_faiss_folder(folder, ids, np.load(npy, mmap_mode="r"), index_factory=args.hnsw)
    build = time.perf_counter() - t0
    report = folder.parent / "r.json"
    k = args.k
    fetch = ",".join(str(f) for f in (k, 2 * k, 5 * k))
    t0 = time.perf_counter()
    res = CliRunner().invoke(
        compare_ann_cmd,
        [
            "--store",
            f"faiss:{folder}?efSearch=16",
            "--queries",
            str(args.queries),
            "-k",
            str(k),
            "--fetch",
            fetch,
            "--json",
            str(report),
            "--no-vector-cache",
        ],
    )
    wall = time.perf_counter() - t0
    if res.exit_code not in (0, 1):
        raise SystemExit(f"compare-ann failed: {res.output}")
    r = json.loads(report.read_text())
    rates = ", ".join(
        f"fetch {row['fetch']}: miss {100 * row['best_miss_rate']:.1f}% "
        f"recall {100 * row['recall_at_k']:.1f}%"
        for row in r["by_fetch"]
    )
    print(
        f"compare-ann on faiss {args.hnsw} (efSearch=16, built in {build:.0f}s): wall "
        f"{wall:.1f}s for {args.queries} sampled queries, k={k}, fetch {fetch} "
        f"(exact ground truth {r['ground_truth_seconds']:.1f}s, exit {res.exit_code})"
    )
    print(f"  {rates}; recommended fetch: {r['recommended_fetch']}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=384)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3, help="timings keep the best of these")
    ap.add_argument("--hnsw", default="HNSW16", help="faiss index_factory for the last part")
    ap.add_argument("--child", nargs=2, metavar=("NPY", "QUERIES"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.k)
        return
    import faiss

    n, d, k = args.n, args.d, args.k
    print(
        f"data: {n} x {d} float32 ({n * d * 4 / 2**30:.2f} GiB) around 1000 clusters, "
        f"{args.queries} queries, k={k}, faiss {faiss.__version__}, "
        f"{faiss.omp_get_max_threads()} threads"
    )
    centres = np.random.default_rng(0).standard_normal((1000, d)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    x = clustered(n, d, 1, centres)
    q = clustered(args.queries, d, 2, centres)
    ids = [f"v{i}" for i in range(n)]
    time_exact(x, q, ids, k, args.runs)
    with tempfile.TemporaryDirectory() as tmp:
        npy, qpath = Path(tmp) / "vectors.npy", Path(tmp) / "queries.npy"
        np.save(npy, x)
        np.save(qpath, q)
        del x
        measure_memory(npy, qpath, n, d, k)
        time_command(Path(tmp) / "hnsw", npy, ids, args)


if __name__ == "__main__":
    main()
