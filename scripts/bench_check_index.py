"""Benchmark check-index --all with the default embedder.

Prints, for N chunks (default 10,000) in a local FAISS index:
- wall time, and the share spent outside embedding (target: under 10%);
- store requests (fetch + iterate calls) per 1000 chunks, for --all and for a sample;
- the baseline in the same run: embedding the same texts alone (the unavoidable cost),
  as a ratio check-index / embedding-only.

    .venv/bin/python scripts/bench_check_index.py [--n 10000]

With ``--all`` it benchmarks the streamed ``check-index --all`` instead, through the CLI
and the shipped stores only: ``indexcheck check-index --all --store parquet:...`` (then
``faiss:`` and ``lancedb:`` folders built from the same vectors) with the fast
deterministic ``--embedder py:bench_stream_parts:fast``, each run in its own process under
``/usr/bin/time -v``, at 200k and 800k chunks (``--sizes``): wall time, time outside
embedding (from the JSON manifest; target <= 10%), peak RSS and RSS(4n)/RSS(n) per store
(target <= 1.3), the peak size of the run's scratch files (the fresh vectors and the
per-chunk ids, keys and text hashes, under ``TMPDIR``, polled), with the 1-minute load
average. Beside them, the floor: reading both Parquet inputs once with pyarrow, and the
share outside embedding it alone would give, read before the embedder or beside it (with an
embedder this fast, both are over 10%, so the target can only hold with a real model).

    .venv/bin/python scripts/bench_check_index.py --all [--sizes 200000,800000]
        [--stores parquet,faiss,lancedb] [--embedder minilm]

``--embedder minilm`` runs the same checks with the default model, the stored vectors written
by ``indexcheck embed --embedder minilm`` from the same chunks first (so every chunk passes).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from indexcheck.commands.check_index import check_index
from indexcheck.embedders.cache import CachedEmbedder
from indexcheck.embedders.minilm.model import MiniLMEmbedder
from indexcheck.inputs.corpus import corpus_from_pairs
from indexcheck.stores import open_store
from indexcheck.stores.faiss.store import write_faiss_folder

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


HERE = Path(__file__).resolve().parent


def _env(folder: Path | None = None) -> dict[str, str]:
    """The environment of a child process: the project and these scripts importable; with
    ``folder``, its cache folder (the runtime choice, the id maps) and no embedding cache
    a check could be served from."""
    import os

    env = {**os.environ, "PYTHONPATH": f"{HERE.parent}{os.pathsep}{HERE}"}
    if folder is not None:
        env["INDEXCHECK_CACHE_DIR"] = str(folder / "cache")
        env.pop("INDEXCHECK_CACHE", None)
    return env


def _cli() -> str:
    import sys

    return str(Path(sys.executable).with_name("indexcheck"))


def _build(*args: str) -> None:
    import subprocess
    import sys

    subprocess.run(
        [sys.executable, str(HERE / "bench_stream_parts.py"), *args], env=_env(), check=True
    )


def _disk_bytes(folder: Path) -> int:
    """Bytes the files under ``folder`` take on disk (allocated blocks)."""
    import os

    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_blocks * 512
            except FileNotFoundError:  # removed while walking
                pass
    return total


#: the near-free deterministic embedder of ``--all`` (1.5 us a chunk)
FAST = "py:bench_stream_parts:fast"


def _embed(folder: Path, embedder: str) -> None:
    """Replace ``vectors.parquet`` with the vectors ``embedder`` gives the chunks, written by
    ``indexcheck embed`` (so a check with that embedder passes)."""
    import subprocess

    env = _env(folder)  # the same runtime choice as the checks'
    out = folder / "vectors.model.parquet"
    out.unlink(missing_ok=True)
    subprocess.run(
        [_cli(), "embed", "--chunks", str(folder / "chunks.parquet"), "--embedder", embedder,
         "--out", str(out)], env=env, check=True,
    )  # fmt: skip
    out.replace(folder / "vectors.parquet")
    (folder / "embedded-by").write_text(embedder)


def _check(folder: Path, spec: str, embedder: str = FAST) -> dict:  # type: ignore[type-arg]
    """One ``indexcheck check-index --all`` under /usr/bin/time -v: wall, RSS, manifest,
    and the peak size of its scratch folder (``TMPDIR``, polled every half second)."""
    import json
    import os
    import re
    import subprocess

    env = {**_env(folder), "INDEXCHECK_QUIET": "1"}
    scratch = folder / "scratch"
    scratch.mkdir(exist_ok=True)
    env["TMPDIR"] = str(scratch)
    out = folder / "check.json"
    args = [_cli(), "check-index", "--all", "--store", spec, "--chunks",
            str(folder / "chunks.parquet"), "--embedder", embedder,
            "--json", str(out)]  # fmt: skip
    load = os.getloadavg()[0]
    proc = subprocess.Popen(
        ["/usr/bin/time", "-v", *args], env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    spill = 0
    while True:
        try:
            stdout, stderr = proc.communicate(timeout=0.5)
            break
        except subprocess.TimeoutExpired:
            spill = max(spill, _disk_bytes(scratch))
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr)
    if proc.returncode not in (0, 1) or rss is None:
        raise SystemExit(f"check-index failed ({proc.returncode}): {stderr[-3000:]}")
    m = json.loads(out.read_text())["manifest"]
    inputs = sum((folder / f).stat().st_size for f in ("vectors.parquet", "chunks.parquet"))
    return {
        "wall": float(m["wall_seconds"]),
        "embed": float(m["embedding"]["seconds"]),
        "rss": int(rss.group(1)) / 1024,
        "ok": proc.returncode == 0,
        "load": max(load, os.getloadavg()[0]),
        "spill": spill / 2**20,
        "spill_ratio": spill / inputs,
    }


FLOOR = """
import sys, time
import pyarrow.parquet as pq
t = time.perf_counter()
for path in sys.argv[1:]:
    for rb in pq.ParquetFile(path, pre_buffer=False).iter_batches(batch_size=16384):
        pass
