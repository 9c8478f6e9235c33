"""``indexcheck judge`` (grade answers' claims against their context) and ``indexcheck sheet``
(verify, revise, diff and export the evidence sheet)."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from ..core.answers import (
    DEFAULT_ANSWER_REFUSAL_PATTERN,
    DEFAULT_CITATION_PATTERN,
    compile_pattern,
)
from ..core.judge import AnswerStatus, JudgeResult, judge_answers, load_prompt
from ..core.judge.answer_checks import check_answers, checks_line
from ..core.judge.claims import Verdict
from ..errors import EXIT_CHECK_FAILED, EXIT_OK
from ..textsafe import escape_rich as escape
from ..textsafe import visible
from .command import Command
from .finish import finish
from .options import (
    F,
    check_folder_output,
    chunks_option,
    human_console,
    json_option,
    output_options,
    progress,
    seed_option,
    write_json,
)
from .session import open_corpus, session
from .traces import answers_format_option, read_answers_cli

VERDICT_STYLE = {
    "SUPPORTED": "green",
    "PARTIALLY_SUPPORTED": "yellow",
    "UNSUPPORTED": "red",
    "CONTRADICTED": "bold red",
    "NOT_EVALUABLE": "magenta",
}


#: repair requests for a model reply that does not parse (judge, questions generate)
retries_option = click.option(
    "--retries",
    type=click.IntRange(0, 10),
    default=2,
    show_default=True,
    help="Repair requests for a reply that does not parse.",
)


@click.command("judge", cls=Command, writes=("sheet_dir",))
@click.option(
    "--answers",
    "answers_path",
    type=click.Path(path_type=Path),
    required=True,
    help="Answers (JSONL, CSV or Parquet): id, question, answer, contexts [{id, text}]; "
    "or a trace export (Phoenix/OpenInference, OTLP, Langfuse, LangSmith).",
)
@answers_format_option
@chunks_option
@click.option(
    "--judge",
    "judge_spec",
    envvar="INDEXCHECK_JUDGE",
    required=True,
    metavar="SPEC",
    help="mistral:MODEL, openai:BASE_URL?model=NAME or py:module:function "
    "[env INDEXCHECK_JUDGE]. Pick a model other than the one that answered.",
)
@click.option(
    "--prompt",
    "prompt_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Judge prompt file (default: the shipped judge_v1.md).",
)
@retries_option
@click.option(
    "--allow-unjudged",
    is_flag=True,
    help="Do not fail the run for answers whose reply never parsed.",
)
@click.option(
    "--refusal-pattern",
    default=DEFAULT_ANSWER_REFUSAL_PATTERN,
    show_default=True,
    help="Regex on the answer text marking a refusal (a 'refused' column wins).",
)
@click.option(
    "--citation-pattern",
    default=DEFAULT_CITATION_PATTERN,
    show_default=True,
    help="Regex of citation markers in the answer; group 1 holds the ids.",
)
@click.option(
    "--cache",
    "cache_path",
    envvar="INDEXCHECK_CACHE",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="SQLite file caching judgements (and embeddings) [env INDEXCHECK_CACHE].",
)
@click.option(
    "--labels",
    "labels_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Human verdicts (JSONL) to measure the judge's agreement with.",
)
@click.option(
    "--sheet",
    "sheet_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Evidence sheet folder: append this run's claim rows.",
)
@click.option(
    "--sheet-hashes-only",
    is_flag=True,
    help="Store question and answer hashes in the sheet instead of their texts.",
)
@click.option(
    "--sheet-format", type=click.Choice(["jsonl", "parquet"]), default="jsonl", show_default=True
)
@click.option(
    "--store",
    "store_spec",
    default=None,
    metavar="SPEC",
    help="The store the contexts came from: its fingerprint goes into the sheet.",
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
    from ..core.judge import sheet
    from ..judges import JudgementCache, open_judge

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
        from ..core.judge.calibration import load_labels

        labels = load_labels(labels_path)
    sheet_key = None
    if sheet_dir is not None:
        sheet.check_sheet_dir(sheet_dir)
        sheet_key = _sheet_key()  # validated before the first request that costs money
    fingerprint = None
    if store_spec:
        fingerprint = session(ctx, "judge").open_store(store_spec).fingerprint()
    judge = open_judge(judge_spec)
    cache = JudgementCache(cache_path) if cache_path is not None else None
    try:
        with progress() as say:
            result = judge_answers(
                rows,
                judge,
                prompt,
                retries=retries,
                refusal_pattern=refusal_pattern,
                cache=cache,
                allow_unjudged=allow_unjudged,
                progress=say,
            )
    finally:
        if cache is not None:
            cache.close()
        getattr(judge, "close", lambda: None)()
    result.answer_checks = checks
    if labels is not None:
        from ..core.judge.calibration import calibrate

        result.calibration = calibrate(result.answers, *labels, seed=seed)
    if sheet_dir is not None:
        meta = sheet.RunMeta(judge.model_id, prompt.version, fingerprint, reviewer, note)
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
        from ..report.judge import write_report

        return write_report(r.to_dict(), rows, folder)

    session(ctx, "judge")
    code = finish(
        ctx,
        result,
        json_path=json_path,
        report_dir=report_dir,
        render=render,
        report=report,
        manifest={
            "seed": seed,
            "judge": {"model_id": judge.model_id, "spec_scheme": judge_spec.partition(":")[0]},
            "judging": judge.stats.as_dict(),
            "prompt": {"version": prompt.version, "source": prompt.source},
            "answers": str(answers_path),
            **({"answers_source": read.source} if read.source is not None else {}),
            "store_fingerprint": fingerprint,
        },
    )
    ctx.exit(code)


def render(result: JudgeResult, console: Console) -> None:
    """Claims per answer coloured by final verdict, then the counts and the supported rate."""
    table = Table(title=f"claims judged by {escape(result.judge)} (prompt {result.prompt_version})")
    for col in ("answer", "claim", "judge", "final", "span", "citation"):
        table.add_column(col, overflow="fold")  # an id is shown whole, never cut
    for a in result.answers:
        if a.status is not AnswerStatus.JUDGED:
            table.add_row(escape(a.id), f"[dim]{a.status.value}[/dim]", "", "", "", "")
            continue
        for c in a.claims:
            style = VERDICT_STYLE[c.verdict.value]
            span = {True: "found", False: "NOT FOUND", None: "-"}[c.span_found]
            table.add_row(
                escape(a.id), escape(c.claim), c.judge_verdict.value,
                f"[{style}]{c.verdict.value}[/{style}]", span, c.citation_status.value,
            )  # fmt: skip
    console.print(table)
    counts = ", ".join(f"{v.value} {result.counts[v.value]}" for v in Verdict)
    console.print(f"claims: {counts}")
    console.print(", ".join(f"{k} {n}" for k, n in result.statuses.items()) + " answers")
    r = result.supported_rate
    if r["value"] is None:
        console.print("supported rate: no claims judged")
    else:
        console.print(
            f"supported rate {r['k']}/{r['n']} = {r['value']:.3f} "
            f"[95% Wilson {r['low']:.3f}, {r['high']:.3f}] over the answers given"
        )
    if result.unjudged:
        ids = ", ".join(escape(i) for i in result.unjudged[:10])
        console.print(f"[red]UNJUDGED[/red] (reply never parsed): {ids}")
    if result.answer_checks is not None:
        console.print(escape(checks_line(result.answer_checks)))
    if result.sheet:
        console.print(f"evidence sheet: run {escape(str(result.sheet['run_id']))}")
    tag = "[bold green]PASS[/bold green]" if result.ok else "[bold red]FAIL[/bold red]"
    console.print(f"{tag} every judged claim supported and nothing unjudged: {result.ok}")


# -- the evidence sheet ---------------------------------------------------------------------


def _sheet_option(f: F) -> F:
    return click.option("--sheet", "sheet_dir", envvar="INDEXCHECK_SHEET", required=True,
                        type=click.Path(file_okay=False, exists=True, path_type=Path),
                        help="Evidence sheet folder [env INDEXCHECK_SHEET].")(f)  # fmt: skip


def _sheet_key() -> bytes | None:
    """INDEXCHECK_SHEET_KEY, validated (exit 2 naming the variable, never the value); a
    stripped-whitespace warning goes to stderr."""
    from ..core.judge.sheet_chain import sheet_key

    key, warning = sheet_key()
    if warning:
        click.echo(f"warning: {warning}", err=True)
    return key


@click.group("sheet")
def sheet_group() -> None:
    """Verify, revise, compare and export the evidence sheet written by `judge --sheet`.

    With INDEXCHECK_SHEET_KEY set, runs and revisions are signed (HMAC-SHA256) when written
    and their signatures checked when read."""


@sheet_group.command("verify", cls=Command)
@click.option("--sheet", "sheet_dir", envvar="INDEXCHECK_SHEET", default=None,
              type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Evidence sheet folder [env INDEXCHECK_SHEET].")  # fmt: skip
@click.option("--pack", "pack_dir", default=None,
              type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="An audit pack written by `sheet export` (instead of --sheet).")  # fmt: skip
@click.argument("run_ids", nargs=-1)
@json_option
@click.pass_context
def verify_cmd(
    ctx: click.Context,
    sheet_dir: Path | None,
    pack_dir: Path | None,
    run_ids: tuple[str, ...],
    json_path: str | None,
) -> None:
    """Check each run's hash chain, row counts, file hashes, frozen passages and revisions
    (and, with INDEXCHECK_SHEET_KEY, its signatures). Exit 0 verified, 1 not verified."""
    from ..core.judge.sheet_verify import SheetCheck, Signature, verify_pack, verify_sheet
    from ..errors import InputError

    if (sheet_dir is None) == (pack_dir is None):
        raise InputError("sheet verify needs --sheet DIR or --pack DIR (one of them)")
    key = _sheet_key()
    if pack_dir is not None:
        if run_ids:
            raise InputError("sheet verify --pack takes no RUN_ID: a pack holds one run")
        result = SheetCheck([verify_pack(pack_dir, key)], [])
    else:
        assert sheet_dir is not None
        result = verify_sheet(sheet_dir, key, list(run_ids) or None)
    write_json(json_path, result.to_dict())

    def say(line: str) -> None:
        click.echo(visible(line), err=json_path == "-")

    for r in result.runs:
        if r.problem:
            say(f"{r.run_id}: NOT VERIFIED: {r.problem}")
        else:
            say(
                f"{r.run_id}: verified ({r.rows} rows, {len(r.revisions)} revisions, chain "
                f"head {str(r.head)[:16]}, {r.signature.value})"
            )
    for problem in result.problems:
        say(f"NOT VERIFIED: {problem}")
    if any(r.signature is Signature.NOT_CHECKED for r in result.runs):
        say("signed runs: signature not checked; set INDEXCHECK_SHEET_KEY to check them")
    what = "pack" if pack_dir is not None else "sheet"
    bad = sum(not r.ok for r in result.runs) + len(result.problems)
    if bad:
        say(f"{what} NOT VERIFIED: {bad} problem(s) in {len(result.runs)} run(s)")
    else:
        say(f"{what} verified: {len(result.runs)} run(s)")
    ctx.exit(EXIT_CHECK_FAILED if bad else EXIT_OK)


@sheet_group.command("revise", cls=Command)
@_sheet_option
@click.argument("row_id")
@click.option(
    "--verdict", required=True, type=click.Choice([v.value for v in Verdict], case_sensitive=False)
)
@click.option("--reviewer", required=True, help="Who revises the verdict.")
@click.option("--note", default=None, help="Why.")
def revise_cmd(sheet_dir: Path, row_id: str, verdict: str, reviewer: str, note: str | None) -> None:
    """Record a human revision of ROW_ID's verdict as a new row (the old row stays)."""
    from ..core.judge.sheet import revise

    row = revise(sheet_dir, row_id, verdict, reviewer, note, key=_sheet_key())
    click.echo(
        visible(
            f"{row['row_id']} revises {row['revises']}: "
            f"{row['previous_verdict']} -> {row['verdict']}"
        )
    )


