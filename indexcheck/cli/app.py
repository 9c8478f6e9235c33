"""The ``indexcheck`` click group: config file, error mapping and exit codes.

Exit codes: 0 passed, 1 check failed, 2 usage or bad input, 3 could not finish.
Errors are one line on stderr; ``INDEXCHECK_DEBUG=1`` re-raises for a traceback.
"""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path
from typing import Any

import click

from .. import __version__
from ..errors import EXIT_COULD_NOT_FINISH, EXIT_INPUT, IndexcheckError

CONFIG_FILE = "indexcheck.toml"


def _load_config(path: Path | None) -> dict[str, Any]:
    """``indexcheck.toml``: a [defaults] table for every command, [check-index] etc. per command.

    Keys are option names with dashes or underscores (``min-cosine = 0.999``).
    """
    if path is None:
        candidate = Path(CONFIG_FILE)
        if not candidate.is_file():
            return {}
        path = candidate
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise click.BadParameter(f"cannot read {path}: {exc}", param_hint="--config") from None

    def norm(table: dict[str, Any]) -> dict[str, Any]:
        return {k.replace("-", "_"): v for k, v in table.items()}

    defaults = norm(data.get("defaults", {}))
    default_map: dict[str, Any] = {}
    for name, cmd in cli.commands.items():
        table = data.get(name, {})
        merged = {**defaults, **(norm(table) if isinstance(table, dict) else {})}
        # config keys are option names (store, min-cosine); click looks up parameter names
        alias = {
            opt.lstrip("-").replace("-", "_"): p.name
            for p in cmd.params
            for opt in getattr(p, "opts", [])
        }
        default_map[name] = {alias.get(k, k): v for k, v in merged.items()}
    return default_map


class Group(click.Group):
    """Maps IndexcheckError to its exit code and a one-line message; never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except IndexcheckError as exc:
            if os.environ.get("INDEXCHECK_DEBUG"):
                raise
            click.echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(EXIT_COULD_NOT_FINISH)
        except Exception as exc:  # a bug or an SDK error no backend mapped: still one line
            if os.environ.get("INDEXCHECK_DEBUG"):
                raise
            click.echo(
                f"error: could not finish: {type(exc).__name__}: {exc} "
                "(set INDEXCHECK_DEBUG=1 for a traceback)",
                err=True,
            )
            ctx.exit(EXIT_COULD_NOT_FINISH)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="indexcheck")
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help=f"Config file with option defaults (default: ./{CONFIG_FILE} when present).",
)
@click.pass_context
def cli(ctx: click.Context, config: Path | None) -> None:
    """Prove a RAG vector index is right before users pay for it being wrong."""
    if config is not None and not config.is_file():
        raise click.BadParameter(f"{config} does not exist", param_hint="--config")
    ctx.default_map = _load_config(config)


def _register() -> None:
    from .ann import compare_ann_cmd
    from .check_index import check_index_cmd
    from .ci import ci_cmd
    from .diagnose import diagnose_cmd
    from .diff_index import diff_index_cmd
    from .embed import embed_cmd
    from .model import model_group
    from .scale import convert_threshold_cmd, probe_scale_cmd
    from .threshold import sweep_threshold_cmd

    cli.add_command(check_index_cmd)
    cli.add_command(compare_ann_cmd)
    cli.add_command(ci_cmd)
    cli.add_command(diagnose_cmd)
    cli.add_command(diff_index_cmd)
    cli.add_command(embed_cmd)
    cli.add_command(model_group)
    cli.add_command(probe_scale_cmd)
    cli.add_command(convert_threshold_cmd)
    cli.add_command(sweep_threshold_cmd)


_register()


def main() -> None:
    try:
        cli.main(prog_name="indexcheck", standalone_mode=True)
    except SystemExit as exc:
        sys.exit(exc.code)


__all__ = ["EXIT_INPUT", "cli", "main"]
