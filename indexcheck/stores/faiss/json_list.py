"""A FAISS folder's ``ids.json`` read element by element, never whole.

``ids.json`` is one JSON list, row for row with the index: ``"chunk-id"`` entries, or
``{"id": ..., "text": ...}`` objects (one kind throughout). :func:`iter_entries` decodes it
incrementally (1 MB of text at a time) and yields each entry's byte offset with its
validated id and text; :func:`read_entry` reads one entry back from its offset. The
refusals are those of :func:`indexcheck.stores.faiss.ids_files.parse_ids_json`, entry by entry.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...errors import DataFileError
from ...inputs.files import loads_json
from .ids_files import ids_json_entry, parse_ids_json

CHUNK = 1 << 20
_WS = " \t\n\r"


def _decode(dec: json.JSONDecoder, buf: str, pos: int, path: Path) -> tuple[Any, int]:
    try:
        return dec.raw_decode(buf, pos)
    except RecursionError:
        loads_json("[" * 100_000, str(path))  # raises NestingTooDeepError naming the file
        raise


def iter_entries(path: Path) -> Iterator[tuple[int, str, str | None, bool]]:
    """(byte offset, id, text, entries are objects) of every entry, in order."""
    dec = json.JSONDecoder()
    utf8 = codecs.getincrementaldecoder("utf-8")()
    with path.open("rb") as f:
        # buf[pos] is at byte offset ``at`` of the file
        buf, pos, at, eof = "", 0, 0, False

        def more() -> bool:
            nonlocal buf, pos, eof
            if eof:
                return False
            data = f.read(CHUNK)
            eof = not data
            try:
                buf = buf[pos:] + utf8.decode(data, final=eof)
            except UnicodeDecodeError:
                raise DataFileError(f"cannot read {path}: it is not UTF-8") from None
            pos = 0
            return True

        def advance(to: int) -> None:
            nonlocal pos, at
            piece = buf[pos:to]
            at += len(piece) if piece.isascii() else len(piece.encode("utf-8"))
            pos = to

        def skip_ws() -> str:
            while True:
                stop = pos
                while stop < len(buf) and buf[stop] in _WS:
                    stop += 1
                advance(stop)
                if pos < len(buf):
                    return buf[pos]
                if not more():
                    return ""

        if skip_ws() != "[":
            # not a list: the whole-file reader's message (the file is small or wrong anyway)
            text = path.read_text(encoding="utf-8")
            try:
                parse_ids_json(loads_json(text, str(path)), path)
            except json.JSONDecodeError as exc:
                raise DataFileError(f"cannot read {path}: {exc}") from None
            raise DataFileError(f"{path} must hold a JSON list of ids")
        advance(pos + 1)
        n, as_objects = 0, False
        if skip_ws() == "]":
            return
        while True:
            skip_ws()
            try:
                value, end = _decode(dec, buf, pos, path)
                if end == len(buf) and more():  # a number may go on in the next chunk
                    continue
            except json.JSONDecodeError as exc:
                if more():
                    continue
                raise DataFileError(f"cannot read {path}: {exc.msg} (entry {n})") from None
            if n == 0:
                as_objects = isinstance(value, dict)
            cid, said = ids_json_entry(value, n, as_objects, path)
            yield at, cid, said, as_objects
            advance(end)
            n += 1
            sep = skip_ws()
            if sep == "]":
                return
            if sep != ",":
                raise DataFileError(f"cannot read {path}: expected ',' or ']' after entry {n - 1}")
            advance(pos + 1)


def read_entry(f: Any, offset: int, as_objects: bool, path: Path) -> tuple[str, str | None]:
    """The id and text of the entry at ``offset`` of the open binary file ``f``."""
    dec = json.JSONDecoder()
    size = 4096
    while True:
        f.seek(offset)
        data = f.read(size)
        text = data.decode("utf-8", errors="ignore")
        try:
            value, end = _decode(dec, text, 0, path)
            if end < len(text) or len(data) < size:
                return ids_json_entry(value, 0, as_objects, path)
        except json.JSONDecodeError:
            if len(data) < size:
                raise DataFileError(f"{path} changed while it was read; rerun") from None
        size *= 4
