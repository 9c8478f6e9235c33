"""Chunks read in blocks, for checks whose memory must not grow with the corpus.

A chunk source yields ``(ids, texts)`` blocks in corpus order, as often as asked (a
streamed check reads it once to embed and once more for the few texts a report quotes).
:class:`FileChunks` streams a JSONL, CSV/TSV or Parquet file with the same columns and
messages as :func:`indexcheck.corpus.load_chunks`; :class:`CorpusChunks` wraps a Corpus
already in memory; :class:`StoreChunks` reads the texts a store keeps with its vectors.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from .corpus import Corpus
from .errors import DataFileError
from .stores.base import VectorStore

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
    """A chunks file (JSONL, CSV, TSV or Parquet) read block by block."""

    def __init__(self, path: str | Path, id_column: str = "id", text_column: str = "text"):
        self.path = Path(path)
        self.source = str(self.path)
        self.id_column, self.text_column = id_column, text_column
        if not self.path.is_file():
            raise DataFileError(f"chunks file {self.path} does not exist; check the --chunks path")
        self.suffix = self.path.suffix.lower()
        if self.suffix not in (".jsonl", ".ndjson", ".csv", ".tsv", ".parquet", ".pq"):
            raise DataFileError(
                f"{self.path} has an unknown extension '{self.suffix}'; use .jsonl, .csv, "
                ".tsv or .parquet"
            )

    def count(self) -> int | None:
        if self.suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            return int(pq.ParquetFile(self.path).metadata.num_rows)
        return None

    def _columns(self, cols: list[str]) -> None:
        for col, opt in ((self.id_column, "--id-column"), (self.text_column, "--text-column")):
            if col not in cols:
                raise DataFileError(
                    f"no column '{col}' in {self.path.name} (columns: {', '.join(cols)}); "
                    f"pass {opt} or rename the column"
                )

    def _rows(self) -> Iterator[dict[str, Any]]:
        if self.suffix in (".jsonl", ".ndjson"):
            with self.path.open(encoding="utf-8") as f:
                for lineno, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise DataFileError(
                            f"{self.path}:{lineno} is not valid JSON ({exc.msg}); "
                            "each line must be one JSON object"
                        ) from None
                    if not isinstance(row, dict):
                        raise DataFileError(f"{self.path}:{lineno} is not a JSON object")
                    yield row
        elif self.suffix in (".csv", ".tsv"):
            with self.path.open(encoding="utf-8", newline="") as f:
                yield from csv.DictReader(f, delimiter="\t" if self.suffix == ".tsv" else ",")
        else:
            import pyarrow.parquet as pq

            try:
                # pre_buffer=False: otherwise pyarrow keeps every row group read so far
                pf = pq.ParquetFile(self.path, pre_buffer=False, buffer_size=1 << 20)
            except Exception as exc:  # pyarrow raises several types for unreadable files
                raise DataFileError(f"cannot read {self.path}: {exc}") from None
            self._columns(list(pf.schema_arrow.names))
            for rb in pf.iter_batches(1024, columns=[self.id_column, self.text_column]):
                yield from rb.to_pylist()

    def blocks(self, size: int) -> Iterator[Block]:
        ids: list[str] = []
        texts: list[str] = []
        n = 0
        for row in self._rows():
            n += 1
            if n == 1:
                self._columns([str(k) for k in row])
            cid, text = row.get(self.id_column), row.get(self.text_column)
            if cid is None or str(cid) == "" or text is None:
                raise DataFileError(
                    f"{self.path.name} row {n} has no {self.id_column} or no {self.text_column}"
                )
            ids.append(str(cid))
            texts.append(str(text))
            if len(ids) == size:
                yield ids, texts
                ids, texts = [], []
        if ids:
            yield ids, texts
        if n == 0:
            raise DataFileError(f"{self.path} holds no chunks; an empty corpus cannot be checked")
