"""The judge's report: judge.md (its counts, the claims tables of :mod:`.claims` and its
manifest) and report.html through the shared HTML report.

Every id, claim, span and passage text is data, never markup (:mod:`.claims` escapes it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...safety.redact import scrub_data
from ..files import write_atomic
from .claims import claims_markdown


def summary_rows(payload: Mapping[str, Any]) -> list[list[Any]]:
    """Counts per verdict and the supported rate, as table rows (the judge section's)."""
    from ...commands.judge.report import judge_rows

    return judge_rows(payload)


def write_report(
    payload: Mapping[str, Any], rows: Sequence[Any] | None, folder: Path
) -> list[Path]:
    """judge.md and report.html (through the shared HTML report) into ``folder``."""
    payload = scrub_data(payload)  # no secret in use reaches a report
    from .html import write_report as write_html

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    md = folder / "judge.md"
    verdict = "PASS" if payload["ok"] else "FAIL"
    lines = [f"# indexcheck judge — {verdict}", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in summary_rows(payload)]
    lines += ["", "A supported claim is supported by the context, not proven true.", ""]
    lines += [claims_markdown(payload), "## Manifest", "", "```json",
              json.dumps(payload.get("manifest", {}), indent=2), "```", ""]  # fmt: skip
    write_atomic(md, "\n".join(lines))
    return [md, *write_html([payload], folder, title="indexcheck judge")]


def judge_report(result: Any, folder: str | Path) -> list[Path]:
    """Write a judge result's report (judge.md and report.html) into ``folder``; returns
    the files written."""
    return write_report(result.to_dict(), None, Path(folder))
