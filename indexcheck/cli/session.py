"""The run timer of a command that calls the core itself rather than :mod:`indexcheck.api`.

Nothing is opened here: every command passes its specs to :mod:`indexcheck.api`, which
opens and closes the stores and embedders they name and stamps the result with its own
timer. The few commands that open nothing through the api (check-answers) start a
:class:`Session` for their manifest's wall time; :func:`.finish.stamp` reads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..corpus import Corpus, load_chunks
from ..manifest import Run
from ..secrets import spec_password_warning

if TYPE_CHECKING:
    from ..embedders.base import Embedder
    from ..stores.base import VectorStore

_KEY = "indexcheck.session"


class Session:
    """One command's run timer; it opens nothing, so its manifest names no store or embedder."""

    store: VectorStore | None = None
    embedder: Embedder | None = None

    def __init__(self, command: str) -> None:
        self.run = Run(command)


def session(ctx: click.Context, command: str | None = None) -> Session:
    """The command's session, created (its timer started) on first use."""
    found: Session | None = ctx.meta.get(_KEY)
    if found is None:
        found = Session(command or (ctx.info_name or "indexcheck"))
        ctx.meta[_KEY] = found
    return found


def warn_spec(spec: str | None) -> None:
    """Say on stderr when a store spec carries a password (the environment should)."""
    warning = spec_password_warning(spec) if spec else None
    if warning:
        click.echo(f"warning: {warning}", err=True)


def current_session(ctx: click.Context) -> Session | None:
    found: Session | None = ctx.meta.get(_KEY)
    return found


def open_corpus(path: Path | None, id_column: str, text_column: str) -> Corpus | None:
    return None if path is None else load_chunks(path, id_column, text_column)
