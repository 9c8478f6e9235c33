"""``py:`` embedder hooks that misbehave, for the bad-input and pay-once tests.

``KILL``: a 32-d hash embedder that appends ``len(texts)`` to ``$HOSTILE_LOG`` per call and,
on call number ``$HOSTILE_KILL_AT`` (1-based; unset: never), SIGKILLs its own process before
answering, as an OOM killer or a cancelled CI job would.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import numpy as np

from indexcheck.testing import HashEmbedder

_HASH = HashEmbedder(32)


def exit_zero(texts: list[str]) -> Any:
    """A hook that ends the process 'successfully' instead of returning vectors."""
    sys.exit(0)


class _Killer:
    dimension = 32
    model_id = "hash:32"  # the same vectors as indexcheck.testing:HASH32

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        log = os.environ.get("HOSTILE_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(f"{len(texts)}\n")
        kill_at = os.environ.get("HOSTILE_KILL_AT")
        if kill_at and self.calls == int(kill_at):
            os.kill(os.getpid(), signal.SIGKILL)
        return _HASH.embed(texts)


KILL = _Killer()


def nan_vectors(texts: list[str]) -> Any:
    """A hook whose model is broken: every vector is NaN."""
    return np.full((len(texts), 32), np.nan, dtype=np.float32)


class _Slow:
    """HASH32's vectors, 20 ms per call; or with ``$HOSTILE_BARRIER`` (a folder) and
    ``$HOSTILE_WRITERS`` (n), the first call waits until n processes have made it there, so
    runs started together really write at once, and none sleeps after."""

    dimension = 32
    model_id = "hash:32"

    def __init__(self) -> None:
        self.waited = False

    def embed(self, texts: list[str]) -> np.ndarray:
        import time

        barrier, n = os.environ.get("HOSTILE_BARRIER"), os.environ.get("HOSTILE_WRITERS")
        if barrier and n and not self.waited:
            self.waited = True
            open(os.path.join(barrier, str(os.getpid())), "w").close()
            deadline = time.monotonic() + 60
            while len(os.listdir(barrier)) < int(n) and time.monotonic() < deadline:
                time.sleep(0.01)
        else:
            time.sleep(0.02)
        return _HASH.embed(texts)


SLOW = _Slow()
