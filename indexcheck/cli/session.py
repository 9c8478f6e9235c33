"""The run timer of a command that calls the core itself rather than :mod:`indexcheck.api`.

Nothing is opened here: every command passes its specs to :mod:`indexcheck.api`, which
opens and closes the stores and embedders they name and stamps the result with its own
timer. The few commands that open nothing through the api (check-answers) start a
:class:`Session` for their manifest's wall time; :func:`.finish.stamp` reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..inputs.corpus import Corpus, load_chunks
from ..output.manifest import Run
from ..safety.secrets import spec_password_warning

if TYPE_CHECKING:
    from ..embedders.base import Embedder
    from ..inputs.questions import Question
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


@dataclass
class QuestionInputs:
    """What a command that retrieves for questions reads from its options: the common
    ``--filter``, the questions, the chunks, and the filters' manifest entries."""

    filter: Any
    questions: list[Question]
    corpus: Corpus | None

    def filters_manifest(self) -> dict[str, Any]:
        from ..commands.sweep_threshold.filters import question_filters
        from ..inputs.question_filters import filters_manifest

        return filters_manifest(question_filters(self.questions, self.filter))


def question_inputs(
    filter_text: str | None,
    questions_path: Path,
    chunks_path: Path | None,
    id_column: str,
    text_column: str,
) -> QuestionInputs:
    """The ``--filter`` parsed, ``--questions`` and ``--chunks`` read, in that order (a bad
    filter is refused before any file is read)."""
    from ..filters import parse_filter
    from ..inputs.questions import load_questions

    common = parse_filter(filter_text) if filter_text is not None else None
    questions = load_questions(questions_path)
    return QuestionInputs(common, questions, open_corpus(chunks_path, id_column, text_column))
