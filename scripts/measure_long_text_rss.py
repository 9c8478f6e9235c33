"""Peak RSS of the default embedder for one very long chunk text (issue 12, memory).

Usage: python scripts/measure_long_text_rss.py MEGABYTES
Prints the peak RSS after loading the model and after embedding one text of MEGABYTES
million characters, the seconds taken, and the cosine between that text's vector and its
40-sentence prefix's (1.0: the model reads only the first 256 tokens of either).
"""

from __future__ import annotations

import resource
import sys
import time

from indexcheck.embedders.minilm.model import MiniLMEmbedder


def peak_mb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


def main() -> None:
    megabytes = float(sys.argv[1]) if len(sys.argv) > 1 else 50.0
    embedder = MiniLMEmbedder()
    loaded = peak_mb()
    sentence = "vaccinate puppies at eight weeks, then yearly boosters. "
    n = int(megabytes * 1e6)
    text = (sentence * (n // len(sentence) + 1))[:n]
    t0 = time.perf_counter()
    v = embedder.embed([text, sentence * 40])
    print(
        f"{megabytes:g} MB text: peak RSS {peak_mb()} MB (model loaded: {loaded} MB), "
        f"{time.perf_counter() - t0:.2f} s, cosine with its prefix {float(v[0] @ v[1]):.6f}"
    )


if __name__ == "__main__":
    main()
