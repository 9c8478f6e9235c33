"""The one way every command ends: manifest, ``--json``, ``--report``, terminal, exit code.

A command parses its options, opens what it needs through :func:`.session.session`, calls one
library function and ends with ``ctx.exit(finish(ctx, result, ...))``. ``--json`` and
``--report`` are checked before any work by the callbacks of :func:`.options.output_options`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

import click
from rich.console import Console

from ..errors import EXIT_CHECK_FAILED, EXIT_OK
from .options import human_console, write_json
from .session import current_session


class Result(Protocol):
    """What every command's result gives: a verdict, a manifest and its JSON form."""

    @property
    def ok(self) -> bool: ...

    manifest: dict[str, Any]

    def to_dict(self) -> dict[str, Any]: ...


Renderer = Callable[[Any, Console], None]
ReportWriter = Callable[[Any, Path], list[Path]]


def finish(
    ctx: click.Context,
    result: Result,
    *,
    json_path: str | None,
    report_dir: Path | None = None,
    render: Renderer,
    report: ReportWriter | None = None,
    report_key: str | None = "report",
    manifest: Mapping[str, Any] | None = None,
) -> int:
    """Stamp the manifest, write the report folder and ``--json``, print the summary, and
    return the exit code (0 when ``result.ok``, else 1).

    The manifest is stamped here for every command: from the session (store, embedder,
    wall time) when the library left it empty, and ``manifest`` adds keys either way.
    ``report(result, folder)`` returns the files written; they are listed under
    ``report_key`` in the JSON (None when the writer records them on the result itself).
    """
    stamp(ctx, result, **(manifest or {}))
    files = report(result, report_dir) if report is not None and report_dir is not None else None
    payload = result.to_dict()
    if files is not None and report_key is not None:
        payload[report_key] = [str(p) for p in files]
    write_json(json_path, payload)
    render(result, human_console(json_path))
    return EXIT_OK if result.ok else EXIT_CHECK_FAILED


def stamp(ctx: click.Context, result: Result, **extra: Any) -> None:
    """Give ``result`` the run's manifest (store, embedder, seed, cost, wall time)."""
    session = current_session(ctx)
    if not result.manifest and session is not None:
        result.manifest = session.manifest(**extra)
    else:
        result.manifest.update(extra)


__all__ = ["Result", "finish", "stamp"]
