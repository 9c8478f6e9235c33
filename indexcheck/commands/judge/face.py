"""What the face gives of a judge result besides the run: its terminal summary and its
report files (``indexcheck judge`` prints and writes them through these)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .result import JudgeResult


def judge_summary(result: JudgeResult, console: Any) -> None:
    """Print a judge result's terminal summary on the rich ``console``: the claims per
    answer coloured by verdict, the counts and the supported rate (every id, claim and
    span escaped)."""
    from ...output.render.judge_terminal import render

    render(result, console)


def judge_report(result: JudgeResult, folder: str | Path) -> list[Path]:
    """Write a judge result's report (judge.md and report.html) into ``folder``; returns
    the files written."""
    from ...output.render.judge import write_report

    return write_report(result.to_dict(), None, Path(folder))


__all__ = ["judge_report", "judge_summary"]
