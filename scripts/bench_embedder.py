"""Benchmark the default embedder: OpenVINO vs onnxruntime vs the default (``auto``) choice,
on short sentences and on paragraph-length texts (256 tokens, the model's maximum).

Every figure is measured in the same run; the ones that matter are the ratios: OpenVINO /
onnxruntime per text length, and default / faster runtime (the target is >= 0.95). The
default's calibration runs in a fresh cache folder, so this also times the first-use cost.
Also prints the minimum cosine between the two runtimes.

    .venv/bin/python scripts/bench_embedder.py [--n 2000] [--paragraphs 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time

import numpy as np

from indexcheck.embedders.minilm.model import MiniLMEmbedder

WORDS = (
    "library card renew loan hold fine account room event digital ebook printer wifi laptop "
    "study quiet children branch hours holiday desk staff return overdue museum pass map"
).split()


def rate(e: MiniLMEmbedder, texts: list[str], repeat: int) -> tuple[float, np.ndarray]:
    e.embed(texts[:16])  # warm-up
    best, vecs = float("inf"), np.zeros(0)
    for _ in range(repeat):
        t0 = time.perf_counter()
        vecs = e.embed(texts)
        best = min(best, time.perf_counter() - t0)
    return len(texts) / best, vecs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--paragraphs", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rng = random.Random(0)
    sets = {
        "short": [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 12))) + "."
            for _ in range(args.n)
        ],
        "paragraph": [
            " ".join(rng.choice(WORDS) for _ in range(300)) + "." for _ in range(args.paragraphs)
        ],
    }
    print(
        f"{args.n} short sentences, {args.paragraphs} paragraphs (256 tokens), best of "
        f"{args.repeat}; load {os.getloadavg()[0]:.2f}"
    )
    rates: dict[str, dict[str, float]] = {}
    vectors: dict[str, np.ndarray] = {}
    embedders = {r: MiniLMEmbedder(runtime=r) for r in ("onnxruntime", "openvino")}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["INDEXCHECK_CACHE_DIR"] = tmp
        os.environ.pop("INDEXCHECK_MINILM_RUNTIME", None)
        t0 = time.perf_counter()
        auto = MiniLMEmbedder()
        first_use = time.perf_counter() - t0
    embedders["default"] = auto
    for name, e in embedders.items():
        rates[name] = {}
        for kind, texts in sets.items():
            rates[name][kind], v = rate(e, texts, args.repeat)
            if kind == "short":
                vectors[name] = v
        print(
            f"{name:>12} ({e.runtime:>14}, {e.threads} threads): "
            f"{rates[name]['short']:7.0f} sentences/s  {rates[name]['paragraph']:6.1f} paragraphs/s"
        )
    print(
        f"default chose {auto.runtime} (first use incl. calibration {first_use:.1f}s; "
        f"calibration rates {auto.choice.get('rates')})"
    )
    for kind in sets:
        ov, ort = rates["openvino"][kind], rates["onnxruntime"][kind]
        fast = max(ov, ort)
        print(
            f"{kind:>10}: openvino / onnxruntime = {ov / ort:.2f}x; "
            f"default / faster = {rates['default'][kind] / fast:.2f}x"
        )
    cos = (vectors["openvino"] * vectors["onnxruntime"]).sum(axis=1)
    print(f"min cosine between the runtimes {float(np.min(cos)):.6f}")


if __name__ == "__main__":
    main()
