"""``indexcheck check-answers``: flag what answers state that neither their context nor the
knowledge base holds (URLs, references without links, numbers), with no model."""

from __future__ import annotations

import time
from pathlib import Path

import click

from ..inputs.corpus import load_chunks
from .command import Command
from .finish import finish
from .options import answers_options, chunks_options, citation_pattern_option, output_options
from .session import session
from .traces import read_answers_cli


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

    session(ctx, "check-answers")
    started = time.perf_counter()
    corpus = load_chunks(chunks_path, id_column, text_column)  # both before any work
    rows = read_answers_cli(answers_path, citation_pattern, answers_format, corpus).rows
    read = round(time.perf_counter() - started, 3)
    result = api.check_answers(rows, corpus)  # read here: a trace's warnings are printed
    seconds = {"read": read, **result.manifest_facts.get("seconds", {})}
    manifest = {
        **result.manifest_facts,
        "answers_file": str(answers_path),
        "chunks_file": str(chunks_path),
        "seconds": seconds,
    }
    ctx.exit(finish(ctx, result, manifest=manifest))
