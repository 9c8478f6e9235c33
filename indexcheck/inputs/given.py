"""A public function's chunks and questions as given, or loaded from the path given.

:mod:`indexcheck.api` takes either a path or what :func:`~indexcheck.inputs.corpus.load_chunks` /
:func:`~indexcheck.inputs.questions.load_questions` return; these turn both into the loaded form.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .corpus import Corpus, load_chunks
from .questions import Question, load_questions


def corpus_of(
    chunks: str | Path | Corpus | None, id_column: str = "id", text_column: str = "text"
) -> Corpus | None:
    """``chunks`` loaded from its file (its ``id_column``/``text_column``), or as given."""
    return load_chunks(chunks, id_column, text_column) if isinstance(chunks, str | Path) else chunks


def questions_of(questions: str | Path | Sequence[Question]) -> Sequence[Question]:
    """``questions`` loaded from its file, or as given."""
    return load_questions(questions) if isinstance(questions, str | Path) else questions


__all__ = ["corpus_of", "questions_of"]
