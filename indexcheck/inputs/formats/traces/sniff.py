"""Which export an ``--answers`` file is, from its first record (or its Parquet columns)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ....errors import DataFileError
from ...rowfiles import DELIMITED, PARQUET, parquet_columns
from .records import first_record

#: what ``--answers-format`` accepts; ``own`` is indexcheck's answers file
FORMATS = ("own", "openinference", "otlp", "langfuse", "langsmith")


def classify(rec: dict[str, Any]) -> str | None:
    """The format one record belongs to, or None."""
    if "resourceSpans" in rec:
        return "otlp"
    if "run_type" in rec:
        return "langsmith"
    if "observations" in rec:
        return "langfuse"
    ctx = rec.get("context")
    if (isinstance(ctx, dict) and ("span_id" in ctx or "trace_id" in ctx)) or (
        "context.span_id" in rec or "context.trace_id" in rec
    ):
        return "openinference"
    if "question" in rec and "answer" in rec:
        return "own"
    return None


def check_named(path: Path, fmt: str) -> None:
    """DataFileError when ``--answers-format`` names a format the file plainly is not."""
    try:
        found = sniff_format(path)
    except DataFileError:
        return  # nothing recognisable: the named reader says what it misses
    if found != fmt:
        raise DataFileError(
            f"{path.name} looks like {found}, not {fmt}: pass --answers-format "
            f"{found}, or leave it out to have the format sniffed"
        )


def sniff_format(path: Path) -> str:
    """One of :data:`FORMATS`; DataFileError when the file says nothing we know."""
    suffix = path.suffix.lower()
    if suffix in DELIMITED:
        return "own"
    if suffix in PARQUET:
        cols = parquet_columns(path)
        found = classify(dict.fromkeys(cols))
        if found is None and any(c.startswith("attributes.") for c in cols):
            found = "openinference"
        return found or "own"  # the answers reader names the missing columns
    if suffix not in (".json", ".jsonl", ".ndjson"):
        return "own"  # the answers reader names the extensions it reads
    rec = first_record(path)
    if rec is None:
        return "own"
    found = classify(rec)
    if found is None and suffix != ".json":
        return "own"  # JSON Lines is the answers file's own form: its reader names the fields
    if found is None:
        keys = ", ".join(sorted(map(str, rec))[:8]) or "none"
        raise DataFileError(
            f"cannot tell which export {path.name} is (its first record has the keys {keys}); "
            f"name it with --answers-format {'|'.join(FORMATS)}"
        )
    return found
