"""Every command's --help ends with examples, and each example is a command line that parses;
`indexcheck completion SHELL` prints click's script; `python -m indexcheck` is the CLI."""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.shell_completion import get_completion_class
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.cli.examples import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]


def _leaves(cmd: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    if isinstance(cmd, click.Group):
        for name, sub in cmd.commands.items():
            yield from _leaves(sub, (*path, name))
    else:
        yield path


def test_every_command_has_examples() -> None:
    missing = [" ".join(p) for p in _leaves(cli) if " ".join(p) not in EXAMPLES]
    assert missing == []


@pytest.mark.parametrize("path", [" ".join(p) for p in _leaves(cli)])
def test_help_ends_with_examples_that_parse(path: str) -> None:
    out = CliRunner().invoke(cli, [*path.split(), "--help"]).stdout
    tail = out[out.index("Examples:") :]
    lines = [line.strip() for line in tail.splitlines()[1:] if line.strip()]
    assert lines and lines == [f"indexcheck {e}" for e in EXAMPLES[path]]
    cmd: click.Command = cli
    for name in path.split():
        assert isinstance(cmd, click.Group)
        cmd = cmd.commands[name]
    for example in EXAMPLES[path]:
        args = shlex.split(example.partition(" > ")[0])[len(path.split()) :]
        # click's own parser, without callbacks (no file of the example need exist)
        opts, rest, _ = cmd.make_parser(click.Context(cmd)).parse_args(args)
        for p in cmd.params:
            if p.required:
                assert p.name in opts, f"{example}: {p.name} missing"
        assert not rest, f"{example}: not parsed {rest}"


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_clicks_script(shell: str) -> None:
    r = CliRunner().invoke(cli, ["completion", shell])
    kind = get_completion_class(shell)
    assert kind is not None
    assert r.exit_code == 0
    assert r.stdout.strip() == kind(cli, {}, "indexcheck", "_INDEXCHECK_COMPLETE").source().strip()
    assert "_INDEXCHECK_COMPLETE" in r.stdout


def test_completion_of_an_unknown_shell_is_exit_2() -> None:
    r = CliRunner().invoke(cli, ["completion", "tcsh"])
    assert r.exit_code == 2 and "bash" in r.stderr


def test_python_dash_m_indexcheck_is_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "indexcheck", "--version"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    assert done.returncode == 0 and done.stdout.startswith("indexcheck, version ")
