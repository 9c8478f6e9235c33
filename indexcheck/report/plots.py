"""Plots for reports (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _plt():  # type: ignore[no-untyped-def]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def cosine_histogram(cosines: np.ndarray, threshold: float, path: Path, title: str) -> Path:
    """Histogram of stored-vs-fresh cosines (float (m,)) with the threshold marked."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    lo = float(min(np.min(cosines), threshold)) if cosines.size else threshold
    bins = np.linspace(min(lo, 0.99) - 1e-3, 1.0005, 41) if lo > 0.9 else 40
    ax.hist(cosines, bins=bins, color="#4C72B0", edgecolor="white")
    ax.axvline(threshold, color="#C44E52", linestyle="--", label=f"threshold {threshold:g}")
    ax.set_xlabel("cosine(stored vector, fresh embedding of its text)")
    ax.set_ylabel("chunks")
    ax.set_title(title)
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
