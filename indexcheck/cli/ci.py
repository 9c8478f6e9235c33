"""``indexcheck ci``: run the checks of ``[ci]`` in indexcheck.toml and gate a merge on them.

Exit codes: 0 every gate PASSed; 1 a gate is BLOCK or INSUFFICIENT_EVIDENCE (never a silent
pass); 2 bad config or input; 3 could not finish. ``--junit`` writes one testsuite with a
testcase per gate; BLOCK and INSUFFICIENT_EVIDENCE are both ``<failure>`` (with ``type``
set to the verdict), so a CI dashboard shows red whenever the exit code is 1.
"""

from __future__ import annotations

from pathlib import Path

import click

from .. import api
from .command import Command
from .finish import finish
from .guard import ci_paths
from .options import input_file, output_file, output_options
from .progress import progress
from .session import warn_spec


@click.command("ci", cls=Command, more_paths=True)
@input_file(
    "--config",
    "ci_config",
    "Config file with the [ci] table (default: the group's --config, else ./indexcheck.toml, "
    "else [tool.indexcheck.ci] in ./pyproject.toml).",
    dir_okay=False,
)
@input_file(
    "--baseline",
    "baseline_path",
    "JSON of an accepted earlier run (indexcheck ci --json) to compare with, "
    "question by question, under non-inferiority margins.",
    dir_okay=False,
)
@output_file("--junit", "junit_path", "Write a JUnit XML file: one testcase per gate.")
@click.option(
    "--baseline-any-store",
    is_flag=True,
    help="Compare with a baseline measured on another store or embedder (reported).",
)
@output_options
@click.pass_context
def ci_cmd(
    ctx: click.Context,
    ci_config: Path | None,
    baseline_path: Path | None,
    junit_path: Path | None,
    baseline_any_store: bool,
    json_path: str | None,
    report_dir: Path | None,
) -> None:
    """Run the configured checks and gate on declared limits and on a baseline.

    Exit 0 when every gate passes, 1 when one blocks or lacks evidence, 2 for bad config.
    """
    parent = ctx.parent.params.get("config") if ctx.parent is not None else None
    path = ci_config or parent or api.find_config() or Path("indexcheck.toml")
    config = api.read_ci_config(path)
    baseline_path = baseline_path or config.baseline_path
    ci_paths(ctx, config, path, baseline_path)  # no output over an input of [ci]
    baseline = api.read_baseline(baseline_path) if baseline_path is not None else None
    warn_spec(config.store)
    with progress() as say:
        result = api.run_ci(config, baseline, say, baseline_any_store=baseline_any_store)
    if junit_path is not None:  # the result carries its manifest: stamped inside the run
        api.write_ci_junit(result, junit_path)
    ctx.exit(finish(ctx, result, report=api.write_ci_report))
