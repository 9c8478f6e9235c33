"""compare-ann's plot: the verdict in its title, the legend off the data, and colours from a
palette that reads without red/green (Okabe-Ito)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from matplotlib.colors import to_hex

from indexcheck.output.render import figures


def _row(fetch: int, miss: float) -> dict[str, Any]:
    return {
        "fetch": fetch, "best_miss_rate": miss, "best_miss_rate_interval": [0.0, miss + 0.05],
        "recall_at_k": 1 - miss, "recall_at_k_interval": [0.8, 1.0],
    }  # fmt: skip


def test_compare_ann_plot_title_legend_and_palette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    got: list[Any] = []
    monkeypatch.setattr(figures, "_save", lambda fig, path: got.append(fig))
    rows = [_row(f, m) for f, m in ((4, 0.3), (10, 0.2), (20, 0.1), (50, 0.05))]
    sweep = {"param": "efSearch", "runs": [
        {"value": v, "by_fetch": [_row(f, m / v) for f, m in ((4, 0.3), (10, 0.2))]}
        for v in (2, 4, 8, 16)
    ]}  # fmt: skip
    data = {"by_fetch": rows, "k": 4, "target": 0.01, "sweep": sweep, "verdict": "FAIL"}
    figures._compare_ann(data, tmp_path / "p.png")
    (fig,) = got
    assert "FAIL" in fig._suptitle.get_text()
    fig.canvas.draw()
    ax1 = fig.axes[0]
    legend = ax1.get_legend()
    box, area = legend.get_window_extent(), ax1.get_window_extent()
    assert not box.overlaps(area), "the legend covers the data"
    used = {to_hex(line.get_color()) for ax in fig.axes for line in ax.get_lines()}
    assert used <= {c.lower() for c in figures.OKABE_ITO}, used


def test_sweep_rates_plot_has_the_target_line_and_the_verdict(
    small_kb: dict[str, Path], small_kb_questions: Path
) -> None:
    import indexcheck
    from indexcheck.output.render.plots import threshold_figures

    r = indexcheck.sweep_threshold(
        f"faiss:{small_kb['good']}", small_kb_questions, "py:indexcheck.testing:HASH32", k=4
    )
    fig = dict(threshold_figures(r.to_dict()))["threshold-rates.png"]
    ax = fig.axes[0]
    assert ax.get_title().startswith("PASS: " if r.ok else "FAIL: ")
    flat = [line for line in ax.get_lines() if len(set(line.get_ydata())) == 1]
    assert any(line.get_ydata()[0] == r.recall_target for line in flat)
