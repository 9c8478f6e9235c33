"""The options of one embed run, as :func:`indexcheck.api.embed` receives them; built once
at the face and passed down unchanged (field names are the api's keywords)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..kit.settings import Settings


@dataclass(frozen=True)
class EmbedSettings(Settings):
    """Every embed option."""

    #: a chunks file (read with ``id_column``/``text_column``) or a Corpus
    chunks: Any
    #: a spec, an opened embedder, or None for the default
    embedder: Any = None
    #: the NEW vectors file (.parquet or .jsonl: id, vector, text)
    out: str | Path | None = None
    #: the NEW FAISS folder (index.faiss + ids.json, inner product)
    faiss: str | Path | None = None
    id_column: str = "id"
    text_column: str = "text"
    #: SQLite embedding cache
    cache: str | Path | None = None


__all__ = ["EmbedSettings"]
