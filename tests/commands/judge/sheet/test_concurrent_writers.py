"""Reviewers revising one sheet at the same time: 8 `sheet revise` processes released at once
leave a sheet that verifies (each revision follows the one before, none forged)."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from indexcheck.cli.app import cli
from tests.commands.judge.sheet.test_chain import judge_run, verify

WRITERS = 8


def _revise(barrier: Any, sheet: str, row: str, i: int, codes: Any) -> None:
    barrier.wait()  # all at once: the read of the chain's end and the write race
    verdict = ("SUPPORTED", "UNSUPPORTED")[i % 2]
    args = ["sheet", "revise", "--sheet", sheet, "--reviewer", f"r{i}", row, "--verdict", verdict]
    codes[i] = CliRunner().invoke(cli, args, env={"INDEXCHECK_SHEET_KEY": None}).exit_code


def test_revisions_written_at_once_all_chain_and_verify(tmp_path: Path) -> None:
    sheet = tmp_path / "sheet"
    run_id = judge_run(sheet)
    ctx = mp.get_context("fork")  # processes, each with indexcheck imported already
    barrier, codes = ctx.Barrier(WRITERS), ctx.Array("i", [-1] * WRITERS)
    procs = [
        ctx.Process(target=_revise, args=(barrier, str(sheet), f"{run_id}/j01/1", i, codes))
        for i in range(WRITERS)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert list(codes) == [0] * WRITERS
    assert len(list((sheet / "revisions").glob("*.jsonl"))) == WRITERS
    r = verify(sheet)
    assert r.exit_code == 0, r.output
