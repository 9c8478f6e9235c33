"""What a front end (the CLI, a service) wraps a run in, and how it words a failure: secret
values scrubbed from every log record and message, third-party noise held back unless
``INDEXCHECK_DEBUG=1``, warnings about secrets sent where the front end shows them, and
control characters quoted from user data shown, never sent.
"""

from __future__ import annotations

import errno
import os
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..errors import EXIT_COULD_NOT_FINISH, EXIT_INPUT, IndexcheckError
from .noise import install_cli_logging
from .redact import install_log_scrubber, scrub
from .secrets import warnings_to
from .textsafe import visible


@contextmanager
def guarded(warn: Callable[[str], None]) -> Iterator[None]:
    """Scrub secrets from logs, hold third-party noise back, and send secret warnings (a
    key with stray whitespace) to ``warn`` for the length of the block."""
    install_log_scrubber()
    install_cli_logging()
    with warnings_to(warn):
        yield


def one_line(text: str) -> str:
    """``text`` on one line: runs of whitespace, newlines included, become one space, no
    secret in use is left, and control characters are shown, never sent."""
    return visible(" ".join(scrub(text).split()))


def failure(exc: BaseException) -> tuple[str, int]:
    """The one line and the exit code a front end ends with for ``exc``: an indexcheck
    error's own message and code; a path too long for the file system (ENAMETOOLONG, met
    wherever a given path is first opened) bad input, exit 2; a full disk named as such;
    anything else 'could not finish' (exit 3) with its type."""
    from ..output.files import disk_full

    if isinstance(exc, IndexcheckError):
        return one_line(str(exc)), exc.exit_code
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        # only a path the user gave is ever that long: bad input, wherever it was opened
        shown = os.fsencode(exc.filename or "").decode("utf-8", "backslashreplace")
        name = f"the path {shown[:60]}{'...' if len(shown) > 60 else ''}" if shown else "a path"
        message = (
            f"{name} is too long for the file system ({exc.strerror}); pass a shorter "
            "path or a shorter name"
        )
        return one_line(message), EXIT_INPUT
    if disk_full(exc):  # SQLite or a writer deep in a library: name the cause
        message = (
            f"the disk is full ({exc}); free some space or write the outputs "
            "(--json, --report, --rows, --cache) to another disk"
        )
    else:
        message = (
            f"could not finish: {type(exc).__name__}: {exc} "
            "(set INDEXCHECK_DEBUG=1 for a traceback)"
        )
    return one_line(message), EXIT_COULD_NOT_FINISH


def debug_traceback() -> str:
    """The traceback being handled, scrubbed of secrets, when ``INDEXCHECK_DEBUG`` is set;
    else nothing."""
    return scrub(traceback.format_exc()) if os.environ.get("INDEXCHECK_DEBUG") else ""


__all__ = ["debug_traceback", "failure", "guarded", "one_line"]
