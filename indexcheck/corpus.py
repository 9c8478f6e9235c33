"""Loading chunks (JSONL, CSV, Parquet), content hashing (xxh3-128) and duplicate texts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import xxhash

from .errors import DataFileError


def text_hash(text: str) -> str:
    """xxh3-128 of the exact UTF-8 text, as 32 hex characters."""
    return xxhash.xxh3_128_hexdigest(text.encode("utf-8"))


@dataclass
class Corpus:
    """Chunks in corpus order: ``ids[i]`` has ``texts[i]``; positions are list indices."""

    ids: list[str]
    texts: list[str]
    metadata: list[dict[str, Any]] | None = None
    source: str = ""
    hashes: list[str] = field(init=False)
    position: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.hashes = [text_hash(t) for t in self.texts]
        self.position = {}
        for i, cid in enumerate(self.ids):
            if cid in self.position:
                raise DataFileError(
                    f"chunk id '{cid}' appears twice in {self.source or 'the chunks'} "
                    f"(rows {self.position[cid] + 1} and {i + 1}); ids must be unique"
                )
            self.position[cid] = i

    def __len__(self) -> int:
        return len(self.ids)

    def duplicate_of(self) -> dict[int, int]:
        """Position of each chunk whose text repeats an earlier one -> that earlier position."""
        first: dict[str, int] = {}
        dup: dict[int, int] = {}
        for i, h in enumerate(self.hashes):
            if h in first:
                dup[i] = first[h]
            else:
                first[h] = i
        return dup

    def fingerprint(self) -> str:
        """xxh3-128 over (id, text hash) pairs in order."""
        h = xxhash.xxh3_128()
        for cid, th in zip(self.ids, self.hashes, strict=True):
            h.update(cid.encode("utf-8") + b"\0" + th.encode("ascii") + b"\n")
        return h.hexdigest()


def _read_table(path: Path) -> list[dict[str, Any]]:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        rows = []
        with path.open(encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataFileError(
                        f"{path}:{lineno} is not valid JSON ({exc.msg}); "
                        "each line must be one JSON object"
                    ) from None
                if not isinstance(row, dict):
                    raise DataFileError(f"{path}:{lineno} is not a JSON object")
                rows.append(row)
        return rows
    if suffix in (".csv", ".tsv", ".parquet", ".pq"):
        import pandas as pd

        try:
            if suffix == ".csv":
                df = pd.read_csv(path, dtype=str, keep_default_na=False)
            elif suffix == ".tsv":
                df = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
            else:
                df = pd.read_parquet(path)
        except Exception as exc:  # pandas raises many types for unreadable files
            raise DataFileError(f"cannot read {path}: {exc}") from None
        records: list[dict[str, Any]] = df.to_dict(orient="records")
        return records
    raise DataFileError(
        f"{path} has an unknown extension '{suffix}'; use .jsonl, .csv, .tsv or .parquet"
    )


def load_chunks(path: str | Path, id_column: str = "id", text_column: str = "text") -> Corpus:
    """Load chunks with an id and a text column; other columns become metadata."""
    p = Path(path)
    if not p.is_file():
        raise DataFileError(f"chunks file {p} does not exist; check the --chunks path")
    rows = _read_table(p)
    if not rows:
        raise DataFileError(f"{p} holds no chunks; an empty corpus cannot be checked")
    for col, opt in ((id_column, "--id-column"), (text_column, "--text-column")):
        if col not in rows[0]:
            cols = ", ".join(map(str, rows[0].keys()))
            raise DataFileError(
                f"no column '{col}' in {p.name} (columns: {cols}); pass {opt} or rename the column"
            )
    ids, texts, meta = [], [], []
    for n, row in enumerate(rows, 1):
        cid, text = row.get(id_column), row.get(text_column)
        if cid is None or str(cid) == "" or text is None:
            raise DataFileError(f"{p.name} row {n} has no {id_column} or no {text_column}")
        ids.append(str(cid))
        texts.append(str(text))
        meta.append({k: v for k, v in row.items() if k not in (id_column, text_column)})
    return Corpus(ids=ids, texts=texts, metadata=meta, source=str(p))


def corpus_from_pairs(ids: Sequence[str], texts: Sequence[str], source: str = "") -> Corpus:
    """Build a Corpus from parallel lists (e.g. texts read from the store itself)."""
    if not ids:
        raise DataFileError(f"{source or 'the corpus'} holds no chunks; nothing to check")
    return Corpus(ids=list(ids), texts=list(texts), source=source)
