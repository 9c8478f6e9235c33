"""What several commands read from their options the same way: the chunks file, and the
warning for a password inside a store spec. Nothing is opened here: every command passes its
specs to the face (:mod:`indexcheck.api`), which opens, closes and stamps."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from .. import api, load_chunks

if TYPE_CHECKING:
    from ..api import Corpus


def warn_spec(spec: str | None) -> None:
    """Say on stderr when a store spec carries a password (the environment should)."""
    warning = api.spec_password_warning(spec) if spec else None
    if warning:
        click.echo(f"warning: {warning}", err=True)


def open_corpus(path: Path | None, id_column: str, text_column: str) -> Corpus | None:
    return None if path is None else load_chunks(path, id_column, text_column)
