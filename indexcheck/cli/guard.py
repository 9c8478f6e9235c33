"""Every command's output paths, checked against its inputs before any work, and what a
failed run leaves in them.

:class:`~indexcheck.cli.command.Command` calls :func:`guard` once the options are parsed and
before the body runs: each output option (``--json``, ``--rows``, ``--report``, ``--junit``,
``--cache``, ``--vector-cache``, ``--sheet``, ``embed --out``/``--faiss``, ``diff-index
--workdir``, ``sheet export --out``) is refused (exit 2) when it is, or lies inside, an input
of the run (the data files, the config, every store's files). ``ci`` adds its ``[ci]`` paths
through :func:`add`. When the run then fails (exit 2 or 3, an interrupt), :func:`fail` leaves
no earlier output claiming success: ``--json`` and ``--junit`` are replaced by the failure (or
removed), ``--rows`` is removed, and this command's pages in ``--report`` say the run failed.
Nothing is touched when the guard has not passed (refused while parsing, an output over an
input, a ``[ci]`` table that cannot be read): no output is then known to be safe to write.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .. import api
from .output_checks import run_probes

_KEY = "indexcheck.guard"

#: parameter name -> option, for the files a command reads
INPUT_FILES = {
    "chunks_path": "--chunks",
    "chunks_old": "--chunks-old",
    "chunks_new": "--chunks-new",
    "questions_path": "--questions",
    "query_vectors_path": "--query-vectors",
    "answers_path": "--answers",
    "labels_path": "--labels",
    "prompt_path": "--prompt",
    "ci_config": "--config",
    "baseline_path": "--baseline",
}
#: parameter name -> option, for store specs
STORES = {"store_spec": "--store", "old_spec": "--old", "new_spec": "--new"}
#: parameter name -> (option, kind) for the paths a command writes
OUTPUTS = {
    "json_path": ("--json", "file"),
    "rows_path": ("--rows", "file"),
    "junit_path": ("--junit", "file"),
    "cache_path": ("--cache", "file"),
    "out_path": ("--out", "file"),
    "report_dir": ("--report", "folder"),
    "vector_cache": ("--vector-cache", "own"),
    "faiss_dir": ("--faiss", "own"),
    "workdir": ("--workdir", "own"),
    "out_dir": ("--out", "own"),
}
#: the evidence sheet: written by judge (``writes=("sheet_dir",)``), read by sheet export
SHEET = "sheet_dir"


Plan = api.OutputPlan


#: ctx.meta key under which the group or the command's --config names the file it read
CONFIG_META = "indexcheck.config"


def _config_file(ctx: click.Context) -> Path | None:
    read = ctx.meta.get(CONFIG_META)
    if read is not None:
        return Path(read)
    given = ctx.find_root().params.get("config")
    return Path(given) if given is not None else api.find_config()


def plan_of(ctx: click.Context, writes: tuple[str, ...] = ()) -> Plan:
    """The paths the parsed options of ``ctx`` read and write."""
    plan = Plan(ctx.info_name or "indexcheck")
    params = ctx.params
    for name, (option, kind) in OUTPUTS.items():
        value = params.get(name)
        if value is not None and value != "-":
            plan.output(option, Path(value), kind)
    sheet = params.get(SHEET)
    if sheet is not None:
        if SHEET in writes:
            plan.output("--sheet", Path(sheet), "own")
        else:
            plan.input("the evidence sheet", Path(sheet), "folder")
    for name, option in INPUT_FILES.items():
        value = params.get(name)
        if value is not None:
            plan.input(f"the {option} file", Path(value))
    for name, option in STORES.items():
        value = params.get(name)
        if isinstance(value, str) and value:
            plan.store(option, value)
    config = _config_file(ctx)
    if config is not None:
        plan.input("the config file", config)
    return plan


def guard(ctx: click.Context, writes: tuple[str, ...] = (), complete: bool = True) -> Plan:
    """Check the outputs of ``ctx`` against its inputs (exit 2 before any work). When the
    plan is ``complete`` (the command names no more paths through :func:`add`), probe the
    outputs for writing and keep the plan for :func:`fail`; an incomplete plan is never
    used to write a failure (an output it checked might still be an input)."""
    plan = plan_of(ctx, writes)
    plan.check()
    if complete:
        run_probes(ctx)
        ctx.meta[_KEY] = plan
    return plan


def add(
    ctx: click.Context,
    *,
    inputs: list[tuple[str, Path]] | None = None,
    stores: list[tuple[str, str]] | None = None,
    outputs: list[tuple[str, Path, str]] | None = None,
) -> None:
    """Add paths known only once the command has read its config (``ci``), and check
    again: ``inputs`` (what, path), ``stores`` (what, spec), ``outputs`` (what, path,
    kind)."""
    plan: Plan | None = ctx.meta.pop(_KEY, None)  # kept again only once checked
    if plan is None:
        plan = plan_of(ctx)
    for what, path in inputs or []:
        plan.input(what, Path(path))
    for what, spec in stores or []:
        plan.store(what, spec)
    for what, path, kind in outputs or []:
        plan.output(what, Path(path), kind)
    plan.check()
    run_probes(ctx)
    ctx.meta[_KEY] = plan


def ci_paths(ctx: click.Context, config: Any, path: Path, baseline: Path | None) -> None:
    """Refuse (exit 2) an output of ``ci`` over an input its ``[ci]`` table names."""
    inputs = [("the config file", path)]
    inputs += [(f"the [ci] {k} file", p) for k, p in _config_files(config) if p is not None]
    if baseline is not None:
        inputs.append(("the baseline file", baseline))
    stores = [("[ci] store", config.store)]
    if config.diff_index is not None:
        stores.append(("[ci.diff-index] old", config.diff_index.old))
    outputs = [("[ci] cache", config.cache, "file")] if config.cache is not None else []
    if config.compare_ann is not None and config.compare_ann.cache_dir is not None:
        outputs.append(("[ci.compare-ann] cache-dir", config.compare_ann.cache_dir, "own"))
    add(ctx, inputs=inputs, stores=stores, outputs=outputs)


def _config_files(config: Any) -> list[tuple[str, Path | None]]:
    files: list[tuple[str, Path | None]] = [("chunks", config.chunks)]
    if config.diff_index is not None:
        files += [
            ("chunks-old", config.diff_index.chunks_old),
            ("chunks-new", config.diff_index.chunks_new),
        ]
    if config.diagnose is not None:
        files.append(("questions", config.diagnose.questions))
    return files


def fail(ctx: click.Context, message: str, exit_code: int) -> None:
    """Leave no earlier success in the outputs of a failed run (see the module doc)."""
    plan: Plan | None = ctx.meta.pop(_KEY, None)
    if plan is not None:  # None: the guard did not pass (or never ran): nothing is touched
        plan.fail(message, exit_code)


__all__ = [
    "INPUT_FILES",
    "OUTPUTS",
    "STORES",
    "Plan",
    "add",
    "ci_paths",
    "fail",
    "guard",
    "plan_of",
]
