"""Every command's ``--help`` and options, pinned: a change of layout in ``indexcheck/cli/``
(shared option groups, helpers) must leave what a user reads and passes exactly as it was.

Walks the click group of :mod:`indexcheck.cli` (every command and subcommand) and compares
its ``--help`` text and each option's declaration (names, type, default, required, env
variable, help) with ``tests/wording/cli_help.json``. A deliberate change of an option is
recorded with ``INDEXCHECK_UPDATE_WORDING=1 pytest tests/test_cli_help_pinned.py``; review the
diff of the JSON file like any other change.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli

PINNED = Path(__file__).parents[1] / "wording" / "cli_help.json"
UPDATE = os.environ.get("INDEXCHECK_UPDATE_WORDING") == "1"


def _commands(cmd: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    if isinstance(cmd, click.Group):
        for name in sorted(cmd.commands):
            yield from _commands(cmd.commands[name], (*path, name))


def _command_at(path: tuple[str, ...]) -> click.Command:
    cmd: click.Command = cli
    for name in path:
        assert isinstance(cmd, click.Group)
        cmd = cmd.commands[name]
    return cmd


def _type(kind: click.ParamType) -> dict[str, Any]:
    info = dict(kind.to_info_dict())
    rng = getattr(kind, "_range", None)  # FiniteFloat: its bounds are not in the info dict
    if callable(rng):
        info["range"] = rng()
    return info


def _param(param: click.Parameter) -> dict[str, Any]:
    """What a user passes and gets: show_default is left out (its effect is in --help)."""
    info = param.to_info_dict()
    info.pop("show_default", None)
    info["type"] = _type(param.type)
    info["expose_value"] = param.expose_value
    return json.loads(json.dumps(info, default=repr))


def _record() -> dict[str, Any]:
    runner = CliRunner()
    pinned: dict[str, Any] = {}
    for path in _commands(cli):
        # click caches a command's help option from the first context that asked for it: a test
        # that mounts a command in a group of its own caches "--help" without "-h"
        _command_at(path)._help_option = None  # type: ignore[attr-defined]
        res = runner.invoke(cli, [*path, "--help"], terminal_width=100, env={"COLUMNS": "100"})
        assert res.exit_code == 0, res.output
        cmd = _command_at(path)
        pinned[" ".join(("indexcheck", *path))] = {
            "help": res.output.splitlines(),
            "params": [_param(p) for p in cmd.params],
        }
    return pinned


def test_every_command_help_and_option_is_as_pinned() -> None:
    now = _record()
    if UPDATE or not PINNED.exists():
        PINNED.write_text(json.dumps(now, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"recorded {PINNED}; run again")
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))
    assert sorted(now) == sorted(pinned), "the commands changed"
    for name in pinned:
        assert now[name]["help"] == pinned[name]["help"], f"{name} --help changed"
        assert now[name]["params"] == pinned[name]["params"], f"{name}: its options changed"
