"""Drawing the :class:`~indexcheck.output.model.Plot` blocks of report sections into PNG files.

``Figures(folder).draw(sections)`` replaces each Plot by the Image(s) it drew; the core
names a figure and gives its data, this module is the only one that knows matplotlib.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..files import replacing
from ..model import Fragment, Image, Plot, Section
from .plots import cosine_histogram, pyplot, threshold_plots

#: Okabe-Ito: tells its colours apart with every common colour-vision deficiency
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
#: "red" is vermillion and "green" bluish green; good-vs-bad pairs use blue and vermillion
PALETTE = {"blue": "#0072B2", "orange": "#E69F00", "red": "#D55E00", "green": "#009E73"}


class Figures:
    """Draws plots into ``folder``: NN-STEM.png when ``numbered`` (several results in one
    folder), else STEM.png."""

    def __init__(self, folder: Path, numbered: bool = True) -> None:
        self.folder = folder
        self.count = 0
        self.numbered = numbered

    def draw(self, sections: list[Section]) -> list[Section]:
        """``sections`` with every Plot drawn and replaced by its Image(s), and every
        Fragment rendered (:func:`fragment`)."""
        for sec in sections:
            blocks: list[Any] = []
            for b in sec.blocks:
                if isinstance(b, Plot):
                    blocks += self.images(b)
                elif isinstance(b, Fragment):
                    blocks.append(fragment(b))
                else:
                    blocks.append(b)
            sec.blocks = blocks
        return sections

    def images(self, plot: Plot) -> list[Image]:
        self.count += 1
        stem = f"{self.count:02d}-{plot.stem}" if self.numbered else plot.stem
        if plot.name == "threshold":  # three figures; a folder of their own beside others
            paths = threshold_plots(dict(plot.data), self.folder / stem if self.numbered
                                    else self.folder)  # fmt: skip
            return [Image(p, p.stem) for p in paths]
        path = self.folder / f"{stem}.png"
        _DRAW[plot.name](plot.data, path)
        return [Image(path, plot.alt)]


def fragment(block: Fragment) -> Any:
    """A Fragment rendered as an escaped HTML fragment with its Markdown twin."""
    from .claims import claims_html, claims_markdown
    from .html_fragments import Html

    if block.name == "claims":
        return Html(claims_html(block.data), claims_markdown(block.data))
    raise ValueError(f"no renderer for the report fragment {block.name!r}")


def _save(fig: Any, path: Path) -> None:
    fig.tight_layout()
    with replacing(path) as tmp:
        fig.savefig(tmp)
    pyplot().close(fig)


def _cosines(d: Mapping[str, Any], path: Path) -> None:
    cos = np.asarray(d["cosines"], dtype=np.float64)
    at = d.get("positions")
    pos = None if at is None else np.asarray(at, dtype=np.int64)
    cosine_histogram(cos, float(d["threshold"]), path, d["title"], pos)


def _probe_scale(d: Mapping[str, Any], path: Path) -> None:
    from ...commands.probe_scale import CATALOGUE

    pairs, var = d["pairs"], d["variable"]
    fig, ax = pyplot().subplots(figsize=(7, 4), dpi=110)
    xs = [p[var] for p in pairs]
    ax.scatter(
        xs,
        [p["score"] for p in pairs],
        s=14,
        color=PALETTE["blue"],
        label="reported (query, id) pairs",
    )
    if d["transform"]:
        grid = np.linspace(min(xs), max(xs), 200)
        t = CATALOGUE[d["transform"]]
        ax.plot(grid, t.apply(grid), color=PALETTE["red"], label=f"score = {d['transform']}")
    ax.set_xlabel(f"{var} computed from the fetched vectors")
    ax.set_ylabel("score reported by the store")
    ax.set_title("probe-scale: reported score against the exact variable")
    ax.legend(fontsize=8)
    _save(fig, path)


def _errors(rows: list[Mapping[str, Any]], key: str) -> tuple[list[float], list[list[float]]]:
    """Values and asymmetric error bars from each row's ``<key>_interval``."""
    y, lo, hi = [], [], []
    for r in rows:
        v = float(r[key])
        low, high = r[f"{key}_interval"]
        y.append(v)
        lo.append(0.0 if low is None else max(0.0, v - float(low)))
        hi.append(0.0 if high is None else max(0.0, float(high) - v))
    return y, [lo, hi]


