"""What several commands read from their options the same way: the chunks file, the
questions with the common ``--filter``, and the warning for a password inside a store spec.
Nothing is opened here: every command passes its specs to the face (:mod:`indexcheck.api`),
which opens, closes and stamps."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .. import api, load_chunks, load_questions

if TYPE_CHECKING:
    from ..api import Corpus, Question


def session(ctx: click.Context, command: str | None = None) -> None:
    """Nothing to start: the face function stamps the run's manifest and times it."""


def warn_spec(spec: str | None) -> None:
    """Say on stderr when a store spec carries a password (the environment should)."""
    warning = api.spec_password_warning(spec) if spec else None
    if warning:
        click.echo(f"warning: {warning}", err=True)


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
        return api.filters_manifest(self.questions, self.filter)


def question_inputs(
    filter_text: str | None,
    questions_path: Path,
    chunks_path: Path | None,
    id_column: str,
    text_column: str,
) -> QuestionInputs:
    """The ``--filter`` parsed, ``--questions`` and ``--chunks`` read, in that order (a bad
    filter is refused before any file is read)."""
    common = api.parse_filter(filter_text) if filter_text is not None else None
    questions = load_questions(questions_path)
    return QuestionInputs(common, questions, open_corpus(chunks_path, id_column, text_column))
