"""The click command class every indexcheck command uses: one-line errors, exit codes.

Exit codes: 0 passed, 1 check failed, 2 usage or bad input, 3 could not finish; a run
stopped by a signal ends with 128 + its number, one whose stdout was closed with 141
(:mod:`.signals`).
An :class:`~indexcheck.errors.IndexcheckError` (also one raised by an option callback while
parsing) becomes ``error: <message>`` on stderr and its exit code, whether the command runs
under the ``indexcheck`` group or alone; ``INDEXCHECK_DEBUG=1`` adds the traceback and keeps
the error's exit code. Every line (traceback included) goes through the one redactor
(:func:`indexcheck.api.one_line`), so no secret in use is printed, whatever raised it; secret
warnings (a key with stray whitespace) print as ``warning: ...`` lines.

Before the body runs, :func:`.guard.guard` refuses output paths that are, or lie inside,
an input (exit 2); when the body then fails, :func:`.guard.fail` leaves no earlier success
in its outputs (``--json`` gets the failed result).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from .. import api
from ..errors import EXIT_CHECK_FAILED, EXIT_COULD_NOT_FINISH, EXIT_INPUT, EXIT_OK, IndexcheckError
from .signals import EXIT_BROKEN_PIPE, broken_pipe, quiet_stdout, stopped_by

#: a KeyboardInterrupt raised by no signal handler of ours (a library, a test): as SIGINT
EXIT_STOPPED = 130

one_line = api.one_line


def _debug_traceback() -> None:
    sys.stderr.write(api.debug_traceback())


def _warning(message: str) -> None:
    click.echo(f"warning: {one_line(message)}", err=True)


def _failed(ctx: click.Context | None, message: str, code: int) -> None:
    if ctx is not None:
        from .guard import fail

        fail(ctx, message, code)


def _exit_code(exc: BaseException) -> int:
    """The exit code a click exit, a SystemExit, a ClickException or an Abort ends with."""
    if isinstance(exc, click.Abort):
        return EXIT_COULD_NOT_FINISH
    if isinstance(exc, click.ClickException):  # the group maps a code of 1 to 2
        return int(exc.exit_code) if exc.exit_code != EXIT_CHECK_FAILED else EXIT_INPUT
    if isinstance(exc, click.exceptions.Exit):
        return int(exc.exit_code)
    code = getattr(exc, "code", None)  # SystemExit: None is 0, a message is 1
    if code is None:
        return EXIT_OK
    return code if isinstance(code, int) and not isinstance(code, bool) else EXIT_CHECK_FAILED


@contextmanager
def one_line_errors(ctx: click.Context | None) -> Iterator[None]:
    """Map errors to one line on stderr and their exit code; a traceback only in debug mode.
    A run that ends in an error (exit 2 or 3) marks its outputs failed (see guard.fail)."""
    try:
        with api.guarded(_warning):
            yield
    except IndexcheckError as exc:
        _debug_traceback()
        message = one_line(str(exc))
        click.echo(f"error: {message}", err=True)
        _failed(ctx, message, exc.exit_code)
        raise click.exceptions.Exit(exc.exit_code) from None
    except (click.exceptions.Exit, SystemExit, click.ClickException, click.Abort) as exc:
        code = _exit_code(exc)
        if code not in (EXIT_OK, EXIT_CHECK_FAILED):
            message = exc.format_message() if isinstance(exc, click.ClickException) else ""
            _failed(ctx, one_line(message) or f"the run ended with exit code {code}", code)
        raise
    except KeyboardInterrupt as exc:
        stop = stopped_by(exc)
        message, code = (stop.message, stop.exit_code) if stop else ("interrupted", EXIT_STOPPED)
        click.echo(message, err=True)
        _failed(ctx, message, code)
        raise click.exceptions.Exit(code) from None
    except Exception as exc:  # a bug or an SDK error no backend mapped: still one line
        if broken_pipe(exc):  # stdout closed by its reader (``| head``): quietly, exit 141
            _failed(ctx, "stdout was closed before the run ended", EXIT_BROKEN_PIPE)
            quiet_stdout()
            raise click.exceptions.Exit(EXIT_BROKEN_PIPE) from None
        _debug_traceback()
        message, code = api.failure(exc)  # 3, or 2 for a path too long for the system
        click.echo(f"error: {message}", err=True)
        _failed(ctx, message, code)
        raise click.exceptions.Exit(code) from None


class Command(click.Command):
    """A click command whose option callbacks and body end through :func:`one_line_errors`,
    and whose outputs are checked against its inputs before the body runs.

    ``writes``: parameters that are outputs of this command although other commands read
    them (``judge`` writes ``sheet_dir``; ``sheet export`` reads it). ``more_paths``: the
    body names more paths (``ci`` reads its config first) through :func:`.guard.add`,
    which then probes the outputs for writing.
    """

    def __init__(
        self,
        *args: Any,
        writes: tuple[str, ...] = (),
        more_paths: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.writes = writes
        self.more_paths = more_paths

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        with one_line_errors(parent):
            return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        from .guard import guard

        with one_line_errors(ctx):
            # before any work: no output over an input, then the outputs probed writable
            guard(ctx, self.writes, complete=not self.more_paths)
            return super().invoke(ctx)


__all__ = ["Command", "one_line", "one_line_errors"]
