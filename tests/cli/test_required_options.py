"""Every option declared ``required=True`` is refused when absent (exit 2, "missing option").

click (8.3 and later) counts an explicit ``default=None`` as a value, so ``required=True`` next
to it is silently lost: ``questions generate`` without ``--out`` made every paid call, wrote
nothing and exited 0, and ``sheet diff`` without ``--sheet`` exited 3 with a TypeError (found by
review after the option groups of ``cli/options.py`` passed ``default=None`` for every option).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli


def _walk(
    cmd: click.Command, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, cmd
    if isinstance(cmd, click.Group):
        for name in sorted(cmd.commands):
            yield from _walk(cmd.commands[name], (*path, name))


def test_no_required_option_has_an_explicit_default_none() -> None:
    bad = [
        (" ".join(path), p.opts[0])
        for path, cmd in _walk(cli)
        for p in cmd.params
        if isinstance(p, click.Option) and p.required and p.default is None
    ]
    assert bad == []


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["check-index", "--embedder", "minilm"], "--store"),
        (
            [
                "questions",
                "generate",
                "--chunks",
                "fixtures/chunks.jsonl",
                "--generator",
                "py:x:y",
                "--dry-run",
            ],
            "--out",
        ),
        (["sheet", "diff", "a", "b"], "--sheet"),
        (["sheet", "export", "r", "--out", "{tmp}/exp"], "--sheet"),
        (["sheet", "revise", "r", "--verdict", "supported", "--reviewer", "me"], "--sheet"),
    ],
)
def test_a_missing_required_option_is_exit_2_before_any_work(
    args: list[str], option: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("INDEXCHECK_SHEET", "INDEXCHECK_STORE"):
        monkeypatch.delenv(name, raising=False)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2, (r.exit_code, r.stderr)
    assert f"missing option '{option}'" in r.stderr
    assert not (tmp_path / "exp").exists()  # no --out folder made for a run that cannot start
