"""Every command's output paths, checked against its inputs before any work, and what a
failed run leaves in them.

:class:`~indexcheck.cli.command.Command` calls :func:`guard` once the options are parsed
and before the command body runs: each output option (``--json``, ``--rows``, ``--report``,
``--junit``, ``--cache``, ``--vector-cache``, ``--sheet`` of ``judge``, ``embed --out`` and
``--faiss``, ``diff-index --workdir``, ``sheet export --out``) is refused (exit 2) when it
is, or lies inside, an input of the same run: ``--chunks``, ``--questions``,
``--answers``, ``--labels``, ``--prompt``, ``--query-vectors``, ``--baseline``, the config
file, the files or folder of every ``--store``/``--old``/``--new``, and the evidence sheet
read by ``sheet export|diff``. ``ci`` adds the paths of its ``[ci]`` table through
:func:`add`.

When the run then fails (exit 2 or 3, an interrupt), :func:`fail` makes sure no output
of an earlier run keeps claiming success:

- ``--json FILE`` is replaced by the failed result (``ok: false``, ``complete: false``,
  ``exit_code``, ``error``), or removed when even that cannot be written;
- ``--junit FILE`` is replaced by one ``<error>`` testcase (or removed);
- ``--rows FILE`` is removed (its rows would be an earlier run's);
- in ``--report DIR`` the report pages of this command (``NAME.md``; ``report.md`` and
  ``report.html`` for ``ci``, and ``judge.md`` too for ``judge``) are replaced by a page
  saying the run failed; plots and other commands' pages are left.

Nothing is touched when the guard has not passed: a run refused while its options are
parsed, an output refused as an input, or a ``ci`` run whose ``[ci]`` table cannot be read
(the paths it names are unknown, so no output is known to be safe to write).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..output.files import (
    PathUse,
    failed_json,
    failed_junit,
    failure,
    refuse_overlaps,
    remove_quietly,
    write_atomic,
)
from ..safety.textsafe import escape_html, escape_md
from ..stores.faiss.ids_files import store_paths
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


#: the report pages a command writes (default: NAME.md); only these are replaced on failure,
#: never another command's pages sharing the folder
_REPORT_PAGES = {
    "ci": {"report.md", "report.html"},
    "judge": {"judge.md", "report.md", "report.html"},
}


class Plan:
    """The output and input paths of one run."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.outputs: list[PathUse] = []
        self.inputs: list[PathUse] = []
        self.report_names: set[str] = _REPORT_PAGES.get(command, {f"{command}.md"})

    def check(self) -> None:
        refuse_overlaps(self.outputs, self.inputs)

    def output(self, what: str) -> Path | None:
        return next((u.path for u in self.outputs if u.what == what), None)


def _config_file(ctx: click.Context) -> Path | None:
    root = ctx.find_root()
    given = root.params.get("config")
    if given is not None:
        return Path(given)
    default = Path("indexcheck.toml")
    return default if default.is_file() else None


def _store_inputs(option: str, spec: str) -> list[PathUse]:
    return [PathUse(f"the {option} {kind}", path, kind) for path, kind in store_paths(spec)]


def plan_of(ctx: click.Context, writes: tuple[str, ...] = ()) -> Plan:
    """The paths the parsed options of ``ctx`` read and write."""
    plan = Plan(ctx.info_name or "indexcheck")
    params = ctx.params
    for name, (option, kind) in OUTPUTS.items():
        value = params.get(name)
        if value is not None and value != "-":
            plan.outputs.append(PathUse(option, Path(value), kind))
    sheet = params.get(SHEET)
    if sheet is not None:
        if SHEET in writes:
            plan.outputs.append(PathUse("--sheet", Path(sheet), "own"))
        else:
            plan.inputs.append(PathUse("the evidence sheet", Path(sheet), "folder"))
    for name, option in INPUT_FILES.items():
        value = params.get(name)
        if value is not None:
            plan.inputs.append(PathUse(f"the {option} file", Path(value)))
    for name, option in STORES.items():
        value = params.get(name)
        if isinstance(value, str) and value:
            plan.inputs += _store_inputs(option, value)
    config = _config_file(ctx)
    if config is not None:
        plan.inputs.append(PathUse("the config file", config))
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
        plan.inputs.append(PathUse(what, Path(path)))
    for what, spec in stores or []:
        plan.inputs += _store_inputs(what, spec)
    for what, path, kind in outputs or []:
        plan.outputs.append(PathUse(what, Path(path), kind))
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
    """Leave no earlier success in the outputs of a failed run (see the module doc).
    Best effort and silent: the error being reported stays the one the user sees."""
    plan: Plan | None = ctx.meta.pop(_KEY, None)
    if plan is None:  # the guard did not pass (or never ran): nothing is touched
        return
    payload = failure(plan.command, message, exit_code)
    for use in plan.outputs:
        try:
            _fail_one(plan, use, message, exit_code, payload)
        except Exception:  # noqa: S112 (never hide the real error behind a cleanup one)
            continue


def _fail_one(
    plan: Plan, use: PathUse, message: str, exit_code: int, payload: dict[str, Any]
) -> None:
    if use.what == "--json":
        failed_json(use.path, payload)
    elif use.what == "--junit":
        failed_junit(use.path, plan.command, message)
    elif use.what == "--rows":
        remove_quietly(use.path)
    elif use.what == "--report" and use.path.is_dir():
        for name in sorted(plan.report_names):
            page = use.path / name
            if not (page.is_file() or page.is_symlink()):
                continue
            try:
                write_atomic(page, _failed_page(plan.command, message, exit_code, name))
            except OSError:
                remove_quietly(page)


def _failed_page(command: str, message: str, exit_code: int, name: str) -> str:
    if name.endswith(".html"):
        return (
            '<!doctype html><html><head><meta charset="utf-8">'
            f"<title>indexcheck {escape_html(command)}: could not finish</title></head><body>"
            f"<h1>indexcheck {escape_html(command)}: could not finish (exit {exit_code})</h1>"
            f"<p>{escape_html(message)}</p><p>The results of an earlier run that stood here "
            "were replaced: they do not describe the index as it is now.</p></body></html>\n"
        )
    return (
        f"# indexcheck {escape_md(command)}: could not finish (exit {exit_code})\n\n"
        f"{escape_md(message)}\n\nThe results of an earlier run that stood here were "
        "replaced: they do not describe the index as it is now.\n"
    )


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
