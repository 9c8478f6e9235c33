"""Reading rows from the files users hand in: chunks, questions, answers, labels.

One streamed reader for every row file, so a chunk file of any size and a question set read
whole give the same rows and errors: JSON Lines (``.jsonl``/``.ndjson``, one object per
non-blank line, ``FILE line N``); CSV/TSV (a header row, cells are strings, ``FILE line N``
with the header as line 1; with ``empty_is_null`` an empty cell is missing); Parquet
(``.parquet``/``.pq``, record batches, ``FILE row N``; nulls None, structs dicts). Bytes that
are not UTF-8 and malformed JSON are a :class:`DataFileError` naming the file and line (exit
2); nothing is decoded leniently. :func:`write_table_file` writes result rows
(``check-index --rows``) in the format its suffix names (``.parquet``, ``.csv``, ``.jsonl``;
others refused by :func:`check_output_suffix`), atomically
(:func:`indexcheck.output.files.replacing`).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..errors import DataFileError, InputError, RecordTooLargeError
from .files import c_path, json_object
from .limits import bounded_lines, record_limit, shown_limit

JSONL = (".jsonl", ".ndjson")
DELIMITED = {".csv": ",", ".tsv": "\t"}
PARQUET = (".parquet", ".pq")
SUFFIXES = (*JSONL, *DELIMITED, *PARQUET)

#: the formats a rows output is written in, by suffix
OUTPUT_SUFFIXES = (".parquet", ".csv", ".jsonl")

Row = tuple[str, dict[str, Any]]
"""``(where, row)``: where names the file and line or row, for error messages."""


def decode_error_line(path: Path) -> str:
    """``FILE line N`` of the first line of ``path`` that is not valid UTF-8 (or the file)."""
    try:
        with path.open("rb") as f:
            for lineno, raw in bounded_lines(f, path.name):
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError:
                    return f"{path} line {lineno}"
    except (OSError, RecordTooLargeError):
        pass
    return str(path)


def utf8_error(path: Path, where: str | None = None) -> DataFileError:
    """The one-line error for text that is not valid UTF-8 (bad bytes or lone surrogates)."""
    place = where or decode_error_line(path)
    return DataFileError(
        f"{place} is not valid UTF-8 text (invalid bytes or a lone surrogate); "
        "re-save the file as UTF-8"
    )


def utf8_text(value: str, where: str, what: str) -> str:
    """``value`` if it encodes as UTF-8; a lone surrogate (a bad ``\\ud800`` escape in the
    file) is refused, saying that ``what`` at ``where`` holds it."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise DataFileError(
            f"{where}: {what} holds a lone surrogate, which is not valid UTF-8 text; "
            "fix the escape sequence in the file"
        ) from None
    return value


class _HasId(Protocol):
    @property
    def id(self) -> str: ...


Item = TypeVar("Item", bound=_HasId)


def parse_rows(
    path: Path,
    rows: Sequence[Row],
    noun: str,
    parse: Callable[[str, dict[str, Any]], Item],
    show: Callable[[str], str] = str,
) -> list[Item]:
    """``parse(where, row)`` of every row read from ``path``: a file with no row is refused
    (it "holds no {noun}s"), and so is an id met twice (shown through ``show``)."""
    if not rows:
        raise DataFileError(f"{path} holds no {noun}s")
    items = [parse(where, row) for where, row in rows]
    twice = first_repeat(i.id for i in items)
    if twice is not None:
        raise DataFileError(f"{path.name}: {noun} id '{show(twice)}' appears twice")
    return items


def first_repeat(ids: Iterable[str]) -> str | None:
    """The first id that appears a second time, or None when each appears once."""
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            return i
        seen.add(i)
    return None


def check_suffix(path: Path, what: str = "file") -> str:
    """The lower-case suffix of a row file, or DataFileError naming the ones we read."""
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise DataFileError(
            f"{what} {path} has an unknown extension '{suffix}'; use .jsonl, .csv, .tsv or .parquet"
        )
    return suffix


def iter_rows(
    path: Path, *, columns: Sequence[str] | None = None, empty_is_null: bool = False
) -> Iterator[Row]:
    """Stream ``(where, row)`` from a JSONL, CSV/TSV or Parquet file (see the module doc).

    ``columns`` limits a Parquet read to those columns (others are not read at all).
    """
    suffix = check_suffix(path)
    if suffix in JSONL:
        yield from _jsonl(path)
    elif suffix in DELIMITED:
        yield from _delimited(path, DELIMITED[suffix], empty_is_null)
    else:
        yield from _parquet(path, columns)


def arrow_errors() -> tuple[type[Exception], ...]:
    """What pyarrow raises for a file it cannot read (its own errors, which also subclass
    ValueError, TypeError, OSError or MemoryError, and the OS's): caught by name, so a bug
    elsewhere is never reworded as "cannot read"."""
    import pyarrow as pa

    return (pa.ArrowException, OSError, ValueError)


