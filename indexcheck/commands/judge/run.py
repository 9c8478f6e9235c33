"""judge's and check-answers' runs, and diagnose's judging of answers, the same for the api
(and so the CLI): answers read from their file, a judge opened by the caller's opener only
once every input is good, judgements cached in a SQLite file."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from ...inputs.answers import DEFAULT_CITATION_PATTERN, AnswerRow, load_answers
from ...inputs.corpus import Corpus, load_chunks
from ...judges import judgement_cache
from ...judges.base import Judge
from . import AnswerResult, JudgeResult, judge_answers, load_prompt
from .answer_checks import AnswerChecksResult, check_answers

JudgeOpener = Callable[[], AbstractContextManager[Judge | None]]


def judged_answers(
    answers: Sequence[AnswerRow], open_judge: JudgeOpener, cache: str | Path | None = None
) -> tuple[list[AnswerResult], dict[str, Any]]:
    """The answers judged (with the shipped prompt) by the judge ``open_judge()`` opens,
    judgements cached in the SQLite file ``cache``; and the judge's call stats."""
    with open_judge() as opened, judgement_cache(cache) as replies:
        assert opened is not None
        result = judge_answers(answers, opened, load_prompt(), cache=replies)
        return result.answers, opened.stats.as_dict()


def run_judge(
    answers: str | Path | Sequence[AnswerRow],
    open_judge: JudgeOpener,
    *,
    prompt: str | Path | None = None,
    cache: str | Path | None = None,
    retries: int = 2,
    refusal_pattern: str | None = None,
    allow_unjudged: bool = False,
    progress: Callable[[str], None] | None = None,
    chunks: Corpus | None = None,
    answers_format: str | None = None,
) -> tuple[JudgeResult, dict[str, Any]]:
    """:func:`judge_answers` on ``answers`` (a JSONL/CSV/Parquet file or a trace export,
    ``answers_format`` its format or None to sniff it, ``chunks`` pairing its documents
    without ids; or loaded rows) with the ``prompt`` file (None: the shipped one), read
    before ``open_judge()`` opens the judge. Returns the result and its manifest facts
    (judge, judging stats, prompt)."""
    if isinstance(answers, str | Path):
        rows = load_answers(Path(answers), fmt=answers_format, chunks=chunks)
    else:
        rows = list(answers)
    loaded = load_prompt(prompt)
    with open_judge() as opened, judgement_cache(cache) as replies:
        assert opened is not None
        result = judge_answers(
            rows,
            opened,
            loaded,
            retries=retries,
            refusal_pattern=refusal_pattern,
            cache=replies,
            allow_unjudged=allow_unjudged,
            progress=progress,
        )
    facts = {
        "judge": {"model_id": opened.model_id},
        "judging": opened.stats.as_dict(),
        "prompt": {"version": loaded.version, "source": loaded.source},
    }
    return result, facts


def run_check_answers(
    answers: str | Path | Sequence[AnswerRow],
    chunks: str | Path | Corpus,
    *,
    citation_pattern: str | None = None,
    id_column: str = "id",
    text_column: str = "text",
    answers_format: str | None = None,
) -> tuple[AnswerChecksResult, dict[str, Any]]:
    """:func:`.answer_checks.check_answers` on ``answers`` (a file read as judge reads it,
    ``citation_pattern`` marking the citations to drop, ``answers_format`` a trace export's
    format or None to sniff it, or loaded rows) against ``chunks`` (a chunks file with
    ``id_column``/``text_column``, or a corpus; read first: it pairs a trace's documents
    without ids). Returns the result and its manifest facts (the answers file)."""
    pattern = citation_pattern or DEFAULT_CITATION_PATTERN
    corpus = (
        load_chunks(chunks, id_column, text_column) if isinstance(chunks, str | Path) else chunks
    )
    if isinstance(answers, str | Path):
        rows = load_answers(Path(answers), pattern, fmt=answers_format, chunks=corpus)
    else:
        rows = list(answers)
    path = str(answers) if isinstance(answers, str | Path) else None
    return check_answers(rows, corpus), {"answers_file": path}


__all__ = ["judged_answers", "run_check_answers", "run_judge"]
