"""On-disk embedding cache keyed by (model id, xxh3-128 of the exact text): never by position.

This is the fix for the failure indexcheck was born from: a cache filled by position
hands a chunk its neighbour's vector as soon as one duplicate text is skipped. Here
each vector is stored and looked up under the hash of its own text, and duplicates in
one call are embedded once and handed to every row that carries that text.

A cache is never trusted blindly: :class:`CachedEmbedder` re-embeds a seeded sample of its
hits (:func:`audit_size`: at least 3, or 1%, at most 1000 per run) and refuses the cache
(exit 2) when one of them differs from its fresh embedding (cosine < 0.9999). A cache filled
by another indexer, or with an index's own stored vectors, under the right model id would
otherwise turn a failing check into a passing one without a single request.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataFileError, OutputError
from ..inputs.corpus import text_hash
from ..output.result_json import picked
from .base import Embedder, EmbedStats
from .cache_file import (
    APPLICATION_ID,
    TRUNCATED_SQL,
    VECTORS_SQL,
    cache_write,
    open_cache_file,
    open_cache_tables,
)


class EmbeddingCache:
    """A sqlite file of float32 vectors keyed by (model_id, text hash).

    WAL mode with a busy timeout, so concurrent runs may share one file; every
    :meth:`put_many` commits, so what was embedded survives a kill or a failed request.
    A file that is not such a cache is refused (exit 2) before any work.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db = open_cache_tables(
            self.path,
            "PRAGMA journal_mode=WAL",
            "PRAGMA synchronous=NORMAL",
            VECTORS_SQL,
            TRUNCATED_SQL,
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
        rows = self._rows("SELECT hash, vec FROM vectors", model_id, hashes)
        return {h: np.frombuffer(blob, dtype=np.float32).copy() for h, blob in rows}

    def put_many(
        self, model_id: str, items: dict[str, np.ndarray], cut: Sequence[str] = ()
    ) -> None:
        """Store float32 vectors under (model_id, hash), and the hashes in ``cut`` as texts
        the model read only in part, committed together before returning."""
        rows = [
            (model_id, h, int(v.shape[0]), np.asarray(v, np.float32).tobytes())
            for h, v in items.items()
        ]
        with cache_write(self.path, "what was embedded before is kept"), self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors (model, hash, dim, vec) VALUES (?, ?, ?, ?)",
                rows,
            )
            self._db.executemany(
                "INSERT OR IGNORE INTO truncated (model, hash) VALUES (?, ?)",
                [(model_id, h) for h in cut],
            )

    def truncated_among(self, model_id: str, hashes: Sequence[str]) -> set[str]:
        """The ``hashes`` recorded as texts ``model_id`` read only in part."""
        return {h for (h,) in self._rows("SELECT hash FROM truncated", model_id, hashes)}

    def _rows(self, select: str, model_id: str, hashes: Sequence[str]) -> Iterator[Any]:
        """``select`` (a table's rows) where the model is ``model_id`` and the hash one of
        ``hashes``, 500 hashes per statement."""
        unique = list(dict.fromkeys(hashes))
        for start in range(0, len(unique), 500):
            part = unique[start : start + 500]
            marks = ",".join("?" * len(part))
            yield from self._db.execute(
                f"{select} WHERE model = ? AND hash IN ({marks})", [model_id, *part]
            )

    def close(self) -> None:
        self._db.close()


#: a cached vector this close to its fresh embedding (cosine) matches it
AUDIT_MIN_COSINE = 0.9999
AUDIT_MIN = 3
AUDIT_SHARE = 0.01
AUDIT_MAX = 1000
AUDIT_SEED = 0


def audit_size(hits: int) -> int:
    """How many of ``hits`` distinct cached texts a run re-embeds: every one up to 3, then
    max(3, ceil(1% of hits)), at most 1000."""
    if hits <= AUDIT_MIN:
        return max(0, hits)
    return min(AUDIT_MAX, max(AUDIT_MIN, math.ceil(hits * AUDIT_SHARE)))


