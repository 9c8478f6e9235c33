"""``indexcheck check-answers``: flag what answers state that neither their context nor the
knowledge base holds (URLs, references without links, numbers), with no model."""

from __future__ import annotations

from pathlib import Path

import click

from .command import Command
from .finish import finish
from .judge import warn
from .options import answers_options, chunks_options, citation_pattern_option, output_options


@click.command("check-answers", cls=Command)
@answers_options(
    "Answers (JSONL, CSV or Parquet) as judge reads them: id, question, answer, "
    "contexts [{id, text}] and optionally context (the exact text the model was sent); or a "
    "trace export (documents without ids paired to --chunks by content hash)."
)
@chunks_options(
    required=True,
    help="The knowledge base: chunks file (JSONL, CSV or Parquet) with an id and a text column.",
)
@citation_pattern_option(
    "Regex of citation markers in the answer (removed before the check); group 1 holds the ids."
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
    from .. import api

    # read here and timed in the manifest; a trace's warnings on stderr
    result = api.check_answers(
        answers_path, chunks_path, citation_pattern=citation_pattern, id_column=id_column,
        text_column=text_column, answers_format=answers_format, warn=warn,
    )  # fmt: skip
    ctx.exit(finish(ctx, result))
