"""The one opener for the shared ``--cache`` file: refuses, read-only, any SQLite file that is not
an indexcheck cache, before anything is written to it.

An indexcheck cache holds at most the tables ``vectors`` (embeddings), ``truncated`` (the
texts the model read only in part), ``judgements`` and
``system_retrievals``/``system_generations`` (diagnose --system), of
exactly the schemas below, and carries SQLite's ``application_id`` :data:`APPLICATION_ID`
(0x49584348, "IXCH") in its header. An existing file is inspected through a read-only
connection (``immutable=1`` when no ``-wal`` file lies beside it, so not even a ``-shm`` file
is created) and closed before the read-write connection opens. Refused (exit 2, one line):
a file that is not SQLite, another ``application_id``, any other table, index, view or
trigger, or a ``vectors``/``judgements`` table of another schema. A file written by an earlier
indexcheck (no ``application_id`` yet) is accepted only when its schema is exactly ours, and
is then stamped.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import DataFileError, OutputError

#: SQLite ``PRAGMA application_id`` of every cache indexcheck creates: b"IXCH" big-endian.
APPLICATION_ID = 0x49584348

VECTORS_SQL = (
    "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, hash TEXT NOT NULL, "
    "dim INTEGER NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (model, hash))"
)
#: the texts a model read only in part (so a run served from the cache warns as a cold one)
TRUNCATED_SQL = (
    "CREATE TABLE IF NOT EXISTS truncated (model TEXT NOT NULL, hash TEXT NOT NULL, "
    "PRIMARY KEY (model, hash))"
)
JUDGEMENTS_SQL = (
    "CREATE TABLE IF NOT EXISTS judgements (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
    "prompt_version TEXT NOT NULL, reply TEXT NOT NULL, created TEXT NOT NULL)"
)
#: diagnose --system: the application's retrievals and generations (staged cache)
SYSTEM_RETRIEVALS_SQL = (
    "CREATE TABLE IF NOT EXISTS system_retrievals (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
)
SYSTEM_GENERATIONS_SQL = (
    "CREATE TABLE IF NOT EXISTS system_generations (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
)
_TABLES = {
    "vectors": VECTORS_SQL,
    "truncated": TRUNCATED_SQL,
    "judgements": JUDGEMENTS_SQL,
    "system_retrievals": SYSTEM_RETRIEVALS_SQL,
    "system_generations": SYSTEM_GENERATIONS_SQL,
}
_MAGIC = b"SQLite format 3\x00"
SPACE_HINT = (
    "; check that the disk has space and the folder is writable, or point --cache elsewhere"
)
_FIX = "pass a new file path for --cache, or delete this file if it is a stale indexcheck cache"


def _columns(db: sqlite3.Connection, table: str) -> list[tuple[object, ...]]:
    return [tuple(r[1:]) for r in db.execute(f"PRAGMA table_info({table})")]


def _schemas() -> dict[str, list[tuple[object, ...]]]:
    db = sqlite3.connect(":memory:")
    try:
        for sql in _TABLES.values():
            db.execute(sql)
        return {t: _columns(db, t) for t in _TABLES}
    finally:
        db.close()


#: (name, type, notnull, default, pk) of each column of each table indexcheck writes
SCHEMAS = _schemas()
_OWN_INDEXES = {f"sqlite_autoindex_{t}_1" for t in SCHEMAS}


def _refuse(path: Path, why: str) -> DataFileError:
    return DataFileError(f"--cache {path} is not an indexcheck cache ({why}); {_FIX}")


def _read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot write: ``immutable=1`` when there is no ``-wal`` file (so
    SQLite creates no ``-shm`` either), else ``mode=ro`` (the WAL must be read)."""
    wal = Path(f"{path}-wal").exists()
    uri = path.resolve().as_uri() + ("?mode=ro" if wal else "?mode=ro&immutable=1")
    return sqlite3.connect(uri, uri=True, timeout=30.0)


