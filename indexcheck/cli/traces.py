"""``indexcheck traces``: production trace exports as input; the answers reader that
``judge``, ``diagnose`` and ``check-answers`` share (warnings to stderr)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..inputs.answers import DEFAULT_CITATION_PATTERN, AnswersRead
from ..safety.textsafe import visible
from .command import Command
from .options import (
    answer_refusal_option,
    answers_options,
    chunks_option,
    human_console,
    input_file,
    json_option,
    output_file,
    write_json,
)
from .session import open_corpus


def read_answers_cli(
    path: Path, citation_pattern: str, fmt: str | None, chunks: Any
) -> AnswersRead:
    """Read ``--answers`` (any format); each warning about a trace export on stderr."""
    from ..inputs.answers import read_answers

    read = read_answers(path, citation_pattern, fmt=fmt, chunks=chunks)
    for warning in (read.source or {}).get("warnings", []):
        click.echo(f"warning: {visible(warning)}", err=True)
    return read


@click.group("traces")
def traces_group() -> None:
    """Production traces (Phoenix/OpenInference, OTLP, Langfuse, LangSmith exports) as input."""


@traces_group.command("refusals", cls=Command)
@answers_options("A trace export (or an answers file): one answer per trace.")
@chunks_option
@answer_refusal_option(help="Regex on the answer text marking a refusal.")
@input_file(
    "--questions",
    "questions_path",
    "A labelled question set: a refusal whose question is in it takes its 'expected' "
    "(or in_scope=false) instead of the chunks it retrieved.",
    dir_okay=False,
)
@output_file(
    "--out",
    "out_path",
    "Write the refusals as a question set (JSONL) for `diagnose --questions`.",
)
@json_option
def refusals_cmd(
    answers_path: Path,
    answers_format: str | None,
    chunks_path: Path | None,
    id_column: str,
    text_column: str,
    refusal_pattern: str,
    questions_path: Path | None,
    out_path: Path | None,
    json_path: str | None,
) -> None:
    """List the production answers that refused (exit 0), ready for `diagnose`.

    The question set written by --out has the trace ids as question ids; `expected` comes
    from --questions when the question is in it, else it is the chunks the application
    retrieved: replace those with the chunk that holds the answer before trusting a
    retrieval label."""
    from ..commands.diagnose.trace_refusals import find_refusals, write_questions
    from ..inputs.answers import compile_pattern

    compile_pattern(refusal_pattern, "--refusal-pattern")
    labelled = None
    if questions_path is not None:
        from ..inputs.questions import load_questions

        labelled = load_questions(questions_path, require_labels=False)
    corpus = open_corpus(chunks_path, id_column, text_column)
    read = read_answers_cli(answers_path, DEFAULT_CITATION_PATTERN, answers_format, corpus)
    result = find_refusals(read.rows, refusal_pattern, str(answers_path))
    result.answers_source = read.source or {"format": read.format}
    written = write_questions(result, out_path, labelled) if out_path is not None else None
    write_json(json_path, result.to_dict())
    console = human_console(json_path)
    for r in result.refusals:
        ids = ", ".join(r.retrieved) or "nothing"
        console.print(
            f"{visible(r.id)}: {visible(r.question)}\n  answer: {visible(r.answer)}\n"
            f"  retrieved: {visible(ids)}",
            markup=False,
        )
    rate = f" ({result.rate:.1%})" if result.rate is not None else ""
    console.print(
        f"{len(result.refusals)} of {result.answers} answers refused{rate} [format {read.format}]",
        markup=False,
    )
    if written is not None:
        guessed = result.labelled_from_retrieved
        note = (
            f"; {guessed} take as 'expected' the chunks their trace retrieved: replace them "
            "with the chunk that should have answered"
            if guessed
            else ""
        )
        console.print(
            f"wrote {written} questions to {visible(out_path)}{note}; then run diagnose "
            f"--questions {visible(out_path)} --answers {visible(answers_path)}",
            markup=False,
        )
    if result.not_written:
        console.print(
            f"not written ({len(result.not_written)} retrieved nothing, so they have no label): "
            + visible(", ".join(result.not_written)),
            markup=False,
        )
