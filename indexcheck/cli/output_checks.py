"""Output paths checked before any work: ``--json``, ``--report`` and the other output files
and folders must be creatable or writable, probed for real once the guard has checked them
against the inputs (:mod:`.guard`). Each check is a click option callback; exit 2 naming the
option and what to pass instead."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import click

from ..errors import InputError

#: where nothing is ever created: a probe file there fails, or is not ours to make
_DEVICE_FOLDERS = ("/dev", "/proc", "/sys")


def _shown(path: Path) -> str:
    """A path as its bytes, with bytes that are not UTF-8 written as escapes."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _limit(base: Path, name: str, fallback: int) -> int:
    try:
        return os.pathconf(base, name)
    except (OSError, ValueError):
        return fallback


def _path_problem(path: Path) -> str | None:
    """Why ``path`` could never be created, read from the path alone (None when it could):
    a name over the file system's NAME_MAX, or the whole path over PATH_MAX, in bytes."""
    try:
        os.fspath(path).encode("utf-8")
    except UnicodeEncodeError:  # pyarrow, matplotlib and the reports take UTF-8 names only
        return "its name is not valid UTF-8, which not every writer can create"
    base = _nearest_existing(path)
    if not base.is_dir():
        base = base.parent
    if os.path.abspath(path).startswith(tuple(f + "/" for f in _DEVICE_FOLDERS)):
        return None  # /dev/fd/63 and the like name what exists already
    name_max = _limit(base, "PC_NAME_MAX", 255)
    for part in path.parts:
        size = len(os.fsencode(part))
        if size > name_max:
            return (
                f"the name {_shown(Path(part))[:40]}... is {size} bytes, longer than the "
                f"{name_max} bytes a file name may take here"
            )
    size = len(os.fsencode(os.path.abspath(path)))
    path_max = _limit(base, "PC_PATH_MAX", 4096)
    if size >= path_max:
        return f"it is {size} bytes long, over the system's {path_max}-byte limit on a path"
    return None


def _special(path: Path) -> bool:
    """A FIFO, device or socket, or a path in /dev, /proc or /sys (``/dev/stdout``,
    ``/dev/fd/63`` of ``>(jq .)``): written through, and never probed by creating a file
    beside it."""
    try:
        if os.path.abspath(path).startswith(tuple(f + "/" for f in _DEVICE_FOLDERS)):
            return path.exists()
        mode = os.stat(path).st_mode
    except OSError:
        return False
    import stat

    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _check_path(option: str, value: Path, fix: str = "pass another path") -> bool:
    """Refuse (exit 2) an output path that could never be created; True when it is a
    special file to be written through (its writability asked of the OS, nothing made)."""
    why = _path_problem(value)
    if why is not None:
        raise InputError(f"{option} {_shown(value)} cannot be written ({why}); {fix}")
    if _special(value):
        if not os.access(value, os.W_OK):
            raise InputError(f"{option} {_shown(value)} is not writable; {fix}")
        return True
    return False


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        try:
            if candidate.exists():
                return candidate
        except OSError:  # a name or path too long to even ask about
            continue
    return Path.cwd()


def _writable_folder(folder: Path) -> str | None:
    """Why files cannot be created in ``folder`` (None when they can). Probed for real: the
    folder is created and a temporary file written and removed (``os.access`` answers yes
    for root, even on /proc)."""
    import tempfile

    base = _nearest_existing(folder)
    if not base.is_dir():
        return f"{base} is not a folder"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".indexcheck-probe-"):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


_PROBES = "indexcheck.probes"


def _probe(ctx: click.Context | None, folder: Path, message: str) -> None:
    """Probe ``folder`` for writing (``message`` with ``{why}`` is the error). Under a
    command, the probe waits until the guard has checked every output against the inputs
    (:func:`run_probes`): probing creates the folder, which must never happen inside an
    input. Without a context it runs now."""
    if ctx is not None:
        ctx.meta.setdefault(_PROBES, []).append((folder, message))
        return
    why = _writable_folder(folder)
    if why is not None:
        raise InputError(message.format(why=why))


def run_probes(ctx: click.Context) -> None:
    """Run the writability probes the option callbacks of ``ctx`` deferred (exit 2)."""
    for folder, message in ctx.meta.pop(_PROBES, []):
        why = _writable_folder(folder)
        if why is not None:
            raise InputError(message.format(why=why))


def check_json_path(ctx: click.Context | None, param: object, value: str | None) -> str | None:
    """``--json PATH``: a file we can create or overwrite, or '-'; checked before any work."""
    if value is None or value == "-":
        return value
    path = Path(value)
    if _check_path("--json", path):
        return value
    if path.is_dir():
        raise InputError(
            f"--json {value} is a folder; pass a file path such as {path / 'result.json'}"
        )
    folder = path.parent if str(path.parent) else Path(".")
    _probe(ctx, folder, f"--json {value} cannot be written ({{why}}); pass another path")
    if path.exists() and not os.access(path, os.W_OK):
        raise InputError(f"--json {value} is not writable; pass another path")
    return value


def _dangling(option: str, path: Path) -> None:
    """Refuse an output folder that is a symlink to nothing (mkdir would fail on it)."""
    if path.is_symlink() and not path.exists():
        target = os.readlink(path)
        raise InputError(
            f"{option} {path} is a symlink to {target}, which does not exist; create "
            f"{target} or pass another folder"
        )


def check_folder_output(
    option: str,
) -> Callable[[click.Context | None, object, Path | None], Path | None]:
    """A callback checking that an output folder (``--report``, ``sheet export --out``)
    can be created or written into: not a file, not a dangling symlink; before any work."""

    def check(ctx: click.Context | None, param: object, value: Path | None) -> Path | None:
        if value is None:
            return value
        _check_path(option, value, "pass another folder")
        _dangling(option, value)
        if value.exists() and not value.is_dir():
            raise InputError(f"{option} {value} is a file; pass a folder path")
        _probe(ctx, value, f"{option} {value} cannot be written ({{why}}); pass another folder")
        return value

    return check


#: ``--report DIR``: a folder we can create or write into; checked before any work
check_report_dir = check_folder_output("--report")


def check_file_output(
    option: str, formats: bool = False
) -> Callable[[click.Context, object, Path | None], Path | None]:
    """A callback checking that an output file (``--junit``, ``--out``, ``--rows``) can be
    written; ``formats``: its suffix must name a rows format (.parquet, .csv, .jsonl)."""

    def check(ctx: click.Context, param: object, value: Path | None) -> Path | None:
        if value is None:
            return value
        if formats:
            from ..api import check_rows_suffix

            check_rows_suffix(value, option)
        if _check_path(option, value):
            return value
        if value.is_dir():
            raise InputError(f"{option} {value} is a folder; pass a file path")
        folder = value.parent if str(value.parent) else Path(".")
        _probe(ctx, folder, f"{option} {value} cannot be written ({{why}}); pass another path")
        return value

    return check


__all__ = [
    "check_file_output",
    "check_folder_output",
    "check_json_path",
    "check_report_dir",
    "run_probes",
]
