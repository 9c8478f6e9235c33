"""sqlite-vec, opening: the database file read-only through apsw, the extension loaded,
and the error table both the opening and the store use.

The file is opened as ``file:PATH?mode=ro`` with ``SQLITE_OPEN_READONLY``: SQLite then
refuses every write, and creates no journal or WAL file of its own. apsw is used because
it can load extensions where the interpreter's ``sqlite3`` may not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from ...errors import BackendUnavailableError, InputError, SpecError
from ...remote.translate import ErrorMap, Rule, doing
from ..base import import_sdk

SPEC_HINT = "e.g. sqlitevec:vec.db?table=langchain or sqlitevec:embeddings.db?collection=docs"

SQLITEVEC_ERRORS = ErrorMap(
    Rule(
        Exception,
        InputError,
        "sqlitevec: cannot load the sqlite-vec extension ({name}: {text}); reinstall it "
        "with: pip install 'indexcheck[sqlitevec]'",
        when=doing("load the extension"),
    ),
    Rule(
        "apsw:NotADBError",
        InputError,
        "sqlitevec: '{path}' is not an SQLite database ({text}); pass the database file",
    ),
    Rule(
        "apsw:CantOpenError",
        InputError,
        "sqlitevec: cannot open '{path}' read-only ({text}); check the path and its permissions",
    ),
    Rule(
        ("apsw:BusyError", "apsw:LockedError"),
        BackendUnavailableError,
        "sqlitevec: '{path}' is locked by a writer ({text}); rerun when it is done",
    ),
    Rule(
        "apsw:Error",
        BackendUnavailableError,
        "sqlitevec {doing} on '{path}' failed ({name}: {text}); check the file is a "
        "complete sqlite-vec database",
    ),
    service="sqlitevec",
)


def import_apsw() -> Any:
    """apsw, or MissingDependencyError naming the extra."""
    return import_sdk("apsw", "sqlitevec", "apsw")


def extension_path() -> str:
    """The sqlite-vec loadable library, or MissingDependencyError naming the extra."""
    return str(import_sdk("sqlite_vec", "sqlitevec", "sqlite-vec").loadable_path())


def connect(location: str) -> tuple[Any, Path]:
    """A read-only apsw connection to ``location`` with sqlite-vec loaded, and its path."""
    location = location.strip()
    if not location:
        raise SpecError(f"sqlitevec: the spec has no file; {SPEC_HINT}")
    path = Path(location).expanduser()
    if not path.exists():  # SQLite would create it without mode=ro; refuse clearly
        raise InputError(f"sqlitevec: no such file '{path}'; pass the SQLite database file")
    if not path.is_file():
        raise InputError(f"sqlitevec: '{path}' is not a file; pass the SQLite database file")
    apsw = import_apsw()
    ext = extension_path()
    uri = "file:" + quote(str(path.resolve())) + "?mode=ro"
    flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI

    def call(what: str, fn: Any) -> Any:
        return SQLITEVEC_ERRORS.call(what, fn, path=str(path))

    conn = call("open", lambda: apsw.Connection(uri, flags=flags))

    def load() -> None:
        conn.enable_load_extension(True)
        conn.load_extension(ext)
        conn.enable_load_extension(False)

    call("load the extension", load)
    call("read the schema", lambda: conn.execute("SELECT count(*) FROM sqlite_master").fetchall())
    return conn, path
