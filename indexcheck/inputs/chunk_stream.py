"""Chunks read in blocks, for checks whose memory must not grow with the corpus.

A chunk source yields ``(ids, texts)`` blocks in corpus order, as often as asked (a
streamed check reads it once to embed and once more for the few texts a report quotes).
:class:`FileChunks` streams a JSONL, CSV/TSV or Parquet file with the same columns and
messages as :func:`indexcheck.inputs.corpus.load_chunks`; :class:`CorpusChunks` wraps a Corpus
already in memory; :class:`StoreChunks` reads the texts a store keeps with its vectors.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..errors import DataFileError
from ..stores.base import VectorStore
from .corpus import Corpus, chunk_id, chunk_text, is_null, missing_texts
from .files import require_file
from .rowfiles import PARQUET, check_suffix, iter_rows, parquet_columns

Block = tuple[list[str], list[str]]


class ChunkSource(Protocol):
    """Chunks in corpus order, read in blocks of up to ``size``."""

    source: str

    def count(self) -> int | None:
        """Number of chunks when known without reading them all, else None."""
        ...

    def blocks(self, size: int) -> Iterator[Block]: ...


class CorpusChunks:
    """A Corpus already in memory, served in blocks."""

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.source = corpus.source

    def count(self) -> int | None:
        return len(self.corpus)

    def blocks(self, size: int) -> Iterator[Block]:
        c = self.corpus
        for start in range(0, len(c), size):
            yield c.ids[start : start + size], c.texts[start : start + size]


def text_digests(texts: list[str]) -> np.ndarray:
    """uint64 (n, 2): the xxh3-128 digest of each text's UTF-8, the key the streamed check
    keeps per chunk (computed where the text is read, on a Ray worker or here)."""
    import xxhash

    digest = xxhash.xxh3_128_digest
    raw = b"".join(digest(t.encode("utf-8")) for t in texts)
    return np.frombuffer(raw, np.uint64).reshape(-1, 2).copy()


class StoreChunks:
    """The ids and texts a store holds with its vectors (no --chunks given)."""

    def __init__(self, store: VectorStore) -> None:
        self.store = store
        self.source = store.spec

    def count(self) -> int | None:
        return self.store.info().count or None

    def blocks(self, size: int) -> Iterator[Block]:
        for batch in self.store.iter_vectors(size):
            if batch.texts is None:
                raise DataFileError(
                    f"{self.store.spec} holds no chunk texts; pass --chunks with the id and "
                    "text of every chunk"
                )
            texts: list[str] = []
            for cid, text in zip(batch.ids, batch.texts, strict=True):
                if text is None:
                    raise DataFileError(
                        f"{self.store.spec}: vector '{cid}' has no stored text; pass --chunks"
                    )
                texts.append(text)
            yield list(batch.ids), texts


class FileChunks:
    """A chunks file (JSONL, CSV, TSV or Parquet) read block by block.

    The whole file is checked once when it is opened, before any work or cost, with the
    rules of :func:`indexcheck.inputs.corpus.load_chunks` (ids strings or integers, texts strings,
    a null or empty CSV text a missing chunk text, UTF-8 only); only ids and texts of one
    block are held at a time.
    """

    def __init__(self, path: str | Path, id_column: str = "id", text_column: str = "text"):
        self.path = Path(path)
        self.source = str(self.path)
        self.id_column, self.text_column = id_column, text_column
        require_file(self.path, "chunks file", "check the --chunks path")
        self.suffix = check_suffix(self.path, "chunks file")
        self._count = self._validate()

    def count(self) -> int | None:
        return self._count

    def _rows(self) -> Iterator[tuple[str, dict[str, Any]]]:
        cols = [self.id_column, self.text_column]
        if self.suffix in PARQUET:
            self._columns(parquet_columns(self.path))
        return iter_rows(self.path, columns=cols, empty_is_null=True)

    def _columns(self, cols: list[str]) -> None:
        for col, opt in ((self.id_column, "--id-column"), (self.text_column, "--text-column")):
            if col not in cols:
                raise DataFileError(
                    f"no column '{col}' in {self.path.name} (columns: {', '.join(cols)}); "
                    f"pass {opt} or rename the column"
                )

    def _validate(self) -> int:
        """Read the file once, checking every row; the number of chunks."""
        n = 0
        missing: list[str] = []
        unit = "line"
        for where, row in self._rows():
            n += 1
            if n == 1:
                self._columns([str(k) for k in row])
                unit = where.split(" ")[-2]
            chunk_id(row.get(self.id_column), where, self.id_column)
            raw = row.get(self.text_column)
            if is_null(raw):
                missing.append(where.rpartition(" ")[2])
            else:
                chunk_text(raw, where, self.text_column)
        if n == 0:
            raise DataFileError(f"{self.path} holds no chunks; an empty corpus cannot be checked")
        if missing:
            raise missing_texts(self.path, self.text_column, unit, missing)
        return n

    def blocks(self, size: int) -> Iterator[Block]:
        ids: list[str] = []
        texts: list[str] = []
        for where, row in self._rows():
            ids.append(chunk_id(row.get(self.id_column), where, self.id_column))
            texts.append(chunk_text(row.get(self.text_column), where, self.text_column))
            if len(ids) == size:
                yield ids, texts
                ids, texts = [], []
        if ids:
            yield ids, texts