def parquet_columns(path: Path) -> list[str]:
    """The column names of a Parquet file (read from its footer only)."""
    import pyarrow.parquet as pq

    try:
        with c_path(path) as readable:  # a name that is not UTF-8 too
            return list(pq.ParquetFile(readable).schema_arrow.names)
    except arrow_errors() as exc:
        raise DataFileError(f"cannot read {path}: {exc}") from None


def _jsonl(path: Path) -> Iterator[Row]:
    with path.open("rb") as f:
        for lineno, raw in bounded_lines(f, path.name):
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError:
                raise utf8_error(path, f"{path} line {lineno}") from None
            if not line.strip():
                continue
            where = f"{path.name} line {lineno}"
            yield where, json_object(line, where, "each line must be one JSON object")


def _decoded(lines: Iterator[tuple[int, bytes]]) -> Iterator[str]:
    """Each line as text; a byte order mark opening the file (Excel's "CSV UTF-8") is
    dropped, as it is from a JSON Lines file."""
    for lineno, raw in lines:
        yield raw.decode("utf-8-sig" if lineno == 1 else "utf-8")


def _delimited(path: Path, delimiter: str, empty_is_null: bool) -> Iterator[Row]:
    limit = record_limit()
    # a field quoted over many short lines is capped by the csv module's own field limit
    csv.field_size_limit(limit)
    reader: csv.DictReader[str] | None = None
    try:
        with path.open("rb") as raw:
            lines = _decoded(bounded_lines(raw, path.name))
            # strict: a quote never closed is an error, never a field running to the end
            reader = csv.DictReader(lines, delimiter=delimiter, strict=True)
            for row in reader:
                if None in row:
                    raise DataFileError(
                        f"{path.name} line {reader.line_num} has more cells than the header"
                    )
                cells = {k: (None if empty_is_null and v == "" else v) for k, v in row.items()}
                yield f"{path.name} line {reader.line_num}", cells
    except UnicodeDecodeError:
        raise utf8_error(path) from None
    except csv.Error as exc:
        line = f"{path.name} line {reader.line_num if reader else 1}"
        if "field larger than field limit" in str(exc):
            raise RecordTooLargeError(
                f"{line}: a quoted field exceeds the {shown_limit(limit)} record limit; "
                "split it or raise --max-record-bytes"
            ) from None
        raise DataFileError(f"cannot read {path}: {exc}") from None


def _parquet(path: Path, columns: Sequence[str] | None) -> Iterator[Row]:
    import pyarrow.parquet as pq

    try:
        # pre_buffer=False: otherwise pyarrow keeps every row group read so far in memory
        with c_path(path) as readable:  # pyarrow opens its own descriptor
            pf = pq.ParquetFile(readable, pre_buffer=False, buffer_size=1 << 20)
        batches = pf.iter_batches(1024, columns=list(columns) if columns else None)
        n = 0
        for batch in batches:
            for row in batch.to_pylist():
                n += 1
                yield f"{path.name} row {n}", row
    except DataFileError:
        raise
    except arrow_errors() as exc:
        raise DataFileError(f"cannot read {path}: {exc}") from None


def check_output_suffix(path: Path, option: str = "--rows") -> str:
    """The format of a rows output by its suffix, or InputError (exit 2) naming the ones
    written: a ``.csv`` name never holds Parquet bytes."""
    suffix = path.suffix.lower()
    if suffix not in OUTPUT_SUFFIXES:
        shown = f"'{suffix}'" if suffix else "no extension"
        raise InputError(
            f"{option} {path} has {shown}; end the name in .parquet, .csv or .jsonl to "
            "choose the format"
        )
    return suffix


def write_table_file(path: Path, schema: Any, tables: Iterable[Any]) -> None:
    """Write Arrow ``tables`` (each with ``schema``) to ``path`` in the format of its
    suffix, block by block, as a temporary file renamed into place at the end: a failed
    or killed run leaves the old file whole, a symlink at ``path`` is replaced."""
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    from ..output.files import replacing

    suffix = check_output_suffix(path)
    with replacing(path) as tmp:
        if suffix == ".parquet":
            with pq.ParquetWriter(str(tmp), schema) as writer:
                for table in tables:
                    writer.write_table(table)
        elif suffix == ".csv":
            with pcsv.CSVWriter(str(tmp), schema) as writer:
                for table in tables:
                    writer.write_table(table)
        else:
            with tmp.open("w", encoding="utf-8") as f:
                for table in tables:
                    for row in table.to_pylist():
                        f.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")


__all__ = [
    "OUTPUT_SUFFIXES",
    "SUFFIXES",
    "arrow_errors",
    "check_output_suffix",
    "check_suffix",
    "decode_error_line",
    "first_repeat",
    "iter_rows",
    "parquet_columns",
    "parse_rows",
    "utf8_error",
    "utf8_text",
    "write_table_file",
]
