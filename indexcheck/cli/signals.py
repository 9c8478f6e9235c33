"""How the command line ends on a signal or a closed stdout.

SIGINT (Ctrl-C), SIGTERM (``docker stop``, a CI job cancelled) and SIGHUP (the terminal
closed) all end a run the same way: :class:`Stopped` (a ``KeyboardInterrupt``) is raised
where the run is, every ``with``/``finally`` on the way out removes its scratch folder, the
outputs are marked failed (:func:`.guard.fail`) and the exit code is 128 + the signal number
(130, 143, 129). From the first signal on, further ones are held back, so a second Ctrl-C or
SIGTERM cannot stop the cleanup half way; the process then ends with the first one's code.

A stdout closed by its reader (``--json - | head -c 100``) ends the run quietly: no message,
exit 141 (128 + SIGPIPE), as a shell tool killed by SIGPIPE does.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

#: the signals that stop a run, as Ctrl-C does
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: the exit code of a run whose stdout was closed by its reader (128 + SIGPIPE)
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


class Stopped(KeyboardInterrupt):
    """A run stopped by ``signum``; ends with exit code 128 + ``signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    @property
    def message(self) -> str:
        if self.signum == signal.SIGINT:
            return "interrupted"
        return f"stopped by {signal.Signals(self.signum).name}"


def _hold_back(signum: int, frame: FrameType | None) -> None:
    """A signal after the first: the cleanup under way finishes; nothing else happens."""


def _stop(signum: int, frame: FrameType | None) -> None:
    for sig in STOP_SIGNALS:  # from now on the cleanup must not be cut short
        signal.signal(sig, _hold_back)
    raise Stopped(signum)


def install() -> None:
    """Stop runs on SIGINT, SIGTERM and SIGHUP alike (the main thread only)."""
    for sig in STOP_SIGNALS:
        if signal.getsignal(sig) is signal.SIG_IGN:
            continue  # started under nohup (SIGHUP) or with a signal ignored: keep it so
        signal.signal(sig, _stop)


def settle() -> None:
    """Ignore the stop signals from here to the exit: the run and its cleanup are over, and
    Python's own shutdown would otherwise put back the default (death by the signal)."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


def stopped_by(exc: BaseException | None) -> Stopped | None:
    """The :class:`Stopped` that ``exc`` is or was raised from (click wraps it in Abort)."""
    while exc is not None:
        if isinstance(exc, Stopped):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def broken_pipe(exc: BaseException | None) -> bool:
    """Whether ``exc`` is (or came from) writing to a stdout its reader closed."""
    while exc is not None:
        if isinstance(exc, BrokenPipeError):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def quiet_stdout() -> None:
    """Point stdout at /dev/null, so that the flush at exit does not fail again on the
    closed pipe (Python would print 'Exception ignored ... BrokenPipeError')."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real stdout (a test runner): nothing
        pass


__all__ = [
    "EXIT_BROKEN_PIPE",
    "STOP_SIGNALS",
    "Stopped",
    "broken_pipe",
    "install",
    "settle",
    "stopped_by",
]
