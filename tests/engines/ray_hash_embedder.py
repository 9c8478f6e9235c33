"""A hashing ``py:`` embedder for the node-loss test: on a Ray worker (not the driver), the
process that embeds its ``INDEXCHECK_TEST_LOSE_AT``-th block writes its node's id to
``INDEXCHECK_TEST_LOSE_MARKER`` (once, the first to get there) and then holds that block
until the test has removed its node."""

from __future__ import annotations

import hashlib
import os
import time

import numpy as np

D = 32
calls = 0


def embed(texts: list[str]) -> np.ndarray:
    global calls
    calls += 1
    marker = os.environ.get("INDEXCHECK_TEST_LOSE_MARKER")
    at = int(os.environ.get("INDEXCHECK_TEST_LOSE_AT", "0"))
    if marker and calls == at and str(os.getpid()) != os.environ.get("INDEXCHECK_TEST_DRIVER_PID"):
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            pass
        else:
            import ray

            os.write(fd, ray.get_runtime_context().get_node_id().encode())
            os.close(fd)
            time.sleep(60)  # the node is removed under this block
    out = np.empty((len(texts), D), np.float32)
    for i, t in enumerate(texts):
        seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little")
        out[i] = np.random.default_rng(seed).standard_normal(D)
    return out