print(time.perf_counter() - t)
"""


def _floor(folder: Path) -> float:
    """Seconds to read both Parquet inputs once with pyarrow (the best of three). No check
    reads less, so the least share of its wall time outside embedding is floor / (floor +
    embedding) for a reader that reads and then embeds, and (floor - embedding) / floor for
    one that reads all of it beside the embedder (when reading takes longer)."""
    import subprocess
    import sys

    files = [str(folder / "vectors.parquet"), str(folder / "chunks.parquet")]
    runs = [
        float(subprocess.run([sys.executable, "-c", FLOOR, *files], check=True,
                             capture_output=True, text=True).stdout)
        for _ in range(3)
    ]  # fmt: skip
    return min(runs)


def bench_all(sizes: list[int], workdir: Path, stores: list[str], embedder: str = FAST) -> None:
    if not Path("/usr/bin/time").exists():
        raise SystemExit("needs /usr/bin/time (Debian: apt-get install -y time)")
    rss: dict[str, dict[int, float]] = {s: {} for s in stores}
    tag = "" if embedder == FAST else "-" + "".join(c if c.isalnum() else "_" for c in embedder)
    for n in sizes:
        folder = workdir / f"n{n}{tag}"
        if not (folder / "vectors.parquet").exists():
            _build("build", str(folder), str(n))
        by = folder / "embedded-by"
        if embedder != FAST and not (by.exists() and by.read_text() == embedder):
            _embed(folder, embedder)  # (again, after a run stopped before it wrote the mark)
        specs = {
            "parquet": f"parquet:{folder / 'vectors.parquet'}",
            "faiss": f"faiss:{folder / 'faiss'}",
            "lancedb": f"lancedb:{folder / 'lancedb'}?table=chunks",
        }
        if "faiss" in stores and not (folder / "faiss").exists():
            _build("faiss", str(folder))
        if "lancedb" in stores and not (folder / "lancedb").exists():
            _build("lancedb", str(folder))
        floor = _floor(folder)
        for name in stores:
            r = _check(folder, specs[name], embedder)
            rss[name][n] = r["rss"]
            outside = 100 * (r["wall"] - r["embed"]) / r["wall"]
            print(
                f"--all {name:8} n={n:>9,}: ok={r['ok']} wall {r['wall']:6.1f}s, embedding "
                f"{r['embed']:5.1f}s, outside embedding {outside:3.0f}%, peak RSS "
                f"{r['rss']:5.0f} MB, spill on disk {r['spill']:,.0f} MB ({r['spill_ratio']:.2f}x "
                f"the Parquet inputs) (load {r['load']:.1f}); reading the Parquet inputs "
                f"once takes {floor:.1f}s, so no reader gets under "
                f"{100 * floor / (floor + r['embed']):.0f}% outside embedding reading first, "
                f"{100 * max(0.0, floor - r['embed']) / max(floor, r['embed']):.0f}% reading "
                "beside the embedder",
                flush=True,
            )
    if len(sizes) > 1:
        lo, hi = min(sizes), max(sizes)
        for name in stores:
            print(f"{name}: RSS({hi:,}) / RSS({lo:,}) = {rss[name][hi] / rss[name][lo]:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--sample", type=int, default=100)
    ap.add_argument("--all", dest="stream", action="store_true", help="streamed --all bench")
    ap.add_argument("--sizes", default="200000,800000")
    ap.add_argument("--stores", default="parquet,faiss,lancedb")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "ic-bench")
    ap.add_argument(
        "--embedder",
        default=FAST,
        help="--all: the embedder (default the fast one; 'minilm': the stored vectors are "
        "written by indexcheck embed with it first)",
    )
    args = ap.parse_args()
    if args.stream:
        sizes = [int(x) for x in args.sizes.split(",")]
        bench_all(sizes, args.workdir, args.stores.split(","), args.embedder)
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
