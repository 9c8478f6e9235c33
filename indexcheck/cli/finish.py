"""The one way every command ends: manifest, ``--json``, ``--report``, terminal, exit code.

A command parses its options, opens what it needs through :func:`.session.session`, calls one
library function and ends with ``ctx.exit(finish(ctx, result, ...))``, which writes the
command's own ``--json`` and ``--report`` (checked before any work by the callbacks of
:data:`.options.output_options`).

A result that gives ``sections()`` is rendered from them: its report-file sections into
``NAME.md`` (plus plots) and its ``terminal=True`` sections on stdout, both through the
renderers in :mod:`indexcheck.output.render`. A result with only ``to_dict()`` still works with
an explicit ``render`` and ``report``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import click
from rich.console import Console

from .. import api
from ..errors import EXIT_CHECK_FAILED, EXIT_OK
from .options import human_console


class Result(Protocol):
    """What every command's result gives: a verdict, a manifest and its JSON form (and,
    optionally, ``sections()``)."""

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
    json_path: str | None = None,
    report_dir: Path | None = None,
    render: Renderer | None = None,
    report: ReportWriter | None = None,
    report_key: str | None = "report",
    report_name: str | None = None,
) -> int:
    """Write the report folder and ``--json``, print the summary, and return the exit code
    (0 when ``result.ok``, else 1); the face function stamped the manifest.

    ``json_path``, ``report_dir``: default to the command's own ``--json`` and ``--report``.
    ``render``: defaults to the terminal renderer of the result's ``terminal=True``
    sections. ``report(result, folder)`` returns the files written; by default a result
    with ``sections()`` is written as ``REPORT_NAME.md`` (the command's name) and its
    plots. The files are listed under ``report_key`` in the JSON (None when the writer
    records them on the result itself).
    """
    json_path = json_path if json_path is not None else ctx.params.get("json_path")
    report_dir = report_dir if report_dir is not None else ctx.params.get("report_dir")
    files = None
    if report_dir is not None:
        if report is not None:
            files = report(result, report_dir)
        else:
            name = report_name or str(result.manifest.get("command") or ctx.info_name)
            files = api.write_report(result, report_dir, name)
    payload = result.to_dict()
    if files is not None and report_key is not None:
        payload[report_key] = [str(p) for p in files]
    api.write_json(json_path, payload)
    console = human_console(json_path)
    if render is not None:
        render(result, console)
    else:
        api.render_summary(result, console)  # the summary shows no secret in use
    return EXIT_OK if result.ok else EXIT_CHECK_FAILED


__all__ = ["Result", "finish"]
