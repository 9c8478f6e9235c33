"""Presenting a result, the same for the CLI and for Python: its JSON (``--json``), its report
pages and plots (``--report``), its terminal summary. No secret in use reaches any of them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from ..safety.redact import dump_scrubbed, scrubbed_json, scrubbed_stream
from .files import output_error, replacing
from .schema import versioned


def json_to_stdout(path: str | os.PathLike[str] | None) -> bool:
    """True for ``-`` and for a path that is this process's stdout (``/dev/stdout``, a link
    to ``/proc/self/fd/1``...): the JSON then goes out alone, the summary to stderr."""
    if path is None:
        return False
    if str(path) == "-":
        return True
    try:
        here, out = os.stat(path), os.fstat(1)
    except (OSError, ValueError):
        return False
    return (here.st_dev, here.st_ino) == (out.st_dev, out.st_ino)


def write_json(path: str | os.PathLike[str] | None, payload: dict[str, Any]) -> None:
    """Write ``payload`` as indented JSON to ``path`` ('-' for stdout), atomically, scrubbed
    of every secret in use, ``schema_version`` first; None writes nothing."""
    if path is None:
        return
    payload = versioned(payload)
    options: dict[str, Any] = {"indent": 2, "ensure_ascii": False, "default": _jsonable}
    if json_to_stdout(path):  # one file position: written through stdout itself
        sys.stdout.write(scrubbed_json(payload, **options) + "\n")
        sys.stdout.flush()
        return
    target = Path(path)
    try:  # atomically: a failed write leaves no half file, a symlink is replaced
        with replacing(target) as tmp, open(tmp, "w", encoding="utf-8") as fh:
            dump_scrubbed(payload, fh, **options)  # streamed: never the whole text
            fh.write("\n")
    except OSError as exc:  # checked before the work; the disk can still fill up
        raise output_error(
            f"--json {target}", exc, "; the check ran, but its result was not saved"
        ) from None


def write_report(result: Any, folder: str | os.PathLike[str], name: str) -> list[Path]:
    """Write ``NAME.html`` (self-contained), ``NAME.md`` and their plots into ``folder`` from
    the result's sections; returns the files written."""
    from .render.html import write_pages

    try:
        return write_pages(result, Path(folder), name)
    except OSError as exc:  # checked before the work; the disk can still fill up
        raise output_error(f"the --report folder {folder}", exc) from None


def render_summary(result: Any, console: Any) -> None:
    """Print the result's terminal summary on a rich ``console`` (scrubbed of secrets)."""
    from .model import terminal
    from .registry import sections
    from .render.terminal import render

    console.file = scrubbed_stream(console.file)
    render(terminal(sections(result)), console)


def _jsonable(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


__all__ = ["json_to_stdout", "render_summary", "write_json", "write_report"]
