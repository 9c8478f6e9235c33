"""``indexcheck check-answers``: flag what answers state that neither their context nor the
knowledge base holds (URLs, references without links, numbers), with no model."""

from __future__ import annotations

import time
from pathlib import Path

import click

from ..core.answers import DEFAULT_CITATION_PATTERN
from ..corpus import load_chunks
from .command import Command
from .finish import finish
from .options import output_options
from .session import session
from .traces import answers_format_option, read_answers_cli


@click.command("check-answers", cls=Command)
@click.option(
    "--answers",
    "answers_path",
    type=click.Path(path_type=Path),
    required=True,
    help="Answers (JSONL, CSV or Parquet) as judge reads them: id, question, answer, "
    "contexts [{id, text}] and optionally context (the exact text the model was sent); or a "
    "trace export (documents without ids paired to --chunks by content hash).",
)
@answers_format_option
@click.option(
    "--chunks",
    "chunks_path",
    type=click.Path(path_type=Path),
    required=True,
    help="The knowledge base: chunks file (JSONL, CSV or Parquet) with an id and a text column.",
)
@click.option("--id-column", default="id", show_default=True)
@click.option("--text-column", default="text", show_default=True)
@click.option(
    "--citation-pattern",
    default=DEFAULT_CITATION_PATTERN,
    show_default=True,
    help="Regex of citation markers in the answer (removed before the check); group 1 holds "
    "the ids.",
)
@output_options
@click.pass_context
def check_answers_cmd(
    ctx: click.Context,
    answers_path: Path,
    answers_format: str | None,
    chunks_path: Path,
    id_column: str,
    text_column: str,
    citation_pattern: str,
    json_path: str | None,
    report_dir: Path | None,
) -> None:
    """Flag each URL, reference and number of an answer found neither in its context nor in
    any chunk (exit 1 when something is flagged)."""
    from ..core.judge.answer_checks import check_answers

    session(ctx, "check-answers")
    started = time.perf_counter()
    corpus = load_chunks(chunks_path, id_column, text_column)  # both before any work
    rows = read_answers_cli(answers_path, citation_pattern, answers_format, corpus).rows
    read = round(time.perf_counter() - started, 3)
    result = check_answers(rows, corpus)
    seconds = {"read": read, **result.manifest_facts.get("seconds", {})}
    code = finish(
        ctx,
        result,
        json_path=json_path,
        report_dir=report_dir,
        manifest={
            **result.manifest_facts,
            "answers_file": str(answers_path),
            "chunks_file": str(chunks_path),
            "seconds": seconds,
        },
    )
    ctx.exit(code)