def _compare_ann(r: Mapping[str, Any], path: Path) -> None:
    """Best-chunk miss rate (with each swept setting) and recall@k against fetch depth."""
    rows, k = r["by_fetch"], r["k"]
    xs = [row["fetch"] for row in rows]
    fig, (ax1, ax2) = pyplot().subplots(1, 2, figsize=(10, 4.6), dpi=110)
    verdict = r.get("verdict") or ("PASS" if r.get("ok") else "FAIL")
    fig.suptitle(f"compare-ann: {verdict} (target best-chunk miss rate {r['target']:g})")
    y, err = _errors(rows, "best_miss_rate")
    ax1.errorbar(xs, y, yerr=err, marker="o", capsize=3, label="as opened", color=OKABE_ITO[0])
    sweep = r.get("sweep") or {"param": "", "runs": []}
    for i, run in enumerate(sweep["runs"]):
        ax1.plot(
            [x["fetch"] for x in run["by_fetch"]],
            [x["best_miss_rate"] for x in run["by_fetch"]],
            marker=".",
            linestyle="--",
            color=OKABE_ITO[(i + 1) % len(OKABE_ITO)],
            label=f"{sweep['param']}={run['value']}",
        )
    ax1.axhline(r["target"], color=PALETTE["red"], linestyle=":", label=f"target {r['target']:g}")
    ax1.set_xlabel("fetch depth (re-ranked to k)")
    ax1.set_ylabel("best-chunk miss rate")
    ax1.set_title(f"best chunk absent from top-{k}")
    ax1.set_ylim(bottom=0)
    # below the axes, never over the data
    ax1.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, fontsize=8)
    y, err = _errors(rows, "recall_at_k")
    ax2.errorbar(xs, y, yerr=err, marker="o", capsize=3, color=PALETTE["green"])
    ax2.set_xlabel("fetch depth (re-ranked to k)")
    ax2.set_ylabel(f"recall@{k}")
    ax2.set_title(f"recall@{k} against exact search")
    ax2.set_ylim(0, 1.02)
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(xs)
        ax.set_xticklabels([str(x) for x in xs])
        ax.grid(alpha=0.3)
    _save(fig, path)


def _diagnose(d: Mapping[str, Any], path: Path) -> None:
    counts, good = d["counts"], set(d["good"])
    fig, ax = pyplot().subplots(figsize=(7, 0.5 + 0.4 * max(1, len(counts))), dpi=110)
    labels = list(counts)
    ax.barh(
        labels,
        [counts[x] for x in labels],
        color=[PALETTE["blue"] if x in good else PALETTE["red"] for x in labels],
    )
    ax.invert_yaxis()
    ax.set_xlabel("questions")
    ax.set_title(f"diagnose: first stage that lost the expected chunk (k={d['k']})")
    _save(fig, path)


def _baseline(d: Mapping[str, Any], path: Path) -> None:
    rows = d["rows"]
    fig, ax = pyplot().subplots(figsize=(7, 0.9 + 0.7 * len(rows)), dpi=110)
    for i, x in enumerate(rows):
        if x["difference"] is None:
            continue
        color = {"PASS": PALETTE["blue"], "BLOCK": PALETTE["red"]}.get(
            x["verdict"], PALETTE["orange"]
        )
        lo, hi = x["difference"] - x["low"], x["high"] - x["difference"]
        ax.errorbar(
            [x["difference"]], [i], xerr=[[lo], [hi]], fmt="o", capsize=5, color=color, markersize=8
        )
        ax.axvline(-x["margin"], color=PALETTE["red"], linestyle="--", linewidth=1)
    ax.axvline(0, color="#888888", linewidth=1)
    ax.set_yticks(range(len(rows)), [x["label"] for x in rows])
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel("current - baseline, 95% paired bootstrap interval (dashed: -margin)")
    ax.set_title("non-inferiority against the baseline")
    _save(fig, path)


_DRAW: dict[str, Callable[[Mapping[str, Any], Path], None]] = {
    "cosine-histogram": _cosines,
    "probe-scale": _probe_scale,
    "compare-ann": _compare_ann,
    "diagnose-labels": _diagnose,
    "baseline": _baseline,
}

__all__ = ["PALETTE", "Figures"]
