"""A run's output paths against its input paths: refused before any work when an output is,
or lies inside, an input; and, when the run fails, no output of an earlier run left claiming
success (``--json`` and ``--junit`` replaced by the failure, ``--rows`` removed, the command's
own report pages replaced by a page saying the run failed; plots and other pages are left).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..safety.textsafe import escape_html, escape_md
from .files import (
    PathUse,
    failed_json,
    failed_junit,
    failure,
    refuse_overlaps,
    remove_quietly,
    write_atomic,
)

#: the report pages a command writes (default: NAME.md and NAME.html); only these are
#: replaced on failure, never another command's pages sharing the folder
_REPORT_PAGES = {"ci": {"report.md", "report.html"}}


@dataclass
class OutputPlan:
    """The output and input paths of one run of ``command``."""

    command: str
    outputs: list[PathUse] = field(default_factory=list)
    inputs: list[PathUse] = field(default_factory=list)

    @property
    def report_names(self) -> set[str]:
        return _REPORT_PAGES.get(self.command, {f"{self.command}.md", f"{self.command}.html"})

    def output(self, what: str, path: Path, kind: str = "file") -> None:
        self.outputs.append(PathUse(what, Path(path), kind))

    def input(self, what: str, path: Path, kind: str = "file") -> None:
        self.inputs.append(PathUse(what, Path(path), kind))

    def store(self, option: str, spec: str) -> None:
        """The files or folder a store spec reads (none for a server)."""
        from ..stores.faiss.ids_files import store_paths

        for path, kind in store_paths(spec):
            self.inputs.append(PathUse(f"the {option} {kind}", path, kind))

    def check(self) -> None:
        """Exit 2 when an output is, or lies inside, an input."""
        refuse_overlaps(self.outputs, self.inputs)

    def path_of(self, what: str) -> Path | None:
        return next((u.path for u in self.outputs if u.what == what), None)

    def fail(self, message: str, exit_code: int) -> None:
        """Leave no earlier success in the outputs of this failed run. Best effort and
        silent: the error being reported stays the one the user sees."""
        payload = failure(self.command, message, exit_code)
        for use in self.outputs:
            try:
                self._fail_one(use, message, exit_code, payload)
            except Exception:  # noqa: S112 (never hide the real error behind a cleanup one)
                continue

    def _fail_one(self, use: PathUse, message: str, code: int, payload: dict[str, Any]) -> None:
        if use.what == "--json":
            failed_json(use.path, payload)
        elif use.what == "--junit":
            failed_junit(use.path, self.command, message)
        elif use.what == "--rows":
            remove_quietly(use.path)
        elif use.what == "--report" and use.path.is_dir():
            for name in sorted(self.report_names):
                page = use.path / name
                if not (page.is_file() or page.is_symlink()):
                    continue
                try:
                    write_atomic(page, failed_page(self.command, message, code, name))
                except OSError:
                    remove_quietly(page)


def failed_page(command: str, message: str, exit_code: int, name: str) -> str:
    """The page that replaces a report page of a failed run (HTML or Markdown by ``name``)."""
    if name.endswith(".html"):
        return (
            '<!doctype html><html><head><meta charset="utf-8">'
            f"<title>indexcheck {escape_html(command)}: could not finish</title></head><body>"
            f"<h1>indexcheck {escape_html(command)}: could not finish (exit {exit_code})</h1>"
            f"<p>{escape_html(message)}</p><p>The results of an earlier run that stood here "
            "were replaced: they do not describe the index as it is now.</p></body></html>\n"
        )
    return (
        f"# indexcheck {escape_md(command)}: could not finish (exit {exit_code})\n\n"
        f"{escape_md(message)}\n\nThe results of an earlier run that stood here were "
        "replaced: they do not describe the index as it is now.\n"
    )


__all__ = ["OutputPlan", "failed_page"]
