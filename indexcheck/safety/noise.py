"""Third-party libraries' stderr noise, held back unless ``INDEXCHECK_DEBUG=1``.

Some libraries write to stderr on their own (Milvus Lite logs a long traceback when another
process holds its data folder; gRPC's C core prints straight to file descriptor 2), in front
of indexcheck's own failure line, which already says what is wrong. Python warnings are left
to Python's filters. :func:`library_noise` captures, for the block it wraps, what reaches
descriptor 2 and what Python loggers emit (used around opening and closing Milvus Lite and
connecting gRPC channels, where no progress bar of ours runs). :func:`install_cli_logging`
routes every library log record of a CLI run to one handler that drops them, and asks gRPC
for errors only (``GRPC_VERBOSITY``, unless the user set it). Under ``INDEXCHECK_DEBUG=1``
everything is written to stderr, scrubbed of secrets; the last capture stays readable through
:func:`last_captured` (tests, bug reports).
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from .redact import scrub

DEBUG_ENV = "INDEXCHECK_DEBUG"
_lock = threading.Lock()
_last: list[str] = [""]


def debug() -> bool:
    """True when ``INDEXCHECK_DEBUG`` asks for tracebacks and library output."""
    return bool(os.environ.get(DEBUG_ENV))


def last_captured() -> str:
    """What the last :func:`library_noise` block captured (secrets scrubbed)."""
    return _last[0]


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("%(name)s: %(levelname)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(self.format(record))
        except Exception:  # a record that cannot be formatted is noise too
            pass


@contextmanager
def library_noise() -> Iterator[None]:
    """Capture file descriptor 2 and Python log records while the block runs; show them
    (scrubbed) only under ``INDEXCHECK_DEBUG=1``. Nesting is fine (the outer block wins)."""
    if not _lock.acquire(blocking=False):  # nested or another thread: the outer one captures
        yield
        return
    collect = _Collect()
    root = logging.getLogger()
    root.addHandler(collect)
    saved_fd: int | None = None
    sink = tempfile.TemporaryFile()  # noqa: SIM115 (closed in finally)
    try:
        try:
            sys.stderr.flush()
            saved_fd = os.dup(2)
            os.dup2(sink.fileno(), 2)
        except (OSError, ValueError, AttributeError):  # no fd 2 (embedded interpreters)
            saved_fd = None
        yield
    finally:
        if saved_fd is not None:
            try:
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
        root.removeHandler(collect)
        sink.seek(0)
        raw = sink.read().decode("utf-8", "replace")
        sink.close()
        text = scrub("\n".join([*collect.lines, raw]).strip())
        _last[0] = text
        _lock.release()
        if text and debug():
            sys.stderr.write(text + "\n")


class _CliLogHandler(logging.Handler):
    """Library log records and Python warnings: printed (scrubbed) only in debug mode."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.setFormatter(logging.Formatter("%(name)s: %(levelname)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if not debug() or _lock.locked():  # a library_noise block collects it already
            return
        try:
            sys.stderr.write(scrub(self.format(record)) + "\n")
        except Exception:
            pass


_cli_handler = _CliLogHandler()


def install_cli_logging() -> None:
    """For a CLI run: library log records go to one handler that prints them only under
    ``INDEXCHECK_DEBUG=1`` (Python's last-resort handler would print every warning)."""
    root = logging.getLogger()
    if _cli_handler not in root.handlers:
        root.addHandler(_cli_handler)
    if not debug():
        # gRPC's C core logs straight to fd 2; ask it for errors only (a user's own
        # setting wins)
        os.environ.setdefault("GRPC_VERBOSITY", "ERROR")


__all__ = ["debug", "install_cli_logging", "last_captured", "library_noise"]
