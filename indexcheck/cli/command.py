"""The click command class every indexcheck command uses: one-line errors, exit codes.

Exit codes: 0 passed, 1 check failed, 2 usage or bad input, 3 could not finish.
An :class:`~indexcheck.errors.IndexcheckError` (also one raised by an option callback while
parsing) becomes ``error: <message>`` on stderr and its exit code, whether the command runs
under the ``indexcheck`` group or alone; ``INDEXCHECK_DEBUG=1`` adds the traceback and keeps
the error's exit code.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from ..errors import EXIT_COULD_NOT_FINISH, IndexcheckError
from ..textsafe import visible


def one_line(text: str) -> str:
    """``text`` on one line: runs of whitespace, newlines included, become one space, and
    control characters a message quotes from user data are shown, never sent."""
    return visible(" ".join(text.split()))


def _debug_traceback() -> None:
    if os.environ.get("INDEXCHECK_DEBUG"):
        traceback.print_exc(file=sys.stderr)


@contextmanager
def one_line_errors(ctx: click.Context | None) -> Iterator[None]:
    """Map errors to one line on stderr and their exit code; a traceback only in debug mode."""
    try:
        yield
    except IndexcheckError as exc:
        _debug_traceback()
        click.echo(f"error: {one_line(str(exc))}", err=True)
        raise click.exceptions.Exit(exc.exit_code) from None
    except (click.exceptions.Exit, click.ClickException, click.Abort):
        raise
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        raise click.exceptions.Exit(EXIT_COULD_NOT_FINISH) from None
    except Exception as exc:  # a bug or an SDK error no backend mapped: still one line
        _debug_traceback()
        click.echo(
            one_line(
                f"error: could not finish: {type(exc).__name__}: {exc} "
                "(set INDEXCHECK_DEBUG=1 for a traceback)"
            ),
            err=True,
        )
        raise click.exceptions.Exit(EXIT_COULD_NOT_FINISH) from None


class Command(click.Command):
    """A click command whose option callbacks and body end through :func:`one_line_errors`."""

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
        with one_line_errors(ctx):
            return super().invoke(ctx)


__all__ = ["Command", "one_line", "one_line_errors"]
