"""The click command class every indexcheck command uses: one-line errors, exit codes.

Exit codes: 0 passed, 1 check failed, 2 usage or bad input, 3 could not finish.
An :class:`~indexcheck.errors.IndexcheckError` (also one raised by an option callback while
parsing) becomes ``error: <message>`` on stderr and its exit code, whether the command runs
under the ``indexcheck`` group or alone; ``INDEXCHECK_DEBUG=1`` re-raises for a traceback.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from ..errors import EXIT_COULD_NOT_FINISH, IndexcheckError


@contextmanager
def one_line_errors(ctx: click.Context | None) -> Iterator[None]:
    """Map errors to one line on stderr and an exit code; never a traceback."""
    try:
        yield
    except IndexcheckError as exc:
        if os.environ.get("INDEXCHECK_DEBUG"):
            raise
        click.echo(f"error: {exc}", err=True)
        raise click.exceptions.Exit(exc.exit_code) from None
    except (click.exceptions.Exit, click.ClickException, click.Abort):
        raise
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        raise click.exceptions.Exit(EXIT_COULD_NOT_FINISH) from None
    except Exception as exc:  # a bug or an SDK error no backend mapped: still one line
        if os.environ.get("INDEXCHECK_DEBUG"):
            raise
        click.echo(
            f"error: could not finish: {type(exc).__name__}: {exc} "
            "(set INDEXCHECK_DEBUG=1 for a traceback)",
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


__all__ = ["Command", "one_line_errors"]
