"""check-index's plot shows the finding: the verdict in its title, whole-number counts on the
histogram's axis, and cosine by position beside it (a shift shows as a step)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import indexcheck
from indexcheck.api import sections
from indexcheck.output.model import Plot
from indexcheck.output.render.plots import cosine_figure

SPEC = "py:indexcheck.testing:HASH32"


def test_a_shifted_index_plots_fail_in_the_title_and_cosine_by_position(
    small_kb: dict[str, Path],
) -> None:
    r = indexcheck.check_index(f"faiss:{small_kb['buggy']}", small_kb["chunks"], SPEC, sample=None)
    assert not r.ok
    (plot,) = [b for s in sections(r) for b in s.blocks if isinstance(b, Plot)]
    assert plot.data["title"].startswith("check-index FAIL:")
    assert len(plot.data["positions"]) == len(plot.data["cosines"])
    fig = cosine_figure(
        np.asarray(plot.data["cosines"]), plot.data["threshold"], plot.data["title"],
        np.asarray(plot.data["positions"]),
    )  # fmt: skip
    hist, by_position = fig.axes
    fig.canvas.draw()
    ticks = [t for t in hist.get_yticks() if t >= 0]
    assert ticks and all(float(t).is_integer() for t in ticks)
    assert by_position.get_xlabel() == "position in the corpus"
    ys = np.concatenate([c.get_offsets()[:, 1] for c in by_position.collections])
    # the step: chunks before the shift at cosine ~1, most after it far below
    assert ys.max() > 0.99 and np.median(ys) < 0.5
