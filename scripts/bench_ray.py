"""Benchmark ``check-index --all --engine ray`` against the local engine, through the CLI.

For N chunks (default 200,000) in the shipped Parquet store, with the stored vectors
written by ``indexcheck embed`` with the same embedder (default: the default model), so
every chunk passes:

- the wall time of ``--engine local`` and of ``--engine ray`` (a local Ray cluster the run
  starts itself, on this machine's cores) and their ratio (target: at most 1.2x);
- the driver's peak RSS (VmHWM of the ``indexcheck`` process, polled from /proc: the Ray
  workers and the object store are other processes) at each of ``--rss-sizes`` with
  ``--engine ray``, and the ratio largest / smallest (flat: near 1).

    .venv/bin/python scripts/bench_ray.py [--n 200000] [--rss-sizes 200000,800000]
        [--embedder minilm] [--rss-embedder minilm]

``--rss-embedder fast`` measures the driver's memory with the near-free deterministic
embedder (the driver's memory does not depend on the model; the run is then minutes, not
hours, at 800,000 chunks on two cores).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from bench_check_index import FAST, _build, _cli, _embed, _env

MODEL = "minilm"


def _folder(workdir: Path, n: int, embedder: str) -> Path:
    """The chunks and the vectors ``embedder`` gives them, built once per size."""
    tag = "fast" if embedder == FAST else "".join(c if c.isalnum() else "_" for c in embedder)
    folder = workdir / f"n{n}-{tag}"
    if not (folder / "vectors.parquet").exists():
        _build("build", str(folder), str(n))
    by = folder / "embedded-by"
    if embedder != FAST and not (by.exists() and by.read_text() == embedder):
        _embed(folder, embedder)
    return folder


def _peak_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def run(folder: Path, engine: str, embedder: str) -> dict[str, float]:
    """One ``indexcheck check-index --all`` in its own process: wall seconds (outside),
    the manifest's embedding seconds, the driver's peak RSS in MB and its CPU seconds
    (polled: the last reading before it exits)."""
    env = {**_env(folder), "INDEXCHECK_QUIET": "1", "TMPDIR": str(folder / "scratch")}
    env.pop("RAY_ADDRESS", None)  # a new local cluster, started and stopped by the run
    (folder / "scratch").mkdir(exist_ok=True)
    out = folder / f"check-{engine}.json"
    args = [_cli(), "check-index", "--all", "--store", f"parquet:{folder / 'vectors.parquet'}",
            "--chunks", str(folder / "chunks.parquet"), "--embedder", embedder,
            "--engine", engine, "--json", str(out)]  # fmt: skip
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak, cpu = 0, 0.0
    while proc.poll() is None:
        peak = max(peak, _peak_kb(proc.pid))
        cpu = max(cpu, _cpu_seconds(proc.pid))
        time.sleep(0.2)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"check-index --engine {engine} exited {proc.returncode}: {err[-3000:]}")
    m = json.loads(out.read_text())["manifest"]
    return {"wall": wall, "embed": float(m["embedding"]["seconds"]), "rss": peak / 1024,
            "cpu": cpu}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--rss-sizes", default="200000,800000")
    ap.add_argument("--embedder", default=MODEL)
    ap.add_argument("--rss-embedder", default=None, help="'fast': the near-free embedder")
    ap.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "ic-bench-ray")
    a = ap.parse_args()
    embedder = FAST if a.embedder == "fast" else a.embedder
    rss_embedder = embedder if a.rss_embedder is None else a.rss_embedder
    rss_embedder = FAST if rss_embedder == "fast" else rss_embedder
    print(f"cores {os.cpu_count()}, load {os.getloadavg()[0]:.1f}", flush=True)
    if a.n:
        folder = _folder(a.workdir, a.n, embedder)
        local = run(folder, "local", embedder)
        ray = run(folder, "ray", embedder)
        print(
            f"n={a.n:,} {embedder}: local {local['wall']:.1f}s (embedding "
            f"{local['embed']:.1f}s, {a.n / local['wall']:,.0f} chunks/s), ray "
            f"{ray['wall']:.1f}s ({a.n / ray['wall']:,.0f} chunks/s): ray / local = "
            f"{ray['wall'] / local['wall']:.2f}x; driver peak RSS local {local['rss']:.0f} MB, "
            f"ray {ray['rss']:.0f} MB; driver CPU local {local['cpu']:.1f}s, ray "
            f"{ray['cpu']:.1f}s (load {os.getloadavg()[0]:.1f})",
            flush=True,
        )
    sizes = [int(x) for x in a.rss_sizes.split(",") if x]
    peaks = {}
    for n in sizes:
        r = run(_folder(a.workdir, n, rss_embedder), "ray", rss_embedder)
        peaks[n] = r["rss"]
        print(
            f"n={n:,} {rss_embedder} --engine ray: wall {r['wall']:.1f}s, driver peak RSS "
            f"{r['rss']:.0f} MB, driver CPU {r['cpu']:.1f}s ({n / max(r['cpu'], 1e-9):,.0f} "
            f"chunks per driver CPU second) (load {os.getloadavg()[0]:.1f})",
            flush=True,
        )
    if len(sizes) > 1:
        lo, hi = min(sizes), max(sizes)
        print(f"driver RSS({hi:,}) / RSS({lo:,}) = {peaks[hi] / peaks[lo]:.2f}")


if __name__ == "__main__":
    main()
