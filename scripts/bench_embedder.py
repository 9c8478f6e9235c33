"""Benchmark the default embedder: short sentences per second, OpenVINO vs onnxruntime.

The baseline is onnxruntime's CPU provider on the same pinned model file, in the same run;
the figure that matters is the ratio. Also prints the minimum cosine between the two.

    .venv/bin/python scripts/bench_embedder.py [--n 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import random
import time

import numpy as np

from indexcheck.embedders.onnx_minilm import MiniLMEmbedder

WORDS = (
    "library card renew loan hold fine account room event digital ebook printer wifi laptop "
    "study quiet children branch hours holiday desk staff return overdue museum pass map"
).split()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rng = random.Random(0)
    texts = [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 12))) + "." for _ in range(args.n)
    ]
    print(f"{args.n} short sentences, best of {args.repeat}; load {os.getloadavg()[0]:.2f}")
    rates, vectors = {}, {}
    for runtime in ("onnxruntime", "openvino"):
        e = MiniLMEmbedder(runtime=runtime)
        e.embed(texts[:64])  # warm-up
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            vectors[runtime] = e.embed(texts)
            best = min(best, time.perf_counter() - t0)
        rates[runtime] = args.n / best
        tokens = e.stats.tokens / max(1, e.stats.texts)
        print(f"{e.runtime:>16}: {rates[runtime]:7.0f} sentences/s ({tokens:.1f} tokens each)")
    cos = (vectors["openvino"] * vectors["onnxruntime"]).sum(axis=1)
    print(
        f"openvino / onnxruntime = {rates['openvino'] / rates['onnxruntime']:.2f}x; "
        f"min cosine between them {float(np.min(cos)):.6f}"
    )


if __name__ == "__main__":
    main()
