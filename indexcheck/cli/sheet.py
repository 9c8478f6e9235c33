"""``indexcheck sheet``: verify, revise, diff and export the evidence sheet that
``indexcheck judge --sheet`` writes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import click

from ..commands.judge.claims import Verdict
from ..errors import EXIT_CHECK_FAILED, EXIT_OK
from ..safety.textsafe import escape_rich as escape
from ..safety.textsafe import visible
from .command import Command
from .options import F, human_console, is_stdout, json_option, write_json
from .output_checks import check_folder_output


def _sheet_option(required: bool = True) -> Callable[[F], F]:
    """``--sheet DIR`` [env INDEXCHECK_SHEET]: an evidence sheet folder that exists."""
    return click.option("--sheet", "sheet_dir", envvar="INDEXCHECK_SHEET", required=required,
                        type=click.Path(file_okay=False, exists=True, path_type=Path),
                        help="Evidence sheet folder [env INDEXCHECK_SHEET].")  # fmt: skip


def env_sheet_key() -> bytes | None:
    """INDEXCHECK_SHEET_KEY, validated (exit 2 naming the variable, never the value); a
    stripped-whitespace warning goes to stderr."""
    from ..commands.judge.sheet.chain import sheet_key

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
@_sheet_option(required=False)
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
    from ..commands.judge.sheet.verify import SheetCheck, Signature, verify_pack, verify_sheet
    from ..errors import InputError

    if (sheet_dir is None) == (pack_dir is None):
        raise InputError("sheet verify needs --sheet DIR or --pack DIR (one of them)")
    key = env_sheet_key()
    if pack_dir is not None:
        if run_ids:
            raise InputError("sheet verify --pack takes no RUN_ID: a pack holds one run")
        result = SheetCheck([verify_pack(pack_dir, key)], [])
    else:
        assert sheet_dir is not None
        result = verify_sheet(sheet_dir, key, list(run_ids) or None)
    write_json(json_path, result.to_dict())

    def say(line: str) -> None:
        click.echo(visible(line), err=is_stdout(json_path))

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
@_sheet_option()
@click.argument("row_id")
@click.option(
    "--verdict", required=True, type=click.Choice([v.value for v in Verdict], case_sensitive=False)
)
@click.option("--reviewer", required=True, help="Who revises the verdict.")
@click.option("--note", default=None, help="Why.")
def revise_cmd(sheet_dir: Path, row_id: str, verdict: str, reviewer: str, note: str | None) -> None:
    """Record a human revision of ROW_ID's verdict as a new row (the old row stays)."""
    from ..commands.judge.sheet.sheet import revise

    row = revise(sheet_dir, row_id, verdict, reviewer, note, key=env_sheet_key())
    click.echo(
        visible(
            f"{row['row_id']} revises {row['revises']}: "
            f"{row['previous_verdict']} -> {row['verdict']}"
        )
    )


@sheet_group.command("diff", cls=Command)
@_sheet_option()
@click.argument("run_a")
@click.argument("run_b")
@json_option
def diff_cmd(sheet_dir: Path, run_a: str, run_b: str, json_path: str | None) -> None:
    """Compare two runs claim by claim where their cases are compatible (both must verify)."""
    from ..commands.judge.sheet.sheet import diff_runs

    d = diff_runs(sheet_dir, run_a, run_b, key=env_sheet_key())
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
@_sheet_option()
@click.argument("run_id")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              callback=check_folder_output("--out"),
              help="A new folder for the audit pack (never inside the sheet).")  # fmt: skip
def export_cmd(sheet_dir: Path, run_id: str, out_dir: Path) -> None:
    """Write RUN_ID's audit pack: cases, retrieval, answers, claims and a sha256 manifest;
    a run that does not verify is refused (exit 1)."""
    from ..commands.judge.sheet.sheet import export_run

    files = export_run(sheet_dir, run_id, out_dir, key=env_sheet_key())
    manifest = json.loads(files[-1].read_text(encoding="utf-8"))
    for name, digest in manifest["files"].items():
        click.echo(visible(f"{digest}  {name}"))


__all__ = ["sheet_group", "env_sheet_key"]
