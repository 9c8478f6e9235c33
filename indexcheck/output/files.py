"""Output files: never written over an input, always written atomically, never stale.

- :func:`refuse_overlaps`: every output path is resolved with symlinks followed and refused
  (:class:`OutputOverInputError`, exit 2) when it is, or lies inside, an input of the run
  (data files, config, prompt, a store's files, the sheet an export reads), or when two
  outputs are one file. Checked before any work.
- :func:`replacing` / :func:`write_atomic`: a temporary file in the same folder, flushed to
  disk, then renamed over the target with :func:`os.replace`: a reader never sees half a file,
  a failed write leaves the old one whole, a symlink at the target is replaced, not followed.
- :func:`failed_json` / :func:`failed_junit`: what a failed run leaves behind, so no file from
  an earlier run keeps claiming success.

The CLI reaches them through :mod:`indexcheck.cli.guard`; this module never prints and never
imports click.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DiskFullError, OutputError, OutputOverInputError
from .schema import SCHEMA_VERSION

#: characters XML 1.0 forbids (a message may quote a path holding them)
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
#: errno values that mean "the disk (or the quota) is full"
DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


@dataclass(frozen=True)
class PathUse:
    """One path a command reads or writes.

    ``what``: how the user named it (``--json``, ``the --store folder``); ``kind``:
    ``file``, ``folder`` (an output folder other files may share, like ``--report``) or
    ``own`` (a folder that belongs to its writer alone, like ``--sheet`` or an export).
    """

    what: str
    path: Path
    kind: str = "file"


def resolve(path: str | os.PathLike[str]) -> Path:
    """``path`` made absolute with every symlink followed (also for a path not yet made)."""
    return Path(os.path.realpath(os.path.expanduser(os.fspath(path))))


def _inside(path: Path, folder: Path) -> bool:
    return path != folder and folder in path.parents


def _same_file(a: Path, b: Path) -> bool:
    """Two existing paths naming one file (a hard link, a bind mount, a case-insensitive
    file system): the inode says what the path text cannot."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _shown(use: PathUse, real: Path) -> str:
    """``use.path``, plus where it really points when a symlink or ``..`` moves it."""
    given = str(use.path)
    absolute = Path(os.path.abspath(os.path.expanduser(given)))
    return given if absolute == real else f"{given} (which resolves to {real})"


def refuse_overlaps(outputs: Sequence[PathUse], inputs: Sequence[PathUse]) -> None:
    """Raise :class:`OutputOverInputError` (exit 2) when an output is an input, lies
    inside an input folder, is another output, or lies inside an output folder that
    belongs to its writer (``kind="own"``). One line naming both paths and the fix."""
    real_inputs = [(u, resolve(u.path)) for u in inputs]
    real_outputs = [(u, resolve(u.path)) for u in outputs]
    for out, real in real_outputs:
        fix = f"indexcheck never writes over or into an input; pass another {out.what} path"
        for inp, source in real_inputs:
            if real == source or _same_file(real, source):
                raise OutputOverInputError(
                    f"{out.what} {_shown(out, real)} is {inp.what} {inp.path}: {fix}"
                )
            if _inside(real, source):
                raise OutputOverInputError(
                    f"{out.what} {_shown(out, real)} lies inside {inp.what} {inp.path}: {fix}"
                )
    for i, (a, real_a) in enumerate(real_outputs):
        for b, real_b in real_outputs[i + 1 :]:
            if real_a == real_b:
                raise OutputOverInputError(
                    f"{a.what} and {b.what} are the same path {real_a}; one would overwrite "
                    f"the other: pass two different paths"
                )
            pairs = ((a, b, real_a, real_b), (b, a, real_b, real_a))
            for own, other, real_own, real_other in pairs:
                if own.kind == "own" and _inside(real_other, real_own):
                    raise OutputOverInputError(
                        f"{other.what} {_shown(other, real_other)} lies inside {own.what} "
                        f"{own.path}, which indexcheck writes alone: pass another "
                        f"{other.what} path"
                    )


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: pseudo file systems: nothing is ever created, renamed or removed in them
_PSEUDO = ("/dev/", "/proc/", "/sys/")


def _in_pseudo_fs(path: Path) -> bool:
    """True when ``path``, or any symlink hop on the way to its target, lies in /dev,
    /proc or /sys. ``/dev/stdout`` is a link to ``/proc/self/fd/1``, and that is a link to
    whatever stdout is: a *regular file* when the shell redirects it, so the target's own
    type cannot tell; the hops can."""
    hop = Path(os.path.abspath(path))
    for _ in range(40):  # the kernel's own limit on a chain of links
        if str(hop).startswith(_PSEUDO) or str(os.path.realpath(hop.parent)).startswith(_PSEUDO):
            return True
        if not hop.is_symlink():
            return False
        link = Path(os.readlink(hop))
        hop = link if link.is_absolute() else Path(os.path.abspath(hop.parent / link))
    return True  # a loop of links: never replace what cannot be resolved


def _special(path: Path) -> bool:
    """True when ``path`` must be written through, never replaced or removed: a device,
    FIFO or socket (symlinks followed), or a path through /dev, /proc or /sys (``--json
    /dev/stdout`` with stdout redirected to a file: a rename there, as root, would replace
    the machine's ``/dev/stdout`` link)."""
    if _in_pseudo_fs(path):
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


@contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; when the block ends without an error the
    temporary file is flushed and renamed over ``path`` (atomic on POSIX), else removed.

    For writers that want a path (pyarrow, matplotlib, faiss). The folder is created. A
    symlink at ``path`` is replaced by the new file; its target is never written. A device
    or FIFO (``/dev/null``, ``/dev/stdout``) is written through instead: there is no file
    to replace.
    """
    target = Path(path)
    if _special(target):  # /dev/null, /dev/stdout, a FIFO: written through, never replaced
        yield target
        return
    folder = target.parent if str(target.parent) else Path(".")
    folder.mkdir(parents=True, exist_ok=True)
    # hidden, and keeping the suffix: writers that pick a format by it (matplotlib,
    # pyarrow) see the target's
    fd, tmp_name = tempfile.mkstemp(dir=folder, prefix=f".{target.stem}.tmp-", suffix=target.suffix)
    tmp = Path(tmp_name)
    try:
        # the mode of the file it replaces (a private 0600 file stays private), else the one
        # open() would give a new file; never mkstemp's 0600
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except OSError:
            mode = 0o666 & ~_umask()
        os.fchmod(fd, mode)
        os.close(fd)
        yield tmp
        with tmp.open("rb+") as f:  # the bytes reach the disk before the rename
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


@contextmanager
def staging(beside: str | os.PathLike[str]) -> Iterator[Path]:
    """A hidden temporary folder beside ``beside`` (same file system, so its files can be
    renamed into place atomically), removed with whatever is left in it at the end."""
    import shutil

    target = Path(beside)
    folder = target.parent if str(target.parent) else Path(".")
    folder.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder, prefix=f".{target.name}.tmp-"))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def publish(written: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Move a file or folder made under :func:`staging` to ``target`` with renames: a
    file (or a folder, when ``target`` does not exist yet) in one rename; else each file
    of the folder in its own rename."""
    src, dest = Path(written), Path(target)
    if src.is_dir() and dest.is_dir():
        for child in sorted(src.iterdir()):
            os.replace(child, dest / child.name)
        return
    os.replace(src, dest)


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> Path:
    """Write ``data`` (text is UTF-8) to ``path`` through :func:`replacing`; returns it."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with replacing(path) as tmp:
        tmp.write_bytes(raw)
    return Path(path)


def remove_quietly(path: str | os.PathLike[str]) -> bool:
    """Remove a file (a symlink itself, never its target); True when one was removed."""
    p = Path(path)
    if _special(p):  # never a device, FIFO or socket (nor a symlink to one)
        return False
    try:
        if p.is_symlink() or p.is_file():
            p.unlink()
            return True
    except OSError:
        pass
    return False


def failure(command: str, message: str, exit_code: int) -> dict[str, Any]:
    """The ``--json`` result of a run that did not finish (or was refused)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "ok": False,
        "complete": False,
        "command": command,
        "exit_code": exit_code,
        "error": message,
    }


def failed_json(path: str | os.PathLike[str], payload: dict[str, Any]) -> None:
    """Replace ``--json`` with the failed result; when even that cannot be written (a full
    disk), remove the file, so no earlier ``ok: true`` stays behind. Never raises."""
    text = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    try:
        write_atomic(path, text)
    except OSError:
        remove_quietly(path)


def failed_junit(path: str | os.PathLike[str], command: str, message: str) -> None:
    """Replace a JUnit file with one ``<error>`` testcase saying the run did not finish
    (removed when that cannot be written). Never raises."""
    import xml.etree.ElementTree as ET

    root = ET.Element("testsuites", name="indexcheck", tests="1", failures="0", errors="1")
    suite = ET.SubElement(
        root, "testsuite", name=f"indexcheck {command}", tests="1", failures="0", errors="1"
    )
    case = ET.SubElement(suite, "testcase", classname=f"indexcheck.{command}", name="run")
    ET.SubElement(case, "error", type="could not finish", message=_XML_FORBIDDEN.sub("?", message))
    try:
        write_atomic(path, ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n")
    except OSError:
        remove_quietly(path)


def output_error(what: str, exc: OSError, after: str = "") -> OutputError:
    """The error for an output that could not be written (exit 3): :class:`DiskFullError`
    saying the disk is full when it is, else :class:`OutputError` with the OS reason."""
    if disk_full(exc):
        return DiskFullError(
            f"could not write {what}: the disk is full ({exc.strerror or exc}); free some "
            f"space or write it to another disk{after}"
        )
    return OutputError(f"could not write {what}: {exc.strerror or exc}{after}")


def disk_full(exc: BaseException) -> bool:
    """True for an error that means the disk or quota is full (OSError or SQLite)."""
    if isinstance(exc, OSError) and exc.errno in DISK_FULL:
        return True
    import sqlite3

    if isinstance(exc, sqlite3.Error):
        return getattr(exc, "sqlite_errorcode", None) == 13 or "disk is full" in str(exc)
    return False


__all__ = [
    "OutputOverInputError",
    "PathUse",
    "disk_full",
    "failed_json",
    "failed_junit",
    "failure",
    "output_error",
    "publish",
    "refuse_overlaps",
    "remove_quietly",
    "replacing",
    "resolve",
    "staging",
    "write_atomic",
]
