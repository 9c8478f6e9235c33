"""Reading the files users hand in, safely: what a path is, and JSON/TOML too deep to parse.

- :func:`require_file`: a config, chunks or questions path that is a FIFO, a device, a
  socket or a folder is refused (:class:`NotAFileError`, exit 2) saying what it is,
  without opening it: reading a FIFO blocks until a writer comes, ``/dev/zero`` never ends.
- :func:`loads_json` / :func:`loads_toml`: a document nested deeper than Python's parsers
  can follow is :class:`NestingTooDeepError` (exit 2) naming the file, never a
  ``RecursionError`` reaching the catch-all.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import DataFileError, IndexcheckError, NestingTooDeepError, NotAFileError

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def kind_of(path: str | os.PathLike[str]) -> str | None:
    """None for a regular file (symlinks followed), else what the path is: ``missing``,
    ``a folder``, ``a FIFO (named pipe)``, ``a character device``, ... Never opens it."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def require_file(path: str | os.PathLike[str], what: str, fix: str) -> None:
    """Refuse ``path`` unless it is a regular file: DataFileError when it does not exist,
    :class:`NotAFileError` when it is a FIFO, a device, a socket or a folder."""
    found = kind_of(path)
    if found is None:
        return
    if found == "missing":
        raise DataFileError(f"{what} {path} does not exist; {fix}")
    raise NotAFileError(f"{what} {path} is {found}, not a regular file; {fix}")


@contextmanager
def c_path(path: str | os.PathLike[str]) -> Iterator[str]:
    """``path`` as text a C library can open (faiss's SWIG wrapper takes UTF-8 only): the
    path itself, or for a name whose bytes are not UTF-8, ``/proc/self/fd/N`` of the file
    opened here (closed when the block ends). Refused (exit 2) where there is no /proc."""
    text = os.fspath(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        yield text
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        proc = f"/proc/self/fd/{fd}"
        if not os.path.exists(proc):
            shown = os.fsencode(path).decode("utf-8", "backslashreplace")
            raise DataFileError(
                f"{shown}: the name is not valid UTF-8, which faiss cannot open here; "
                "rename it (or link it from a UTF-8 name)"
            )
        yield proc
    finally:
        os.close(fd)


def _too_deep(where: str, kind: str) -> NestingTooDeepError:
    return NestingTooDeepError(
        f"{where} nests {kind} deeper than indexcheck can read (about "
        f"{sys.getrecursionlimit()} levels); flatten it"
    )


def loads_json(text: str | bytes, where: str) -> Any:
    """``json.loads``; a document nested too deeply is :class:`NestingTooDeepError` and
    an integer too long to convert a DataFileError, both naming ``where`` (a
    ``json.JSONDecodeError`` is left to the caller)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise _too_deep(where, "JSON arrays or objects") from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # an integer longer than Python converts (sys.get_int_max_str_digits)
        raise DataFileError(
            f"{where} holds an integer of more than {sys.get_int_max_str_digits()} digits, "
            "which indexcheck does not read; write it as a string"
        ) from None


def json_object(
    text: str | bytes, where: str, fix: str, error: type[IndexcheckError] = DataFileError
) -> dict[str, Any]:
    """A JSON object from ``text``; anything else is ``error`` naming ``where`` and saying
    ``fix`` (bad JSON with its reason and character, or another JSON value)."""
    try:
        found = loads_json(text, where)
    except json.JSONDecodeError as exc:
        reason = f"{exc.msg} at character {exc.pos}"
        raise error(f"{where} is not valid JSON ({reason}); {fix}") from None
    if not isinstance(found, dict):
        kinds = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
        kind = kinds.get(type(found), "a number")
        raise error(f"{where} is not a JSON object but {kind}; {fix}")
    return found


def loads_toml(text: str, where: str) -> dict[str, Any]:
    """``tomllib.loads``; a document nested too deeply is :class:`NestingTooDeepError`
    naming ``where`` (a ``tomllib.TOMLDecodeError`` is left to the caller)."""
    import tomllib

    try:
        return tomllib.loads(text)
    except RecursionError:
        raise _too_deep(where, "TOML arrays or tables") from None


def read_toml(path: Path, what: str = "config file") -> dict[str, Any]:
    """A TOML file that must be a regular file (never a FIFO or /dev/zero)."""
    require_file(path, what, "pass the path of an indexcheck.toml file")
    from .limits import read_document

    text = read_document(path, str(path)).decode("utf-8-sig")
    return loads_toml(text, str(path))


__all__ = ["c_path", "kind_of", "loads_json", "loads_toml", "read_toml", "require_file"]
