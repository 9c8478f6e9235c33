"""Loading chunks (JSONL, CSV, Parquet), content hashing (xxh3-128) and duplicate texts."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from ..errors import DataFileError
from .files import loads_json, require_file
from .rowfiles import iter_rows, utf8_text


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


def _read_table(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(where, row) pairs; ``where`` names the line (JSONL, CSV) or row (Parquet). CSV has no
    null: an empty cell is a missing value, as a Parquet null is."""
    return list(iter_rows(path, empty_is_null=True))


def is_null(value: Any) -> bool:
    """None, NaN (pandas' null in object columns) or pandas.NA."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return type(value).__name__ in ("NAType", "NaTType")


def _kind(value: Any) -> str:
    name = type(value).__name__
    return {"dict": "an object", "list": "a list", "ndarray": "a list", "bool": "a boolean"}.get(
        name, f"a {name}"
    )


def chunk_id(
    value: Any, where: str, column: str, fix: str = "fix the row or pass --id-column"
) -> str:
    """A chunk id as text: a string or an integer; anything else is refused (exit 2), saying
    ``fix`` (a store's own id file has no --id-column to pass)."""
    if isinstance(value, str) and value != "":
        return utf8_text(value, where, f"column '{column}'")
    if isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_):
        return str(int(value))
    if is_null(value) or value == "":
        raise DataFileError(f"{where} has no {column}; every chunk needs a non-empty id")
    raise DataFileError(
        f"{where}: column '{column}' holds {_kind(value)}, not a string or integer id; {fix}"
    )


def chunk_text(value: Any, where: str, column: str) -> str:
    """A chunk text, which must be a string; a null is a missing text (exit 2)."""
    if isinstance(value, str):
        return utf8_text(value, where, f"column '{column}'")
    raise DataFileError(
        f"{where}: column '{column}' holds {_kind(value)}, not a string; indexcheck embeds "
        "text only: fix the row or pass --text-column"
    )


def missing_texts(path: Path, column: str, unit: str, missing: Sequence[str]) -> DataFileError:
    """The error for chunks whose text is null or empty: a text that is unknown cannot be
    checked, and embedding "nan" would blame the index (exit 2, naming the rows)."""
    shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    return DataFileError(
        f"{path.name}: {len(missing)} chunk(s) have no {column} (null or empty) at {unit} "
        f"{shown}; fill in their text or drop those rows"
    )


def load_chunks(path: str | Path, id_column: str = "id", text_column: str = "text") -> Corpus:
    """Load chunks with an id and a text column; other columns become metadata.

    Input is checked before any work: a text must be a string (a number, list, object or
    bytes is refused, naming the row and column), and a null or, in CSV, an empty text cell
    is a missing chunk text, refused with the rows it was found in. Both exit 2: a chunk
    whose text is unknown cannot be checked, and embedding "nan" would blame the index.
    """
    p = Path(path)
    require_file(p, "chunks file", "check the --chunks path")  # missing, a FIFO, a folder
    rows = _read_table(p)
    if not rows:
        raise DataFileError(f"{p} holds no chunks; an empty corpus cannot be checked")
    for col, opt in ((id_column, "--id-column"), (text_column, "--text-column")):
        if col not in rows[0][1]:
            cols = ", ".join(map(str, rows[0][1].keys()))
            raise DataFileError(
                f"no column '{col}' in {p.name} (columns: {cols}); pass {opt} or rename the column"
            )
    ids, texts, meta = [], [], []
    missing: list[str] = []
    for where, row in rows:
        ids.append(chunk_id(row.get(id_column), where, id_column))
        raw = row.get(text_column)
        if is_null(raw):
            missing.append(where.rpartition(" ")[2])
            texts.append("")
        else:
            texts.append(chunk_text(raw, where, text_column))
        meta.append({k: v for k, v in row.items() if k not in (id_column, text_column)})
    if missing:
        raise missing_texts(p, text_column, rows[0][0].split(" ")[-2], missing)
    return Corpus(ids=ids, texts=texts, metadata=meta, source=str(p))


def corpus_from_pairs(
    ids: Sequence[str],
    texts: Sequence[str],
    source: str = "",
    metadata: Sequence[dict[str, Any]] | None = None,
) -> Corpus:
    """Build a Corpus from parallel lists (e.g. texts read from the store itself)."""
    if not ids:
        raise DataFileError(f"{source or 'the corpus'} holds no chunks; nothing to check")
    meta = list(metadata) if metadata is not None else None
    return Corpus(ids=list(ids), texts=list(texts), metadata=meta, source=source)


def chunk_metadata(row: dict[str, Any] | None) -> dict[str, Any] | None:
    """The metadata an ``--embed-template`` sees for one chunk.

    A ``metadata`` column holding an object (JSONL) or a JSON object string (CSV) is the
    chunk's metadata, as LlamaIndex keeps it; without one, every column other than the id
    and the text is. A malformed ``metadata`` string is a DataFileError."""
    if row is None:
        return None
    inner = row.get("metadata")
    if isinstance(inner, dict):
        return inner
    if isinstance(inner, str) and inner.lstrip().startswith("{"):
        try:
            parsed = loads_json(inner, "a 'metadata' cell")
        except json.JSONDecodeError as exc:
            raise DataFileError(f"a 'metadata' cell is not a JSON object ({exc})") from None
        if isinstance(parsed, dict):
            return parsed
    return row
