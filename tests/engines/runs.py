"""check-index --all through the CLI, on the local engine or on Ray, for the engine tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from click.testing import CliRunner

from indexcheck.cli.app import cli

Run = tuple[int, Any, Any]


def check_all(
    args: list[str], out: Path, engine: str, address: str | None = None, *, block: int = 100,
    rows: str = "parquet",
) -> Run:  # fmt: skip
    """(exit code, the --rows table as dicts, the --json report) of ``check-index --all``
    with ``args`` on ``engine`` (joining the cluster at ``address`` when given); ``rows``
    is the rows file's format (``parquet`` or ``jsonl``)."""
    path, report = out / f"rows-{engine}.{rows}", out / f"{engine}.json"
    full = ["check-index", *args, "--all", "--block-size", str(block), "--rows", str(path)]
    full += ["--json", str(report), "--engine", engine]
    if address:
        full += ["--ray-address", address]
    r = CliRunner().invoke(cli, full)
    assert r.exit_code in (0, 1), r.output
    if rows == "parquet":
        table = pq.read_table(path).to_pylist()
    else:
        table = [json.loads(line) for line in path.read_text().splitlines()]
    return r.exit_code, table, json.loads(report.read_text())


def same_result(local: Run, remote: Run, *, counted_once: bool = True) -> None:
    """The Ray run's exit code, rows, findings and counts are the local run's; with
    ``counted_once`` its manifest's embedding figures too (every block counted once)."""
    assert remote[0] == local[0]
    assert remote[1] == local[1]
    assert remote[2]["findings"] == local[2]["findings"]
    assert remote[2]["counts"] == local[2]["counts"]
    if counted_once:
        for key in ("requests", "texts", "tokens"):
            got, want = remote[2]["manifest"]["embedding"], local[2]["manifest"]["embedding"]
            assert got[key] == want[key], key