def inspect_cache_file(path: Path) -> bool:
    """Whether the existing file at ``path`` must be stamped with :data:`APPLICATION_ID`
    (an empty file, or a cache from an earlier version); raises DataFileError (exit 2) for a
    file that is not an indexcheck cache. Never writes."""
    try:
        with path.open("rb") as f:
            header = f.read(100)
    except OSError as exc:
        raise DataFileError(f"--cache {path} cannot be read: {exc.strerror}") from None
    if not header:
        return True  # an empty file is an empty database
    if len(header) < 100 or not header.startswith(_MAGIC):
        raise _refuse(path, "not a SQLite database")
    try:
        db = _read_only(path)
    except sqlite3.Error as exc:
        raise DataFileError(f"--cache {path} cannot be read: {exc}") from None
    try:
        app_id = int(db.execute("PRAGMA application_id").fetchone()[0])
        objects = db.execute("SELECT type, name FROM sqlite_master").fetchall()
        columns = {n: _columns(db, n) for t, n in objects if t == "table" and n in SCHEMAS}
    except sqlite3.DatabaseError as exc:
        raise _refuse(path, str(exc)) from None
    finally:
        db.close()
    if app_id not in (0, APPLICATION_ID):
        raise _refuse(path, f"application_id {app_id:#x}, another application's database")
    foreign = sorted(
        f"{kind} {name}"
        for kind, name in objects
        if not ((kind == "table" and name in SCHEMAS) or (kind == "index" and name in _OWN_INDEXES))
    )
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if foreign[3:] else "")
        raise _refuse(path, f"it holds {shown}")
    for table, cols in columns.items():
        if cols != SCHEMAS[table]:
            raise _refuse(path, f"its '{table}' table has another schema")
    return app_id != APPLICATION_ID


def open_cache_file(path: Path) -> sqlite3.Connection:
    """The ``--cache`` SQLite file (embeddings and judgements share it), created with its
    folder when missing; a folder, an unopenable path or a file that is not an indexcheck
    cache (checked read-only first, see the module docstring) is bad input (exit 2)."""
    path = Path(path)
    if path.is_dir():
        raise DataFileError(f"--cache {path} is a folder; pass a file path")
    stamp = inspect_cache_file(path) if path.exists() else True
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(str(path), timeout=30.0)
    except (OSError, sqlite3.Error) as exc:
        raise DataFileError(f"--cache {path} cannot be opened: {exc}" + SPACE_HINT) from None
    if stamp:
        try:
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.commit()
        except sqlite3.Error as exc:
            db.close()
            raise DataFileError(f"--cache {path} cannot be written: {exc}" + SPACE_HINT) from None
    return db


def open_cache_tables(path: Path, *statements: str) -> sqlite3.Connection:
    """:func:`open_cache_file`, then ``statements`` (pragmas, ``CREATE TABLE``) run and
    committed; a file that refuses them is bad input (exit 2) and is closed."""
    db = open_cache_file(path)
    try:
        for sql in statements:
            _busy_retried(db, sql)
        db.commit()
    except sqlite3.DatabaseError as exc:
        db.close()
        raise DataFileError(f"--cache {path} cannot be written: {exc}" + SPACE_HINT) from None
    return db


def _busy_retried(db: sqlite3.Connection, sql: str, wait: float = 30.0) -> None:
    """``db.execute(sql)``, again while another process holds the lock: switching to WAL
    takes the lock at once and SQLite does not wait on its busy timeout for it, so two runs
    opening one cache together could refuse it as "database is locked"."""
    deadline = time.monotonic() + wait
    while True:
        try:
            db.execute(sql)
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@contextmanager
def cache_write(path: Path, kept: str) -> Iterator[None]:
    """A write that fails mid-run (disk full, I/O error) is :class:`OutputError` (exit 3),
    saying that ``kept`` (what earlier writes committed) survives."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        raise OutputError(
            f"--cache {path} could not be written ({exc}); {kept}: free space or point "
            "--cache elsewhere, then rerun"
        ) from None


__all__ = [
    "APPLICATION_ID",
    "SCHEMAS",
    "SPACE_HINT",
    "TRUNCATED_SQL",
    "cache_write",
    "inspect_cache_file",
    "open_cache_file",
    "open_cache_tables",
]
