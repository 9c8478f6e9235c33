"""Benchmark check-index --all with the default embedder.

Prints, for N chunks (default 10,000) in a local FAISS index:
- wall time, and the share spent outside embedding (target: under 10%);
- store requests (fetch + iterate calls) per 1000 chunks, for --all and for a sample;
- the baseline in the same run: embedding the same texts alone (the unavoidable cost),
  as a ratio check-index / embedding-only.

    .venv/bin/python scripts/bench_check_index.py [--n 10000]
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--sample", type=int, default=100)
    args = ap.parse_args()
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
