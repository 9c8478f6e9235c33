"""On-disk embedding cache keyed by (model id, xxh3-128 of the exact text): never by position.

This is the fix for the failure indexcheck was born from: a cache filled by position
hands a chunk its neighbour's vector as soon as one duplicate text is skipped. Here
each vector is stored and looked up under the hash of its own text, and duplicates in
one call are embedded once and handed to every row that carries that text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..corpus import text_hash
from .base import Embedder, EmbedStats


class EmbeddingCache:
    """A sqlite file of float32 vectors keyed by (model_id, text hash)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path))
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, hash TEXT NOT NULL, "
            "dim INTEGER NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (model, hash))"
        )

    def get_many(self, model_id: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors already cached for ``hashes`` under ``model_id``: hash -> float32 (d,)."""
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(hashes))
        for start in range(0, len(unique), 500):
            part = unique[start : start + 500]
            marks = ",".join("?" * len(part))
            rows = self._db.execute(
                f"SELECT hash, vec FROM vectors WHERE model = ? AND hash IN ({marks})",
                [model_id, *part],
            )
            for h, blob in rows:
                found[h] = np.frombuffer(blob, dtype=np.float32).copy()
        return found

    def put_many(self, model_id: str, items: dict[str, np.ndarray]) -> None:
        """Store float32 vectors under (model_id, hash)."""
        self._db.executemany(
            "INSERT OR REPLACE INTO vectors (model, hash, dim, vec) VALUES (?, ?, ?, ?)",
            [
                (model_id, h, int(v.shape[0]), np.asarray(v, np.float32).tobytes())
                for h, v in items.items()
            ],
        )
        self._db.commit()

    def close(self) -> None:
        self._db.close()


class CachedEmbedder:
    """Wraps an :class:`Embedder`; embeds each distinct text once and caches by hash.

    ``stats`` is the wrapped embedder's (requests and tokens actually spent);
    ``hits`` counts texts served from the cache.
    """

    def __init__(self, inner: Embedder, cache: EmbeddingCache | None) -> None:
        self.inner = inner
        self.cache = cache
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.hits = 0

    @property
    def stats(self) -> EmbedStats:
        return self.inner.stats

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` -> float32 (n, d); row i is always the vector of texts[i]."""
        known, todo = self.split(texts)
        fresh = self.inner.embed(todo) if todo else None
        return self.merge(texts, known, todo, fresh)

    def split(self, texts: Sequence[str]) -> tuple[dict[str, np.ndarray], list[str]]:
        """(cached vectors by hash, the distinct texts still to embed, in first-seen order)."""
        known = (
            self.cache.get_many(self.model_id, [text_hash(t) for t in texts]) if self.cache else {}
        )
        first_of: dict[str, str] = {}
        for t in texts:
            h = text_hash(t)
            if h not in known and h not in first_of:
                first_of[h] = t
        return known, list(first_of.values())

    def merge(
        self,
        texts: Sequence[str],
        known: dict[str, np.ndarray],
        todo: list[str],
        fresh: np.ndarray | None,
    ) -> np.ndarray:
        """Cache ``fresh`` (the vectors of ``todo``, committed at once) and assemble rows."""
        if todo and fresh is not None:
            new = dict(zip((text_hash(t) for t in todo), fresh, strict=True))
            if self.cache is not None:
                self.cache.put_many(self.model_id, new)
            known.update(new)
        hashes = [text_hash(t) for t in texts]
        self.hits += len(hashes) - len(todo)
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for i, h in enumerate(hashes):
            out[i] = known[h]
        return out
