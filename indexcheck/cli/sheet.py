"""``indexcheck sheet``: verify, revise, diff and export the evidence sheet that
``indexcheck judge --sheet`` writes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from .. import api
from ..errors import EXIT_CHECK_FAILED, EXIT_OK
from .command import Command
from .options import F, human_console, is_stdout, json_option, write_json
from .output_checks import check_folder_output


def _sheet_option(required: bool = True) -> Callable[[F], F]:
    """``--sheet DIR`` [env INDEXCHECK_SHEET]: an evidence sheet folder that exists."""
    return click.option("--sheet", "sheet_dir", envvar="INDEXCHECK_SHEET", required=required,
                        type=click.Path(file_okay=False, exists=True, path_type=Path),
                        help="Evidence sheet folder [env INDEXCHECK_SHEET].")  # fmt: skip


def warn(message: str) -> None:
    """A warning (INDEXCHECK_SHEET_KEY's stripped whitespace) on stderr."""
    click.echo(f"warning: {message}", err=True)


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
    outcome = api.verify_sheet(sheet_dir, pack=pack_dir, run_ids=run_ids, warn=warn)
    write_json(json_path, outcome.to_dict())
    for line in outcome.lines:  # escaped below the face
        click.echo(line, err=is_stdout(json_path))
    ctx.exit(EXIT_OK if outcome.ok else EXIT_CHECK_FAILED)


@sheet_group.command("revise", cls=Command)
@_sheet_option()
@click.argument("row_id")
@click.option("--verdict", required=True, type=click.Choice(api.VERDICTS, case_sensitive=False))
@click.option("--reviewer", required=True, help="Who revises the verdict.")
@click.option("--note", default=None, help="Why.")
def revise_cmd(sheet_dir: Path, row_id: str, verdict: str, reviewer: str, note: str | None) -> None:
    """Record a human revision of ROW_ID's verdict as a new row (the old row stays)."""
    outcome = api.revise_sheet(sheet_dir, row_id, verdict, reviewer, note, warn=warn)
    for line in outcome.lines:
        click.echo(line)


@sheet_group.command("diff", cls=Command)
@_sheet_option()
@click.argument("run_a")
@click.argument("run_b")
@json_option
def diff_cmd(sheet_dir: Path, run_a: str, run_b: str, json_path: str | None) -> None:
    """Compare two runs claim by claim where their cases are compatible (both must verify)."""
    outcome = api.diff_sheet(sheet_dir, run_a, run_b, warn=warn)
    write_json(json_path, outcome.to_dict())
    console = human_console(json_path)
    for line in outcome.lines:  # rich markup, the sheet's data escaped below the face
        console.print(line)
    raise SystemExit(EXIT_OK if outcome.ok else EXIT_CHECK_FAILED)


@sheet_group.command("export", cls=Command)
@_sheet_option()
@click.argument("run_id")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              callback=check_folder_output("--out"),
              help="A new folder for the audit pack (never inside the sheet).")  # fmt: skip
def export_cmd(sheet_dir: Path, run_id: str, out_dir: Path) -> None:
    """Write RUN_ID's audit pack: cases, retrieval, answers, claims and a sha256 manifest;
    a run that does not verify is refused (exit 1)."""
    for line in api.export_sheet(sheet_dir, run_id, out_dir, warn=warn).lines:
        click.echo(line)


__all__ = ["sheet_group"]
