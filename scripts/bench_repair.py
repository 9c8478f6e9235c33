"""Benchmark ``indexcheck repair`` against a full re-embed, in the same run.

Builds N chunks (default 2,000) with repeated boilerplate texts (``--repeat-share``, 5% by
default), embeds them once with ``indexcheck embed`` (the full re-embed: the baseline,
timed), then writes a shifted copy of that index as the seed's positional-cache bug would
have stored it (a repeated text takes its first copy's vector and the position into the
fresh embeddings does not advance). Then, each in its own process through the CLI:

- ``indexcheck repair --no-check`` on the shifted Parquet index (the repair alone);
- ``indexcheck check-index --all`` on the repaired copy (the proof repair runs by default);

and prints wall times, peak RSS of each process, texts sent to the model (from each JSON
manifest) and the two ratios repair / full re-embed (wall time and embeddings). The copy's
vectors are compared with the clean ones, a row group at a time: the reused ones bit for
bit, the embedded ones to the model's own batch-to-batch noise.

Sizes up to ``--n 1000000`` run in bounded memory here (the corpus, the shifted index and
the comparison are built and read a block at a time); the default model embeds a few dozen
texts a second on a small CPU, so a million chunks with it is a day's run: ``--embedder
py:tests.fast_hooks:FAST64`` (a near-free table lookup) measures everything but the model.
``--no-proof`` skips the check-index --all of the copy.

    .venv/bin/python scripts/bench_repair.py [--n 2000] [--repeat-share 0.05] [--embedder minilm]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
BOILER = (
    "Need more help? Open an issue on the tracker or ask on the forum.",
    "This package is released under the MIT licence; see LICENSE for details.",
    "Part of the toolkit family: install the meta-package to get every member.",
    "Security issues: please report them privately to the maintainers.",
)
#: rows written and compared at once
BLOCK = 65536
WORDS = "parser client cache stream retry schema async wrapper bindings thumbnail".split()


def corpus(n: int, share: float, seed: int = 0) -> tuple[list[str], list[str]]:
    """``n`` ids and texts: distinct package descriptions, and about ``share`` of them
    boilerplate that repeats (the first copies early, the rest anywhere)."""
    rng = random.Random(seed)
    texts = []
    for p in range(n):
        if p >= 20 and rng.random() < share:
            texts.append(rng.choice(BOILER))
        elif p in (3, 7, 11, 15):
            texts.append(BOILER[(p - 3) // 4])
        else:
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 40)))
            texts.append(f"Package {p} is {words}. Release {p % 7}.{p % 11}.")
    return [f"chunk-{p:07d}" for p in range(n)], texts


def seed_source(texts: list[str]) -> np.ndarray:
    """int64 (n,): the row of the clean vectors the positional cache stored at each
    position (a repeat takes its first copy's; the position does not advance)."""
    src = np.empty(len(texts), np.int64)
    first: dict[str, int] = {}
    position = 0
    for p, t in enumerate(texts):
        if t in first:
            src[p] = src[first[t]]
            continue
        first[t] = p
        src[p] = position
        position += 1
    return src


def vectors_of(path: Path) -> np.ndarray:
    """float32 (n, d): the ``vector`` column of a Parquet file (its only whole read)."""
    col = pq.read_table(path, columns=["vector"]).column("vector").combine_chunks()
    d = col.type.list_size if hasattr(col.type, "list_size") else len(col[0])
    return np.asarray(col.flatten(), np.float32).reshape(-1, d)


def write_shifted(clean: Path, out: Path, ids: list[str], texts: list[str]) -> None:
    """The shifted index as the positional cache stored it, in row groups."""
    vectors = vectors_of(clean)
    src = seed_source(texts)
    d = vectors.shape[1]
    schema = pa.schema([("id", pa.string()), ("vector", pa.list_(pa.float32(), d)),
                        ("text", pa.string())])  # fmt: skip
    with pq.ParquetWriter(out, schema) as w:
        for lo in range(0, len(ids), BLOCK):
            hi = lo + BLOCK
            flat = pa.array(np.ascontiguousarray(vectors[src[lo:hi]]).reshape(-1))
            vec = pa.FixedSizeListArray.from_arrays(flat, d)
            w.write_table(pa.table({"id": ids[lo:hi], "vector": vec, "text": texts[lo:hi]},
                                   schema=schema))  # fmt: skip


def gaps(fixed: Path, clean: Path) -> tuple[int, int, float]:
    """Rows compared, rows equal to the clean build bit for bit, and the largest
    per-component difference of the others; a row group at a time, in row order."""
    a = pq.ParquetFile(fixed).iter_batches(BLOCK, columns=["vector"])
    b = pq.ParquetFile(clean).iter_batches(BLOCK, columns=["vector"])
    rows = exact = 0
    worst = 0.0
    for x, y in zip(a, b, strict=True):
        d = x.column(0).type.list_size
        fv = np.asarray(x.column(0).flatten(), np.float32).reshape(-1, d)
        cv = np.asarray(y.column(0).flatten(), np.float32).reshape(-1, d)
        gap = np.abs(fv - cv).max(axis=1)
        rows += len(gap)
        exact += int((gap == 0).sum())
        worst = max(worst, float(gap.max()))
    return rows, exact, worst


def cli(*args: str) -> tuple[float, float]:
    """Wall time (s) and peak RSS (MB) of ``indexcheck ARGS`` in a process of its own."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "INDEXCHECK_QUIET": "1"}
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "indexcheck", *args], env=env,
                            stdout=subprocess.DEVNULL)  # fmt: skip
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - t, usage.ru_maxrss / 1024


def texts_sent(path: Path) -> int:
    doc = json.loads(path.read_text())
    return int(doc["manifest"].get("embedding", {}).get("texts", 0))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeat-share", type=float, default=0.05)
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--no-proof", action="store_true", help="skip check-index --all on the copy")
    ap.add_argument("--tmp", default=None, help="folder for the indexes (default: a temp dir)")
    a = ap.parse_args()
    ids, texts = corpus(a.n, a.repeat_share)
    distinct = len(set(texts))
    with tempfile.TemporaryDirectory(dir=a.tmp) as tmp:
        d = Path(tmp)
        with (d / "chunks.jsonl").open("w") as f:
            for i, t in zip(ids, texts, strict=True):
                f.write(json.dumps({"id": i, "text": t}) + "\n")
        full, full_mb = cli("embed", "--chunks", str(d / "chunks.jsonl"), "--embedder",
                            a.embedder, "--out", str(d / "clean.parquet"),
                            "--json", str(d / "embed.json"))  # fmt: skip
        write_shifted(d / "clean.parquet", d / "shifted.parquet", ids, texts)
        del texts
        repair, repair_mb = cli("repair", "--store", f"parquet:{d / 'shifted.parquet'}",
                                "--embedder", a.embedder, "--out", str(d / "fixed"),
                                "--no-check", "--json", str(d / "repair.json"))  # fmt: skip
        got = json.loads((d / "repair.json").read_text())
        proved: dict[str, object] = {}
        proof = proof_mb = 0.0
        if not a.no_proof:
            proof, proof_mb = cli("check-index", "--all", "--store",
                                  f"parquet:{d / 'fixed' / 'vectors.parquet'}", "--embedder",
                                  a.embedder, "--json", str(d / "proof.json"))  # fmt: skip
            proved = json.loads((d / "proof.json").read_text())
        rows, exact, worst = gaps(d / "fixed" / "vectors.parquet", d / "clean.parquet")
        full_texts, repair_texts = texts_sent(d / "embed.json"), texts_sent(d / "repair.json")
        proof_texts = texts_sent(d / "proof.json") if proved else 0
    print(f"chunks {a.n} ({distinct} distinct texts), embedder {a.embedder}")
    print(f"repair: {got['headline']}; reading {got['reading']}")
    print(f"full re-embed (indexcheck embed): {full:8.1f} s, {full_texts} texts, peak RSS "
          f"{full_mb:.0f} MB")  # fmt: skip
    share = repair_texts / max(1, full_texts)
    print(f"repair --no-check:                {repair:8.1f} s, {repair_texts} texts, peak RSS "
          f"{repair_mb:.0f} MB")  # fmt: skip
    print(f"  ratio to the full re-embed: {repair / full:.3f} of the wall time, {share:.4f} of "
          "the embeddings")  # fmt: skip
    if proved:
        print(f"check-index --all on the copy:    {proof:8.1f} s, {proof_texts} texts, peak RSS "
              f"{proof_mb:.0f} MB")  # fmt: skip
        print(f"  passes: {proved['ok']}; repair + proof: {(repair + proof) / full:.3f} of the "
              "wall time")  # fmt: skip
    print(f"copy vs clean vectors: {exact} of {rows} rows equal bit for bit; the others differ "
          f"by at most {worst:.2e} (the model's output depends on its batch)")  # fmt: skip


if __name__ == "__main__":
    main()
