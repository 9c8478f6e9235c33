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
from ..errors import DataFileError
from .base import Embedder, EmbedStats


def open_cache_file(path: Path) -> sqlite3.Connection:
    """The ``--cache`` SQLite file (embeddings and judgements share it), created with its
    folder when missing; a folder or an unopenable path is bad input (exit 2)."""
    if path.is_dir():
        raise DataFileError(f"--cache {path} is a folder; pass a file path")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return sqlite3.connect(str(path), timeout=30.0)
    except (OSError, sqlite3.Error) as exc:
        raise DataFileError(f"--cache {path} cannot be opened: {exc}") from None


class EmbeddingCache:
    """A sqlite file of float32 vectors keyed by (model_id, text hash).

    WAL mode with a busy timeout, so concurrent runs may share one file; every
    :meth:`put_many` commits, so what was embedded survives a kill or a failed request.
    A file that is not such a cache is refused (exit 2) before any work.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db = open_cache_file(self.path)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, hash TEXT NOT NULL, "
                "dim INTEGER NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (model, hash))"
            )
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(vectors)")}
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise DataFileError(
                f"--cache {self.path} is not an indexcheck embedding cache ({exc}); "
                "pass a new file path, or delete this file if it is a stale cache"
            ) from None
        if not {"model", "hash", "dim", "vec"} <= columns:
            self._db.close()
            raise DataFileError(
                f"--cache {self.path} is a SQLite file with another 'vectors' table; "
                "pass a new file path for the embedding cache"
            )

    def check_dimension(self, model_id: str, dimension: int) -> None:
        """Refuse (exit 2) a cache holding rows of another dimension for ``model_id``."""
        try:
            rows = self._db.execute(
                "SELECT DISTINCT dim FROM vectors WHERE model = ? AND dim != ? LIMIT 3",
                (model_id, dimension),
            ).fetchall()
            bad_blob = self._db.execute(
                "SELECT 1 FROM vectors WHERE model = ? AND length(vec) != 4 * dim LIMIT 1",
                (model_id,),
            ).fetchone()
        except sqlite3.DatabaseError as exc:
            raise DataFileError(f"--cache {self.path} cannot be read: {exc}") from None
        if rows:
            dims = ", ".join(str(r[0]) for r in rows)
            raise DataFileError(
                f"--cache {self.path} holds {model_id} vectors of dimension {dims}, but the "
                f"embedder gives {dimension}; pass another --cache file or delete this one"
            )
        if bad_blob:
            raise DataFileError(
                f"--cache {self.path} holds damaged {model_id} vectors; delete the file"
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
        """Store float32 vectors under (model_id, hash), committed before returning."""
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors (model, hash, dim, vec) VALUES (?, ?, ?, ?)",
                [
                    (model_id, h, int(v.shape[0]), np.asarray(v, np.float32).tobytes())
                    for h, v in items.items()
                ],
            )

    def close(self) -> None:
        self._db.close()


class CachedEmbedder:
    """Wraps an :class:`Embedder`; embeds each distinct text once and caches by hash.

    Misses are embedded in groups of the inner embedder's ``cache_commit_every`` (default:
    its ``batch_size``) texts and each group is committed as it arrives, so a run killed
    or stopped by a rate limit loses at most one group, and a rerun requests only the rest.

    ``stats`` is the wrapped embedder's (requests and tokens actually spent);
    ``hits`` counts texts served from the cache.
    """

    def __init__(self, inner: Embedder, cache: EmbeddingCache | None) -> None:
        self.inner = inner
        self.cache = cache
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.hits = 0
        if cache is not None:
            try:
                cache.check_dimension(self.model_id, self.dimension)
            except DataFileError:
                cache.close()  # leave no -wal/-shm files beside a file we refuse
                raise

    @property
    def stats(self) -> EmbedStats:
        return self.inner.stats

    @property
    def truncated(self) -> set[str]:
        """Hashes of texts the inner embedder cut to what its model reads (may be empty)."""
        return set(getattr(self.inner, "truncated", set()))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` -> float32 (n, d); row i is always the vector of texts[i].

        Misses are embedded and committed to the cache group by group, so a run killed or
        stopped by a rate limit keeps what it paid for."""
        known, todo = self.split(texts)
        step = max(1, len(todo) if self.cache is None else self._commit_every())
        for start in range(0, len(todo), step):
            part = todo[start : start + step]
            self.put(known, part, self.inner.embed(part))
        return self.rows(texts, known, len(todo))

    def split(self, texts: Sequence[str]) -> tuple[dict[str, np.ndarray], list[str]]:
        """(cached vectors by hash, the distinct texts still to embed, in first-seen order)."""
        hashes = [text_hash(t) for t in texts]
        known = self.cache.get_many(self.model_id, hashes) if self.cache else {}
        first_of: dict[str, str] = {}
        for h, t in zip(hashes, texts, strict=True):
            if h not in known and h not in first_of:
                first_of[h] = t
        return known, list(first_of.values())

    def put(self, known: dict[str, np.ndarray], todo: Sequence[str], fresh: np.ndarray) -> None:
        """Add ``fresh`` (float32 (len(todo), d), the vectors of ``todo``) to ``known`` and
        commit them to the cache."""
        new = dict(zip((text_hash(t) for t in todo), fresh, strict=True))
        if self.cache is not None:
            self.cache.put_many(self.model_id, new)
        known.update(new)

    def merge(
        self,
        texts: Sequence[str],
        known: dict[str, np.ndarray],
        todo: list[str],
        fresh: np.ndarray | None,
    ) -> np.ndarray:
        """Cache ``fresh`` (the vectors of ``todo``, embedded elsewhere) and assemble rows."""
        if todo and fresh is not None:
            self.put(known, todo, fresh)
        return self.rows(texts, known, len(todo))

    def rows(self, texts: Sequence[str], known: dict[str, np.ndarray], missed: int) -> np.ndarray:
        """float32 (len(texts), d): row i is the vector of texts[i], from ``known``."""
        self.hits += len(texts) - missed
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i] = known[text_hash(t)]
        return out

    def _commit_every(self) -> int:
        every = getattr(self.inner, "cache_commit_every", None)
        every = every or getattr(self.inner, "batch_size", None) or 64
        return max(1, int(every))
