"""``indexcheck judge``: grade answers' claims against their context (its evidence sheet's
own commands are in :mod:`.sheet`, its terminal summary in
:mod:`indexcheck.output.render.judge_terminal`)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .. import api
from ..commands.judge import JudgeResult, load_prompt
from ..commands.judge.answer_checks import check_answers
from ..inputs.answers import compile_pattern
from ..output.render.judge_terminal import render
from .command import Command
from .finish import finish
from .options import (
    answer_refusal_option,
    answers_options,
    cache_option,
    choice_option,
    chunks_option,
    citation_pattern_option,
    folder_option,
    input_file,
    output_options,
    retries_option,
    seed_option,
    spec_option,
)
from .progress import progress
from .session import open_corpus, warn_spec
from .sheet import env_sheet_key
from .traces import read_answers_cli


@click.command("judge", cls=Command, writes=("sheet_dir",))
@answers_options(
    "Answers (JSONL, CSV or Parquet): id, question, answer, contexts [{id, text}]; "
    "or a trace export (Phoenix/OpenInference, OTLP, Langfuse, LangSmith)."
)
@chunks_option
@spec_option(
    "--judge",
    "judge_spec",
    "mistral:MODEL, openai:BASE_URL?model=NAME or py:module:function "
    "[env INDEXCHECK_JUDGE]. Pick a model other than the one that answered.",
    envvar="INDEXCHECK_JUDGE",
    required=True,
)
@input_file(
    "--prompt",
    "prompt_path",
    "Judge prompt file (default: the shipped judge_v1.md).",
    dir_okay=False,
)
@retries_option
@click.option(
    "--allow-unjudged",
    is_flag=True,
    help="Do not fail the run for answers whose reply never parsed.",
)
@answer_refusal_option()
@citation_pattern_option("Regex of citation markers in the answer; group 1 holds the ids.")
@cache_option("judgements (and embeddings)")
@input_file(
    "--labels",
    "labels_path",
    "Human verdicts (JSONL) to measure the judge's agreement with.",
    dir_okay=False,
)
@folder_option("--sheet", "sheet_dir", "Evidence sheet folder: append this run's claim rows.")
@click.option(
    "--sheet-hashes-only",
    is_flag=True,
    help="Store question and answer hashes in the sheet instead of their texts.",
)
@choice_option("--sheet-format", ["jsonl", "parquet"], "jsonl")
@spec_option(
    "--store",
    "store_spec",
    "The store the contexts came from: its fingerprint goes into the sheet.",
)
@click.option("--reviewer", default=None, help="Who ran this judgement (goes into the sheet).")
@click.option("--note", default=None, help="A note for the sheet rows.")
@seed_option
@output_options
@click.pass_context
def judge_cmd(
    ctx: click.Context,
    answers_path: Path,
    answers_format: str | None,
    chunks_path: Path | None,
    id_column: str,
    text_column: str,
    judge_spec: str,
    prompt_path: Path | None,
    retries: int,
    allow_unjudged: bool,
    refusal_pattern: str,
    citation_pattern: str,
    cache_path: Path | None,
    labels_path: Path | None,
    sheet_dir: Path | None,
    sheet_hashes_only: bool,
    sheet_format: str,
    store_spec: str | None,
    reviewer: str | None,
    note: str | None,
    seed: int,
    json_path: str | None,
    report_dir: Path | None,
) -> None:
    """Grade each answer's claims against the context it was given, and check the evidence."""
    from ..commands.judge.sheet import sheet

    # every input is read and checked before the first request that costs money
    corpus = open_corpus(chunks_path, id_column, text_column)  # pairs trace documents
    read = read_answers_cli(answers_path, citation_pattern, answers_format, corpus)
    rows = read.rows
    compile_pattern(refusal_pattern, "--refusal-pattern")
    # no model: the answers' URLs, references and numbers against the context and --chunks
    checks = check_answers(rows, corpus).block()
    prompt = load_prompt(prompt_path)
    labels = None
    if labels_path is not None:
        from ..commands.judge.calibration import load_labels

        labels = load_labels(labels_path)
    sheet_key = None
    if sheet_dir is not None:
        sheet.check_sheet_dir(sheet_dir)
        sheet_key = env_sheet_key()  # validated before the first request that costs money
    warn_spec(store_spec)
    with progress() as say:
        result = api.judge(
            rows, judge_spec, prompt=prompt_path, cache=cache_path, retries=retries,
            refusal_pattern=refusal_pattern, allow_unjudged=allow_unjudged, progress=say,
            store=store_spec or None,
        )  # fmt: skip
    model_id = result.manifest["judge"]["model_id"]
    fingerprint = result.manifest.get("index_fingerprint")  # --store's, for the sheet
    result.answer_checks = checks
    if labels is not None:
        from ..commands.judge.calibration import calibrate

        result.calibration = calibrate(result.answers, *labels, seed=seed)
    if sheet_dir is not None:
        meta = sheet.RunMeta(model_id, prompt.version, fingerprint, reviewer, note)
        run_id, files = sheet.write_run(
            sheet_dir,
            result,
            rows,
            meta,
            hashes_only=sheet_hashes_only,
            fmt=sheet_format,
            key=sheet_key,
        )
        chain = json.loads(files[0].read_text(encoding="utf-8"))["chain"]
        result.sheet = {
            "run_id": run_id,
            "files": [str(p) for p in files],
            "chain_head": chain["head"],
            "rows": chain["rows"],
            "signed": sheet_key is not None,
        }

    def report(r: JudgeResult, folder: Path) -> list[Path]:
        from ..output.render.judge import write_report

        return write_report(r.to_dict(), rows, folder)

    manifest = {
        "seed": seed,
        "judge": {"model_id": model_id, "spec_scheme": judge_spec.partition(":")[0]},
        "prompt": {"version": prompt.version, "source": prompt.source},
        "answers": str(answers_path),
        **({"answers_source": read.source} if read.source is not None else {}),
        "store_fingerprint": fingerprint,
    }
    ctx.exit(finish(ctx, result, render=render, report=report, manifest=manifest))


__all__ = ["judge_cmd", "render"]
