"""diagnose --system's staged cache: retrievals and generations stored apart, so that a
change of generator never re-runs retrieval, and a killed run resumes without paying twice.

- a retrieval is keyed by (question, index fingerprint, depth, filter);
- a generation by (question, context hash, model identity, replicate), where the
  replicate names the run ("run:0", "control:1", ...): repeated runs of a stochastic
  generator stay distinct, and the same run is never paid for twice.

Rows live in the shared ``--cache`` file (tables ``system_retrievals`` and
``system_generations``, opened through :func:`~indexcheck.embedders.cache_file.open_cache_file`,
which refuses foreign SQLite files); without a file, in memory. Every row is committed as
soon as it is written.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ....embedders.cache_file import SYSTEM_GENERATIONS_SQL, SYSTEM_RETRIEVALS_SQL, open_cache_file
from .hook import Candidate, Generation


def _key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def context_hash(context: Sequence[Candidate]) -> str:
    """sha256 of the context's ids and texts, in order."""
    return _key([[c.id, c.text] for c in context])


class StagedCache:
    """``retrieval``/``put_retrieval`` and ``generation``/``put_generation``."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._memory: dict[tuple[str, str], str] = {}
        if path is not None:
            self._db = open_cache_file(Path(path))
            self._db.execute(SYSTEM_RETRIEVALS_SQL)
            self._db.execute(SYSTEM_GENERATIONS_SQL)
            self._db.commit()

    def _get(self, table: str, key: str) -> Any:
        if self._db is None:
            raw = self._memory.get((table, key))
        else:
            row = self._db.execute(f"SELECT value FROM {table} WHERE key = ?", (key,)).fetchone()
            raw = None if row is None else row[0]
        return None if raw is None else json.loads(raw)

    def _put(self, table: str, key: str, value: Any) -> None:
        raw = json.dumps(value)
        if self._db is None:
            self._memory[(table, key)] = raw
            return
        self._db.execute(f"INSERT OR REPLACE INTO {table} (key, value) VALUES (?, ?)", (key, raw))
        self._db.commit()

    @staticmethod
    def retrieval_key(question: str, fingerprint: str, depth: int, filter: Any) -> str:
        return _key("retrieve", question, fingerprint, depth, filter)

    def retrieval(self, key: str) -> list[Candidate] | None:
        rows = self._get("system_retrievals", key)
        return None if rows is None else [Candidate(**r) for r in rows]

    def put_retrieval(self, key: str, candidates: Sequence[Candidate]) -> None:
        self._put("system_retrievals", key, [asdict(c) for c in candidates])

    @staticmethod
    def generation_key(
        question: str, context: Sequence[Candidate], model_id: str, replicate: str
    ) -> str:
        return _key("generate", question, context_hash(context), model_id, replicate)

    def generation(self, key: str) -> Generation | None:
        row = self._get("system_generations", key)
        return None if row is None else Generation(**row)

    def put_generation(self, key: str, generation: Generation) -> None:
        self._put("system_generations", key, asdict(generation))

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


__all__ = ["StagedCache", "context_hash"]
