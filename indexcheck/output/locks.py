"""A file lock (``fcntl.flock``) around every read-modify-write or append that another
indexcheck process may do at the same time: the evidence sheet's revisions and runs, the
caches. Held by the open file, so a process that dies (SIGKILL included) releases it."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: the lock file a folder's writers share (left in place: removing it would race)
LOCK_NAME = ".indexcheck.lock"


@contextmanager
def locked(folder: str | Path, *, shared: bool = False) -> Iterator[None]:
    """Hold ``folder``'s lock for the block: exclusive for writers, ``shared`` for readers
    (many at once, never while a writer holds it). A reader of a folder no writer has
    locked yet (no lock file: an audit copy, a read-only folder) reads it unlocked."""
    path = Path(folder) / LOCK_NAME
    if shared:  # a reader creates nothing: no lock file yet means no writer so far
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            yield
            return
    else:
        Path(folder).mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


__all__ = ["LOCK_NAME", "locked"]
