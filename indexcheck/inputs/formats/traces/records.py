"""Records of a trace export file: JSON (one document), JSON Lines or Parquet, each with the
place a message about it should name (``FILE line N``, ``FILE row N``, ``FILE [i]``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ....errors import DataFileError
from ...files import loads_json
from ...limits import read_document
from ...rowfiles import JSONL, PARQUET, iter_rows, utf8_error

Record = tuple[str, dict[str, Any]]


def load_json(path: Path) -> Any:
    """A whole-file JSON document; bad JSON names its line and column (exit 2)."""
    try:
        text = read_document(path).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise utf8_error(path) from None
    try:
        return loads_json(text, path.name)
    except json.JSONDecodeError as exc:
        raise DataFileError(
            f"{path.name} line {exc.lineno} column {exc.colno} is not valid JSON ({exc.msg}); "
            "export the traces as JSON, JSON Lines or Parquet"
        ) from None


def records(path: Path, list_keys: tuple[str, ...] = ("data",)) -> Iterator[Record]:
    """Every record of the file: JSONL lines, Parquet rows, or the items of a JSON list
    (a top-level list, or the list under one of ``list_keys`` of an object)."""
    suffix = path.suffix.lower()
    if suffix in JSONL or suffix in PARQUET:
        yield from iter_rows(path)
        return
    doc = load_json(path)
    items: Any = doc
    key = ""
    if isinstance(doc, dict):
        for k in list_keys:
            if isinstance(doc.get(k), list):
                items, key = doc[k], k
                break
        else:
            items = [doc]
    if not isinstance(items, list):
        raise DataFileError(f"{path.name} holds no list of records; check --answers-format")
    for i, item in enumerate(items):
        where = f"{path.name} {key}[{i}]" if key else f"{path.name} [{i}]"
        if not isinstance(item, dict):
            raise DataFileError(f"{where} is not a JSON object")
        yield where, item


def first_record(path: Path) -> dict[str, Any] | None:
    """The first record, for sniffing (None for an empty file)."""
    for _, rec in records(path, ("data", "runs", "traces", "spans")):
        return rec
    return None
