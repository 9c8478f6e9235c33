"""Plots for reports (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..files import replacing


def pyplot() -> Any:
    """pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def cosine_figure(
    cosines: np.ndarray, threshold: float, title: str, positions: np.ndarray | None = None
) -> Any:
    """Histogram of stored-vs-fresh cosines (float (m,)) with the threshold marked, whole
    counts on its axis; with ``positions`` (int (m,)) cosine by position beside it, where a
    shifted index shows as a step."""
    from matplotlib.ticker import MaxNLocator

    plt = pyplot()
    wide = positions is not None and positions.size == cosines.size
    fig, axes = plt.subplots(1, 2 if wide else 1, figsize=(12 if wide else 7, 4), dpi=110)
    ax = axes[0] if wide else axes
    lo = float(min(np.min(cosines), threshold)) if cosines.size else threshold
    bins = np.linspace(min(lo, 0.99) - 1e-3, 1.0005, 41) if lo > 0.9 else 40
    ax.hist(cosines, bins=bins, color="#0072B2", edgecolor="white")
    ax.axvline(threshold, color="#D55E00", linestyle="--", label=f"threshold {threshold:g}")
    ax.set_xlabel("cosine(stored vector, fresh embedding of its text)")
    ax.set_ylabel("chunks")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="upper left")
    if wide:
        assert positions is not None
        side = axes[1]
        low = cosines < threshold
        side.scatter(positions[~low], cosines[~low], s=6, color="#0072B2", label="ok")
        side.scatter(positions[low], cosines[low], s=6, color="#D55E00", label="under")
        side.axhline(threshold, color="#000000", linestyle=":", linewidth=1)
        side.set_xlabel("position in the corpus")
        side.set_ylabel("cosine")
        side.xaxis.set_major_locator(MaxNLocator(integer=True))
        side.set_title("cosine by position")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def cosine_histogram(
    cosines: np.ndarray,
    threshold: float,
    path: Path,
    title: str,
    positions: np.ndarray | None = None,
) -> Path:
    """Write :func:`cosine_figure` as a PNG to ``path``; returns it."""
    fig = cosine_figure(cosines, threshold, title, positions)
    with replacing(path) as tmp:
        fig.savefig(tmp)
    pyplot().close(fig)
    return path


def _values(records: list[dict], field: str, scale: str) -> np.ndarray:  # type: ignore[type-arg]
    vals = [r[field][scale] for r in records if r.get(field) and r[field][scale] is not None]
    return np.asarray(vals, dtype=np.float64)


def threshold_plots(result: dict[str, Any], folder: Path) -> list[Path]:
    """Write the sweep-threshold figures as PNGs into ``folder``; returns their paths."""
    plt = pyplot()
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, fig in threshold_figures(result):
        paths.append(folder / name)
        with replacing(paths[-1]) as tmp:
            fig.savefig(tmp)
        plt.close(fig)
    return paths


def threshold_figures(result: dict[str, Any]) -> list[tuple[str, Any]]:
    """Three figures for sweep-threshold: overlaid distributions with rugs, ECDFs, and
    recall/rejection against threshold, the recommended threshold marked on each."""
    plt = pyplot()
    qs = result["questions"]
    scale = (
        "cosine"
        if all(r["top_score"]["cosine"] is not None for r in qs if r["top_id"] is not None)
        else "backend"
    )
    axis = (
        "cosine similarity"
        if scale == "cosine"
        else f"backend score ({result['scale'].get('transform', 'native')})"
    )
    ins = _values([r for r in qs if r["in_scope"]], "expected_score", scale)
    oos = _values(
        [r for r in qs if not r["in_scope"] and not r["top_is_refusal"]], "top_score", scale
    )
    rec = result["recommended_threshold"]
    rec_x = None if rec is None else rec[scale]

    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    both = np.concatenate([ins, oos]) if ins.size + oos.size else np.asarray([0.0, 1.0])
    bins = np.linspace(both.min(), both.max() + 1e-9, 25)
    ax.hist(
        ins,
        bins=bins,
        alpha=0.6,
        color="#0072B2",
        label=f"in-scope: best expected chunk (n={ins.size})",
    )
    ax.hist(
        oos, bins=bins, alpha=0.6, color="#E69F00", label=f"out-of-scope: top result (n={oos.size})"
    )
    ymin = -0.05 * max(1, ax.get_ylim()[1])
    ax.plot(ins, np.full_like(ins, ymin), "|", color="#0072B2", markersize=12)
    ax.plot(oos, np.full_like(oos, ymin * 2), "|", color="#E69F00", markersize=12)
    if rec_x is not None:
        ax.axvline(rec_x, color="#D55E00", linestyle="--", label=f"recommended {rec_x:.4f}")
    ax.set_xlabel(axis)
    ax.set_ylabel("questions")
    ax.set_title("Score distributions: in-scope vs out-of-scope")
    ax.legend(fontsize=8)
    fig.tight_layout()
    figures = [("threshold-distributions.png", fig)]

    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    for vals, color, label in (
        (ins, "#0072B2", "in-scope best expected"),
        (oos, "#E69F00", "out-of-scope top"),
    ):
        if vals.size:
            xs = np.sort(vals)
            ax.step(xs, np.arange(1, xs.size + 1) / xs.size, where="post", color=color, label=label)
    if rec_x is not None:
        ax.axvline(rec_x, color="#D55E00", linestyle="--", label="recommended")
    ax.set_xlabel(axis)
    ax.set_ylabel("fraction of questions at or below")
    ax.set_title("Empirical CDFs")
    ax.legend(fontsize=8)
    fig.tight_layout()
    figures.append(("threshold-ecdf.png", fig))

    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    rows = [r for r in result["table"] if r["threshold"][scale] is not None]
    thresholds = [r["threshold"][scale] for r in rows]
    ax.plot(
        thresholds,
        [r["in_scope_recall"]["value"] for r in rows],
        color="#0072B2",
        label="in-scope recall",
    )
    ax.plot(
        thresholds,
        [r["out_of_scope_rejection"]["value"] for r in rows],
        color="#E69F00",
        label="out-of-scope handled",
    )
    if rec_x is not None:
        ax.axvline(rec_x, color="#D55E00", linestyle="--", label="recommended")
    target = result.get("recall_target")
    if target is not None:
        ax.axhline(target, color="#000000", linestyle=":", label=f"recall target {target:g}")
    ax.set_xlabel(f"threshold ({axis})")
    ax.set_ylabel("rate")
    ax.set_ylim(-0.02, 1.02)
    verdict = "PASS" if result.get("ok") else "FAIL"
    ax.set_title(f"{verdict}: recall and rejection against threshold")
    ax.legend(fontsize=8)
    fig.tight_layout()
    figures.append(("threshold-rates.png", fig))
    return figures
