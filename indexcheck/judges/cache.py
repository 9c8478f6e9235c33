"""Judgement cache: parsed judge replies in SQLite, keyed by the hash of what decides them.

The key is sha256 of (judge model id, prompt version, question, context, answer); the table
``judgements`` lives in the same ``--cache`` file as the embedding cache, next to (never in)
its ``vectors`` table. The file is checked by the one opener,
:func:`indexcheck.embedders.cache_file.open_cache_tables`: another application's SQLite file is
refused read-only before any write. Each judgement is committed as soon as it is stored, so
an interrupted run keeps what it paid for.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..embedders.cache_file import JUDGEMENTS_SQL, cache_write, open_cache_tables


def judgement_key(
    model_id: str, prompt_version: str, question: str, context: str, answer: str
) -> str:
    """sha256 hex of the five fields, each length-prefixed so no two tuples collide."""
    h = hashlib.sha256()
    for part in (model_id, prompt_version, question, context, answer):
        data = part.encode("utf-8")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


class JudgementCache:
    """A sqlite table of parsed judgements keyed by :func:`judgement_key`."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db = open_cache_tables(self.path, JUDGEMENTS_SQL)

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT reply FROM judgements WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        value = json.loads(row[0])
        return value if isinstance(value, dict) else None

    def put(self, key: str, model_id: str, prompt_version: str, reply: dict[str, Any]) -> None:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with cache_write(self.path, "the judgements before are kept"):
            self._db.execute(
                "INSERT OR REPLACE INTO judgements VALUES (?, ?, ?, ?, ?)",
                (key, model_id, prompt_version, json.dumps(reply, ensure_ascii=False), now),
            )
            self._db.commit()

    def close(self) -> None:
        self._db.close()