@sheet_group.command("diff", cls=Command)
@_sheet_option
@click.argument("run_a")
@click.argument("run_b")
@json_option
def diff_cmd(sheet_dir: Path, run_a: str, run_b: str, json_path: str | None) -> None:
    """Compare two runs claim by claim where their cases are compatible (both must verify)."""
    from ..core.judge.sheet import diff_runs

    d = diff_runs(sheet_dir, run_a, run_b, key=_sheet_key())
    write_json(json_path, d)
    console = human_console(json_path)
    changed = 0
    for a in d["answers"]:
        if not a["compatible"]:
            changed_what = escape(", ".join(a["changed"]))
            console.print(f"{escape(a['answer_id'])}: not comparable, changed {changed_what}")
            continue
        for c in a["claims"]:
            changed += 1
            console.print(
                f"{escape(a['answer_id'])}: {escape(c['claim'])}: "
                f"{escape(c['a'])} -> {escape(c['b'])}"
            )
    console.print(f"{changed} claim verdicts differ")
    raise SystemExit(EXIT_OK if changed == 0 else EXIT_CHECK_FAILED)


@sheet_group.command("export", cls=Command)
@_sheet_option
@click.argument("run_id")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              callback=check_folder_output("--out"),
              help="A new folder for the audit pack (never inside the sheet).")  # fmt: skip
def export_cmd(sheet_dir: Path, run_id: str, out_dir: Path) -> None:
    """Write RUN_ID's audit pack: cases, retrieval, answers, claims and a sha256 manifest;
    a run that does not verify is refused (exit 1)."""
    from ..core.judge.sheet import export_run

    files = export_run(sheet_dir, run_id, out_dir, key=_sheet_key())
    manifest = json.loads(files[-1].read_text(encoding="utf-8"))
    for name, digest in manifest["files"].items():
        click.echo(visible(f"{digest}  {name}"))
