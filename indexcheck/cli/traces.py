"""``indexcheck traces``: production trace exports as input; the answers reader that
``judge``, ``diagnose`` and ``check-answers`` share (warnings to stderr)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .. import api
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


def read_answers_cli(path: Path, citation_pattern: str, fmt: str | None, chunks: Any) -> Any:
    """Read ``--answers`` (any format); each warning about a trace export on stderr."""
    read = api.read_answers(path, citation_pattern, fmt=fmt, chunks=chunks)
    for line in api.answers_warnings(read.source):
        click.echo(line, err=True)
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
    result = api.trace_refusals(
        answers_path, refusal_pattern, answers_format=answers_format, chunks=chunks_path,
        id_column=id_column, text_column=text_column, questions=questions_path, out=out_path,
    )  # fmt: skip
    for line in api.answers_warnings(result.answers_source):
        click.echo(line, err=True)
    write_json(json_path, result.to_dict())
    console = human_console(json_path)
    for line in result.lines():
        console.print(line, markup=False)
