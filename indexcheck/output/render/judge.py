"""The judge's report: judge.html and judge.md through the shared report pages (its counts,
the claims tables of :mod:`.claims` and its manifest).

Every id, claim, span and passage text is data, never markup (:mod:`.claims` escapes it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...safety.redact import scrub_data


def write_report(
    payload: Mapping[str, Any], rows: Sequence[Any] | None, folder: Path
) -> list[Path]:
    """judge.html and judge.md (the shared report pages: counts, the claims tables of
    :mod:`.claims`, the manifest) into ``folder``; returns [html, md, *plots]."""
    from .html import write_report as write_pages

    payload = scrub_data(payload)  # no secret in use reaches a report
    return write_pages(
        [payload], Path(folder), title="indexcheck judge", name="judge", lead=_lead(payload)
    )


def _lead(payload: Mapping[str, Any]) -> str:
    """The judge page's line under its verdict: the claims not supported, then the unjudged."""
    counts = payload["counts"]
    bad = {k: n for k, n in counts.items() if n and k != "SUPPORTED"}
    said = f"{sum(bad.values())} of {sum(counts.values())} claims not supported by their context"
    said += f" ({', '.join(f'{k} {n}' for k, n in bad.items())})" if bad else ""
    unjudged = payload.get("unjudged") or []
    return said + (f"; {len(unjudged)} answers unjudged (reply never parsed)" if unjudged else "")


def judge_report(result: Any, folder: str | Path) -> list[Path]:
    """Write a judge result's report (judge.html and judge.md) into ``folder``; returns
    the files written."""
    return write_report(result.to_dict(), None, Path(folder))