@dataclass
class CacheAudit:
    """What the audit of one run's cache hits sampled, matched and cost (goes in the
    manifest as ``cache_audit``)."""

    hits: int = 0
    sampled: int = 0
    matched: int = 0
    requests: int = 0
    texts: int = 0
    seed: int = AUDIT_SEED
    sampled_hashes: list[str] = field(default_factory=list, repr=False)

    @property
    def mismatched(self) -> int:
        return self.sampled - self.matched

    def to_dict(self) -> dict[str, Any]:
        return picked(self, "hits", "sampled", "matched", "mismatched", "requests", "texts") | {
            "min_cosine": AUDIT_MIN_COSINE,
            "seed": self.seed,
            "rule": f"max({AUDIT_MIN}, {AUDIT_SHARE:.0%} of hits), at most {AUDIT_MAX}",
        }


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine of float32 (n, d) ``a`` and ``b``; 0 where a row has no length."""
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    norms = np.linalg.norm(a64, axis=1) * np.linalg.norm(b64, axis=1)
    dots = np.einsum("ij,ij->i", a64, b64)
    return np.where(norms > 0, dots / np.where(norms > 0, norms, 1.0), 0.0)


class CachedEmbedder:
    """Wraps an :class:`Embedder`; embeds each distinct text once and caches by hash.

    Misses are embedded in groups of the inner embedder's ``cache_commit_every`` (default:
    its ``batch_size``) texts and each group is committed as it arrives, so a run killed
    or stopped by a rate limit loses at most one group, and a rerun requests only the rest.

    ``stats`` is the wrapped embedder's (requests and tokens actually spent, the audit's
    included); ``hits`` counts texts served from the cache; ``audit`` is the
    :class:`CacheAudit` of the hits (shared with :func:`~indexcheck.embedders.for_queries`).
    """

    def __init__(
        self, inner: Embedder, cache: EmbeddingCache | None, audit: CacheAudit | None = None
    ) -> None:
        self.inner = inner
        self.cache = cache
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.hits = 0
        self.audit = audit if audit is not None else CacheAudit()
        self._rng = np.random.default_rng(self.audit.seed)
        self._audited: set[str] = set()
        #: hits the cache recorded as read only in part by the model
        self._cut_hits: set[str] = set()
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
        """Hashes of texts the model reads only in part (may be empty): those the inner
        embedder cut in this run and the cache hits it cut when they were embedded."""
        return set(getattr(self.inner, "truncated", set())) | self._cut_hits

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
            if h not in first_of:
                first_of[h] = t
        if known:
            assert self.cache is not None
            self._cut_hits |= self.cache.truncated_among(self.model_id, list(known))
            self._audit(known, first_of)
        return known, [t for h, t in first_of.items() if h not in known]

    def _audit(self, known: dict[str, np.ndarray], text_of: dict[str, str]) -> None:
        """Re-embed this call's share of the run's audit sample of ``known`` (cached vectors
        by hash; ``text_of`` maps each hash to its text) and refuse the cache on a mismatch."""
        audit = self.audit
        audit.hits += len(known)
        need = audit_size(audit.hits) - audit.sampled
        pool = [h for h in text_of if h in known and h not in self._audited]
        if need <= 0 or not pool:
            return
        picks = sorted(self._rng.choice(len(pool), size=min(need, len(pool)), replace=False))
        chosen = [pool[i] for i in picks]
        before = self.inner.stats.requests, self.inner.stats.texts
        fresh = self.inner.embed([text_of[h] for h in chosen])
        audit.requests += self.inner.stats.requests - before[0]
        audit.texts += self.inner.stats.texts - before[1]
        cos = _cosines(np.stack([known[h] for h in chosen]), fresh)
        self._audited.update(chosen)
        audit.sampled_hashes.extend(chosen)
        audit.sampled += len(chosen)
        good = int(np.count_nonzero(cos >= AUDIT_MIN_COSINE))
        audit.matched += good
        if good < len(chosen):
            path = self.cache.path if self.cache is not None else "?"
            raise DataFileError(
                f"--cache {path}: {len(chosen) - good} of {len(chosen)} cached vectors sampled "
                f"for {self.model_id} do not match a fresh embedding of their text (lowest "
                f"cosine {float(cos.min()):.4f} < {AUDIT_MIN_COSINE}): the cache holds vectors "
                "another indexer or index wrote under this model id; delete the file or point "
                "--cache elsewhere"
            )

    def put(self, known: dict[str, np.ndarray], todo: Sequence[str], fresh: np.ndarray) -> None:
        """Add ``fresh`` (float32 (len(todo), d), the vectors of ``todo``) to ``known`` and
        commit them to the cache."""
        new = dict(zip((text_hash(t) for t in todo), fresh, strict=True))
        if self.cache is not None:
            cut = getattr(self.inner, "truncated", None) or set()
            self.cache.put_many(self.model_id, new, [h for h in new if h in cut])
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


def open_cache(path: Path) -> EmbeddingCache:
    """The embedding cache file; a disk too full to open or create it is exit 3 saying so,
    never "not an indexcheck embedding cache ... delete this file"."""
    from ..output.files import disk_full

    try:
        return EmbeddingCache(path)
    except DataFileError as exc:
        cause = exc.__cause__ or exc.__context__
        if cause is not None and disk_full(cause):
            raise OutputError(
                f"--cache {path} cannot be written: the disk is full ({cause}); free some "
                "space or pass a --cache path on another disk"
            ) from None
        raise


__all__ = [
    "APPLICATION_ID",
    "AUDIT_MIN_COSINE",
    "CacheAudit",
    "CachedEmbedder",
    "EmbeddingCache",
    "audit_size",
    "open_cache",
    "open_cache_file",
]
