"""The hashing ``py:`` embedder of :mod:`.ray_hash_embedder`, counted: each call, on a Ray
worker or on the driver (the cache audit), first appends how many texts it got to the file
``INDEXCHECK_TEST_COUNTER_FILE`` names, then sleeps ``INDEXCHECK_TEST_EMBED_SLEEP`` seconds
(so that a test can stop a run halfway)."""

from __future__ import annotations

import os
import time

import numpy as np

from tests.engines.ray_hash_embedder import D
from tests.engines.ray_hash_embedder import embed as hashed


def embed(texts: list[str]) -> np.ndarray:
    path = os.environ.get("INDEXCHECK_TEST_COUNTER_FILE")
    if path:
        with open(path, "a") as f:
            f.write(f"{len(texts)}\n")
        time.sleep(float(os.environ.get("INDEXCHECK_TEST_EMBED_SLEEP", "0")))
    return hashed(texts)


embed.dimension = D  # type: ignore[attr-defined]  (no probe when the embedder is opened)


def counted(path: os.PathLike[str] | str) -> int:
    """How many texts were embedded with ``path`` as the counter file."""
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        return sum(int(x) for x in f.read().split())
