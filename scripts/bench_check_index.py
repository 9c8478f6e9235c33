"""Benchmark check-index --all with the default embedder.

Prints, for N chunks (default 10,000) in a local FAISS index:
- wall time, and the share spent outside embedding (target: under 10%);
- store requests (fetch + iterate calls) per 1000 chunks, for --all and for a sample;
- the baseline in the same run: embedding the same texts alone (the unavoidable cost),
  as a ratio check-index / embedding-only.

    .venv/bin/python scripts/bench_check_index.py [--n 10000]

With ``--all`` it benchmarks the streamed ``check-index --all`` instead, at 200k and 1M
chunks (``--sizes``) with the fast deterministic ``py:`` embedder of
``bench_stream_parts.py`` and a Parquet store read in batches, each size in its own
process: wall time, time outside embedding, peak RSS and the ratio RSS(1M)/RSS(200k)
(target <= 1.5); then Ray (a local 2-CPU cluster) against local on the smallest size, with
the rows of both compared (same statuses, cosines within 1e-6).

    .venv/bin/python scripts/bench_check_index.py --all [--sizes 200000,1000000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from indexcheck.core.check_index import check_index
from indexcheck.corpus import corpus_from_pairs
from indexcheck.embedders.cache import CachedEmbedder
from indexcheck.embedders.onnx_minilm import MiniLMEmbedder
from indexcheck.stores import open_store
from indexcheck.stores.faiss_store import write_faiss_folder

WORDS = (
    "library card renew loan hold fine account room event digital ebook audiobook printer "
    "wifi laptop study quiet children teen adult branch hours holiday closed desk staff "
    "return overdue lost damaged replace membership guest visitor museum pass archive map"
).split()


class Counting:
    """Wraps a store and counts the requests check-index makes."""

    def __init__(self, inner):  # type: ignore[no-untyped-def]
        self.inner = inner
        self.calls = {"fetch": 0, "iter": 0}
        self.spec, self.has_exact = inner.spec, inner.has_exact

    def __getattr__(self, name):  # type: ignore[no-untyped-def]
        return getattr(self.inner, name)

    def fetch(self, ids):  # type: ignore[no-untyped-def]
        self.calls["fetch"] += 1
        return self.inner.fetch(ids)

    def iter_vectors(self, batch=1000):  # type: ignore[no-untyped-def]
        for b in self.inner.iter_vectors(batch):
            self.calls["iter"] += 1
            yield b


def texts_for(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [
        " ".join(rng.choice(WORDS, size=int(rng.integers(8, 16)))) + f" (note {i})."
        for i in range(n)
    ]


def _child(*args: str) -> dict:  # type: ignore[type-arg]
    import json
    import os
    import subprocess
    import sys

    here = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": f"{here.parent}{os.pathsep}{here}", "INDEXCHECK_QUIET": "1"}
    out = subprocess.run(
        [sys.executable, str(here / "bench_stream_parts.py"), *args],
        env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    lines = [x for x in out.stdout.splitlines() if x.startswith("{")]
    return json.loads(lines[-1]) if lines else {}


def bench_all(sizes: list[int], workdir: Path) -> None:
    import pyarrow.parquet as pq

    rss = {}
    for n in sizes:
        folder = workdir / f"n{n}"
        if not (folder / "vectors.parquet").exists():
            _child("build", str(folder), str(n))
        r = _child("run", str(folder), "local")
        rss[n] = r["peak_rss_mb"]
        outside = 100 * (r["wall"] - r["embed_seconds"]) / r["wall"]
        print(
            f"--all n={n}: ok={r['ok']} wall {r['wall']:.1f}s, embedding {r['embed_seconds']:.1f}s"
            f", outside embedding {outside:.0f}% ({1e6 * (r['wall'] - r['embed_seconds']) / n:.0f}"
            f" us/chunk), peak RSS {r['peak_rss_mb']:.0f} MB"
        )
    if len(sizes) > 1:
        lo, hi = min(sizes), max(sizes)
        print(f"RSS({hi}) / RSS({lo}) = {rss[hi] / rss[lo]:.2f} (target <= 1.5)")
    n = min(sizes)
    folder = workdir / f"n{n}"
    local = _child("run", str(folder), "local")
    ray = _child("run", str(folder), "ray")
    a = pq.read_table(folder / "rows-local.parquet")
    b = pq.read_table(folder / "rows-ray.parquet")
    same = a.column("status").equals(b.column("status"))
    dcos = np.nanmax(np.abs(a.column("cosine").to_numpy() - b.column("cosine").to_numpy()))
    print(
        f"ray vs local, n={n}: wall {ray['wall']:.1f}s vs {local['wall']:.1f}s "
        f"(ratio {ray['wall'] / local['wall']:.2f}, 2-CPU local cluster); identical statuses "
        f"{same}, max cosine difference {dcos:.1e}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--sample", type=int, default=100)
    ap.add_argument("--all", dest="stream", action="store_true", help="streamed --all bench")
    ap.add_argument("--sizes", default="200000,1000000")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "ic-bench")
    args = ap.parse_args()
    if args.stream:
        bench_all([int(x) for x in args.sizes.split(",")], args.workdir)
        return
    ids = [f"c{i:06d}" for i in range(args.n)]
    texts = texts_for(args.n)

    base = MiniLMEmbedder()
    t0 = time.perf_counter()
    vectors = base.embed(texts)
    embed_only = time.perf_counter() - t0

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "index"
        write_faiss_folder(folder, ids, vectors)
        corpus = corpus_from_pairs(ids, texts)
        for label, sample in (("--all", None), (f"--sample {args.sample}", args.sample)):
            store = Counting(open_store(f"faiss:{folder}"))
            emb = CachedEmbedder(MiniLMEmbedder(), None)
            t0 = time.perf_counter()
            r = check_index(store, emb, corpus, sample=sample)  # type: ignore[arg-type]
            wall = time.perf_counter() - t0
            inside = emb.stats.seconds
            requests = store.calls["fetch"] + store.calls["iter"]
            print(
                f"{label:>13}: {r.checked} chunks, ok={r.ok}, wall {wall:.2f}s, embedding "
                f"{inside:.2f}s, outside embedding {100 * (wall - inside) / wall:.1f}%, "
                f"store requests {requests} ({1000 * requests / r.checked:.1f} per 1000 chunks)"
            )
            if sample is None:
                print(
                    f"{'baseline':>13}: embedding the same {args.n} texts alone {embed_only:.2f}s"
                    f" ({args.n / embed_only:.0f} texts/s); check-index --all / embedding-only "
                    f"= {wall / embed_only:.2f}"
                )


if __name__ == "__main__":
    main()
