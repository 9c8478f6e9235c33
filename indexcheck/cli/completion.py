"""``indexcheck completion bash|zsh|fish``: print the shell completion script (click's)."""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class

from .command import Command

SHELLS = ("bash", "zsh", "fish")


@click.command("completion", cls=Command)
@click.argument("shell", type=click.Choice(SHELLS))
@click.pass_context
def completion_cmd(ctx: click.Context, shell: str) -> None:
    """Print the completion script for SHELL; source it from your shell's start-up file
    (docs/conventions.md#shell-completion says where for each shell)."""
    kind = get_completion_class(shell)
    assert kind is not None  # SHELLS are click's own
    root = ctx.find_root()
    script = kind(root.command, {}, "indexcheck", "_INDEXCHECK_COMPLETE").source()
    click.echo(script)
