"""Benchmark ``indexcheck repair`` against a full re-embed, in the same run.

Builds N chunks (default 2,000) with repeated boilerplate texts (``--repeat-share``, 5% by
default), embeds them once with ``indexcheck embed`` (the full re-embed: the baseline,
timed), then writes a shifted copy of that index as the seed's positional-cache bug would
have stored it (a repeated text takes its first copy's vector and the position into the
fresh embeddings does not advance). Then, each in its own process through the CLI:

- ``indexcheck repair --no-check`` on the shifted Parquet index (the repair alone);
- ``indexcheck check-index --all`` on the repaired copy (the proof repair runs by default);

and prints wall times, texts sent to the model (from each JSON manifest) and the ratios
repair / full re-embed. The copy's vectors are compared with the clean ones: the
reused ones bit for bit, the embedded ones to the model's own batch-to-batch noise.

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


def seed_bug(texts: list[str], clean: np.ndarray) -> np.ndarray:
    """float32 (n, d): what the positional cache stored, from the clean vectors."""
    out = np.empty_like(clean)
    first: dict[str, int] = {}
    position = 0
    for p, t in enumerate(texts):
        if t in first:
            out[p] = out[first[t]]
            continue
        first[t] = p
        out[p] = clean[position]
        position += 1
    return out


def cli(*args: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "INDEXCHECK_QUIET": "1"}
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "indexcheck", *args], env=env, check=False,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    return time.perf_counter() - t


def texts_sent(path: Path) -> int:
    doc = json.loads(path.read_text())
    return int(doc["manifest"].get("embedding", {}).get("texts", 0))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeat-share", type=float, default=0.05)
    ap.add_argument("--embedder", default="minilm")
    a = ap.parse_args()
    ids, texts = corpus(a.n, a.repeat_share)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        with (d / "chunks.jsonl").open("w") as f:
            for i, t in zip(ids, texts, strict=True):
                f.write(json.dumps({"id": i, "text": t}) + "\n")
        full = cli("embed", "--chunks", str(d / "chunks.jsonl"), "--embedder", a.embedder,
                   "--out", str(d / "clean.parquet"), "--json", str(d / "embed.json"))  # fmt: skip
        clean_t = pq.read_table(d / "clean.parquet")
        clean = np.stack(clean_t.column("vector").to_numpy(zero_copy_only=False)).astype(np.float32)
        shifted = seed_bug(texts, clean)
        vec = pa.FixedSizeListArray.from_arrays(pa.array(shifted.reshape(-1)), shifted.shape[1])
        pq.write_table(pa.table({"id": ids, "vector": vec, "text": texts}), d / "shifted.parquet")
        repair = cli("repair", "--store", f"parquet:{d / 'shifted.parquet'}", "--embedder",
                     a.embedder, "--out", str(d / "fixed"), "--no-check",
                     "--json", str(d / "repair.json"))  # fmt: skip
        proof = cli("check-index", "--all", "--store", f"parquet:{d / 'fixed' / 'vectors.parquet'}",
                    "--embedder", a.embedder, "--json", str(d / "proof.json"))  # fmt: skip
        got = json.loads((d / "repair.json").read_text())
        proved = json.loads((d / "proof.json").read_text())
        fixed = pq.read_table(d / "fixed" / "vectors.parquet")
        fv = np.stack(fixed.column("vector").to_numpy(zero_copy_only=False)).astype(np.float32)
        embedded = np.zeros(len(ids), bool)
        at = {i: p for p, i in enumerate(ids)}
        for row in got["rows"]:
            if row["way"] in ("embedded", "failed_verification"):
                embedded[at[row["id"]]] = True
        gap = np.abs(fv - clean).max(axis=1)
        reused_gap = float(gap[~embedded].max())
        embedded_gap = float(gap[embedded].max()) if embedded.any() else 0.0
        full_texts, repair_texts = texts_sent(d / "embed.json"), texts_sent(d / "repair.json")
        proof_texts = texts_sent(d / "proof.json")
    distinct = len(set(texts))
    print(f"chunks {a.n} ({distinct} distinct texts), embedder {a.embedder}")
    print(f"repair: {got['headline']}; reading {got['reading']}")
    print(f"full re-embed (indexcheck embed): {full:7.1f} s, {full_texts} texts")
    share = repair_texts / max(1, full_texts)
    print(f"repair --no-check:                {repair:7.1f} s, {repair_texts} texts")
    print(
        f"  ratio to the full re-embed: {repair / full:.3f} of the time, {share:.3f} of the texts"
    )
    print(f"check-index --all on the copy:    {proof:7.1f} s, {proof_texts} texts")
    print(f"  passes: {proved['ok']}; repair + proof: {(repair + proof) / full:.3f} of the time")
    print(f"copy vs clean vectors, max |difference|: reused {reused_gap:.2e}, embedded "
          f"{embedded_gap:.2e} (the model's output depends on its batch)")  # fmt: skip


if __name__ == "__main__":
    main()
