"""A near-free deterministic embedder the streamed-check memory tests pass to the CLI as
``py:tests.fast_hooks:FAST64``, so that the check's own memory, not the model's, shows."""

from __future__ import annotations

import numpy as np
import xxhash


class FastEmbedder:
    """A text's vector is the sum of two rows of a fixed table picked by its xxh3-64."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.model_id = f"fast-table:{dimension}"
        self._table = np.random.default_rng(0).standard_normal((1 << 12, dimension))
        self._table = self._table.astype(np.float32)

    def embed(self, texts: list[str]) -> np.ndarray:
        h = np.fromiter((xxhash.xxh3_64_intdigest(t.encode()) for t in texts), np.uint64)
        a = (h & np.uint64(0xFFF)).astype(np.int64)
        b = ((h >> np.uint64(12)) & np.uint64(0xFFF)).astype(np.int64)
        return self._table[a] + 0.7 * self._table[b]


FAST16 = FastEmbedder(16)
FAST64 = FastEmbedder(64)
