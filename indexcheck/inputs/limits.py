"""The size limit per record of every file users hand in, and readers that keep to it.

A record is one line of a JSON Lines or CSV/TSV file (a CSV field quoted over several
lines is capped as a whole too) or one whole JSON/TOML document. The limit is
:data:`DEFAULT_MAX_RECORD_BYTES` (64 MiB), raised or lowered by ``--max-record-bytes`` or
``INDEXCHECK_MAX_RECORD_BYTES``; a whole document may be :data:`DOCUMENT_FACTOR` times
larger. A record over it is :class:`~indexcheck.errors.RecordTooLargeError` (exit 2)
naming the file and line, found in memory bounded by the limit: lines are read with a cap
and the rest of an oversized line is only counted, in pieces, never held.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ..errors import DataFileError, RecordTooLargeError

DEFAULT_MAX_RECORD_BYTES = 64 * 1024 * 1024
RECORD_LIMIT_ENV = "INDEXCHECK_MAX_RECORD_BYTES"
#: a JSON or TOML file read whole (a trace export, a persist folder's store) may be this
#: many times the record limit (1 GiB by default)
DOCUMENT_FACTOR = 16
_PIECE = 1 << 20
_override: dict[str, int | None] = {"limit": None}


def set_record_limit(limit: int | None) -> None:
    """Set by the CLI from ``--max-record-bytes`` (None: the environment, then the default)."""
    _override["limit"] = limit


def record_limit() -> int:
    """Bytes one record may take: the option, else ``INDEXCHECK_MAX_RECORD_BYTES``, else
    64 MiB. A malformed environment value is refused (exit 2)."""
    if _override["limit"] is not None:
        return _override["limit"]
    raw = os.environ.get(RECORD_LIMIT_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_RECORD_BYTES
    if not raw.isdigit() or int(raw) < 1:
        raise DataFileError(
            f"{RECORD_LIMIT_ENV}={raw!r} must be a whole number of bytes, 1 or more"
        )
    return int(raw)


def shown_size(n: int) -> str:
    """A size as people read it: ``2.1 GB``, ``3.0 kB``, ``512 bytes`` (powers of 1000)."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def shown_limit(n: int) -> str:
    """A limit as it was most likely set: ``64 MiB``, ``1 KiB``, else bytes."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} bytes"


def too_large(where: str, size: int, limit: int, what: str = "a record") -> RecordTooLargeError:
    """The one-line refusal: ``chunks.jsonl line 48213: a record of 2.1 GB exceeds ...``."""
    at_least = "at least " if size < 0 else ""
    return RecordTooLargeError(
        f"{where}: {what} of {at_least}{shown_size(abs(size))} exceeds the "
        f"{shown_limit(limit)} {'record' if what == 'a record' else 'document'} limit; "
        "split it or raise --max-record-bytes"
    )


def _rest_of_line(f: BinaryIO) -> int:
    """Bytes up to and including the next newline (or the end), read in pieces, kept not."""
    n = 0
    while piece := f.read(_PIECE):
        end = piece.find(b"\n")
        if end >= 0:
            return n + end + 1
        n += len(piece)
    return n


def bounded_lines(
    f: BinaryIO, name: str, limit: int | None = None, first: int = 1
) -> Iterator[tuple[int, bytes]]:
    """``(line number, raw line with its newline)`` of a binary file, each at most ``limit``
    bytes (the record limit when None) before its newline; a longer line is
    RecordTooLargeError naming ``name`` and the line, its size counted without holding it."""
    cap = record_limit() if limit is None else limit
    lineno = first - 1
    while line := f.readline(cap + 1):
        lineno += 1
        if len(line) > cap and not (len(line) == cap + 1 and line.endswith(b"\n")):
            raise too_large(f"{name} line {lineno}", len(line) + _rest_of_line(f), cap)
        yield lineno, line


def read_document(path: Path, name: str | None = None) -> bytes:
    """A whole JSON/TOML file's bytes, refused unread when it is over
    :data:`DOCUMENT_FACTOR` times the record limit (the size read from its metadata; a
    file that grows while read is still cut at the cap)."""
    cap = record_limit() * DOCUMENT_FACTOR
    shown = name or path.name
    size = path.stat().st_size
    if size > cap:
        raise too_large(shown, size, cap, "a document")
    with path.open("rb") as f:
        data = f.read(cap + 1)
    if len(data) > cap:
        raise too_large(shown, -len(data), cap, "a document")
    return data


__all__ = [
    "DEFAULT_MAX_RECORD_BYTES",
    "DOCUMENT_FACTOR",
    "RECORD_LIMIT_ENV",
    "bounded_lines",
    "read_document",
    "record_limit",
    "set_record_limit",
    "shown_limit",
    "shown_size",
    "too_large",
]
