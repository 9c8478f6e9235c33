"""sweep-threshold's ``--report``: its score plots, whose paths go into the result."""

from __future__ import annotations

from pathlib import Path

from .result import SweepResult


def sweep_plots(result: SweepResult, folder: str | Path) -> list[Path]:
    """Write sweep-threshold's score plots (PNG) into ``folder`` (``--report``); their
    paths go into ``result.plots``; returns them."""
    from ...output.render.plots import threshold_plots

    files = threshold_plots(result.to_dict(), Path(folder))
    result.plots = [str(p) for p in files]
    return files


__all__ = ["sweep_plots"]
