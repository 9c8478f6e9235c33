"""A hash embedder that can be made slow, for runs stopped from outside while they embed:
``--embedder py:tests.emulators.slow_embedder:SLOW``. ``INDEXCHECK_TEST_SLOW`` holds the
seconds each batch of 10 texts takes (0 when unset); ``INDEXCHECK_TEST_MARK``, when set, is
a file touched once the first batch has been embedded (the run is then well under way)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from indexcheck.testing import HashEmbedder


class SlowEmbedder(HashEmbedder):
    batch_size = 10

    def _embed_batch(self, texts: list[Any]) -> tuple[np.ndarray, int]:
        out = super()._embed_batch(texts)
        mark = os.environ.get("INDEXCHECK_TEST_MARK")
        if mark:
            Path(mark).touch()
        time.sleep(float(os.environ.get("INDEXCHECK_TEST_SLOW", "0")))
        return out


SLOW = SlowEmbedder(32)
