"""Why stored vectors are low against fresh embeddings: another text, or another model.

When most chunks are low and none holds another chunk's vector, two causes look alike:

- the index was built with another model: a stored vector is no closer to its own text's
  embedding than to any other chunk's (cosines near what unrelated texts get);
- the indexer embedded another *text* with the same model (LlamaIndex's metadata header,
  an E5 ``"passage: "`` prefix, a template, truncation): every stored vector is still
  closest to its own chunk's embedding, and the cosines are high but below the threshold.

:func:`explain_low_cosines` tells them apart: the median cosine must reach ``HIGH_MEDIAN``
(0.6: a header or truncation keeps it near 0.9, another model's space near 0, unrelated
chunks near 0.25; see docs/performance.md), and a low chunk counts as "own text nearest"
only when its stored vector is closer to its own embedding than to every other chunk's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

HIGH_MEDIAN = 0.6
"""Median cosine above which low chunks still look like their own texts."""
OWN_NEAREST_SHARE = 0.9
"""Share of low chunks whose own text's embedding must be their nearest."""
TWIN_COSINE = 0.9999
"""Fresh embeddings this close are the same text (a repeat), not another chunk."""


class LowCosineVerdict(StrEnum):
    """One order: the first that applies wins."""

    OK = "ok"
    SHIFT = "shift"
    STALE_VECTOR = "stale_vector"
    EMBEDDED_TEXT_DIFFERS = "embedded_text_differs"
    MODEL_MISMATCH = "model_mismatch"


ADVICE = {
    LowCosineVerdict.EMBEDDED_TEXT_DIFFERS: (
        "the stored vectors are close to, but not the same as, the embeddings of the "
        "stored texts, and no chunk holds another chunk's vector: the indexer probably "
        "embedded a different text (a metadata header, an instruction prefix, a template, "
        "truncation). Check the same texts with a template (--embed-template "
        '"{metadata}\\n\\n{text}" is LlamaIndex\'s default; a LlamaIndex folder opens '
        "with llamaindex:DIR, which rebuilds what LlamaIndex embedded) or with a prefix in "
        "the embedder spec (st:MODEL?prefix=passage:%20). If no template brings the "
        "cosines up, check with a different --embedder: a fine-tuned or re-released "
        "model looks the same"
    ),
    LowCosineVerdict.MODEL_MISMATCH: (
        "stored vectors match no chunk's fresh embedding, not even their own chunk's "
        "best: the index was built with another model than the embedder; pass the "
        "--embedder it was built with, or re-embed"
    ),
    LowCosineVerdict.STALE_VECTOR: (
        "a few stored vectors differ from their text's embedding and match no other "
        "chunk: those texts changed after they were embedded; re-embed these chunks"
    ),
    LowCosineVerdict.SHIFT: "chunks hold other chunks' vectors; see the shift findings",
    LowCosineVerdict.OK: "every stored vector matches its chunk's fresh embedding",
}


@dataclass(frozen=True)
class LowCosineExplanation:
    """The verdict, the advice to print, and the figures it rests on."""

    verdict: LowCosineVerdict
    advice: str
    details: dict[str, Any] = field(default_factory=dict)


def own_is_nearest(
    stored: np.ndarray, fresh: np.ndarray, own: np.ndarray, margin: float = 0.0
) -> np.ndarray:
    """bool (n,): is row i of ``stored`` closer to ``fresh[own[i]]`` than to every other
    text's row of ``fresh`` (by more than ``margin``)? ``stored`` float32 (n, d) and
    ``fresh`` float32 (m, d), both unit rows; ``own`` int (n,) indices into ``fresh``.
    Rows of ``fresh`` equal to the own one (a repeated text) do not count as others."""
    fresh32 = np.asarray(fresh, dtype=np.float32)
    sims = np.asarray(stored, dtype=np.float32) @ fresh32.T
    twins = (fresh32[own] @ fresh32.T) >= TWIN_COSINE
    idx = np.arange(sims.shape[0])
    own_sim = sims[idx, own].copy()
    sims[twins] = -np.inf
    best_other = sims.max(axis=1) if sims.shape[1] else np.full(len(idx), -np.inf)
    result: np.ndarray = own_sim > best_other + margin
    return result


def explain_low_cosines(
    cosines: np.ndarray,
    threshold: float,
    holds_another: int,
    own_nearest: np.ndarray | None = None,
    *,
    high_median: float = HIGH_MEDIAN,
    own_nearest_share: float = OWN_NEAREST_SHARE,
) -> LowCosineExplanation:
    """Explain the chunks under ``threshold``.

    ``cosines`` float (n,): stored vector vs fresh embedding of its own text, for the
    comparable chunks. ``holds_another``: how many chunks hold another chunk's vector.
    ``own_nearest`` bool (n,) from :func:`own_is_nearest`, or None to decide on the
    cosines alone. Rule: no low chunk -> ok; any holder -> shift; fewer than half low ->
    stale_vector; otherwise embedded_text_differs when the median cosine is at least
    ``high_median`` and (when given) at least ``own_nearest_share`` of the low chunks are
    nearest their own text, else model_mismatch.
    """
    cos = np.asarray(cosines, dtype=np.float64)
    cos = cos[np.isfinite(cos)]
    low = cos < threshold
    n, n_low = int(cos.size), int(low.sum())
    details: dict[str, Any] = {"compared": n, "below_threshold": n_low, "threshold": threshold}
    if n:
        details["median_cosine"] = round(float(np.median(cos)), 4)
        details["min_cosine"] = round(float(cos.min()), 4)
    if n_low == 0:
        verdict = LowCosineVerdict.OK
    elif holds_another > 0:
        verdict = LowCosineVerdict.SHIFT
    elif n_low < max(2, n / 2):
        verdict = LowCosineVerdict.STALE_VECTOR
    else:
        high = float(np.median(cos)) >= high_median
        if own_nearest is not None:
            near = np.asarray(own_nearest, dtype=bool)
            if near.shape != np.asarray(cosines).shape:
                raise ValueError("own_nearest must have one entry per cosine")
            near = near[np.isfinite(np.asarray(cosines, dtype=np.float64))]
            share = float(near[low].mean())
            details["own_text_nearest_share"] = round(share, 4)
            high = high and share >= own_nearest_share
        verdict = (
            LowCosineVerdict.EMBEDDED_TEXT_DIFFERS if high else LowCosineVerdict.MODEL_MISMATCH
        )
    return LowCosineExplanation(verdict, ADVICE[verdict], details)
