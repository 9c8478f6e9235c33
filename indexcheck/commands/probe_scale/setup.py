"""How a command reads a store's scores, resolved once for every front (api, CLI, ci).

A command that compares scores with a threshold needs the direction of the store's scale,
the backend -> cosine converter, the scale summary for the manifest, the threshold on the
backend's own scale (converted when it was written as a cosine) and the refusal chunks
the chunks file marks. :func:`score_setup` gives all five from a :class:`ScoreRequest`;
each command's ``prepare`` calls it with what that command takes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import InputError
from ...inputs.corpus import Corpus
from ...stores.base import VectorStore
from ..kit.retrieval import marked_refusals
from .result import ScaleResult
from .scale import scale_converters, scale_for

Converter = Callable[[np.ndarray], np.ndarray]
THRESHOLD_SCALES = ("backend", "cosine")


@dataclass(frozen=True)
class ScoreSetup:
    """``threshold`` on the backend's scale (None: none), the direction and converter of
    that scale, its summary (None when the caller named the direction itself) and the
    chunk ids the chunks file marks as refusal chunks."""

    higher_is_better: bool
    to_cosine: Converter | None
    scale: dict[str, Any] | None
    threshold: float | None = None
    refusal_marked: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ScoreRequest:
    """What a command asks of the scale: ``threshold`` (None: none) written on
    ``threshold_scale``, the direction (None: probe the store) and its converter when the
    caller names them, and the refusal chunk ids (None: those the chunks file marks)."""

    threshold: float | None = None
    threshold_scale: str = "backend"
    higher_is_better: bool | None = None
    to_cosine: Converter | None = None
    refusal_marked: Sequence[str] | None = None


def score_setup(
    store: VectorStore | None,
    corpus: Corpus | None = None,
    request: ScoreRequest | None = None,
    *,
    scale: ScaleResult | None = None,
    progress: Callable[[str], None] | None = None,
) -> ScoreSetup:
    """The store's scale from ``scale`` (a ScaleResult at hand) or probed/cached, unless
    ``request`` (None: all defaults) names the direction; a ``threshold_scale="cosine"``
    threshold converted to the backend's scale. With no store, the direction given
    (default higher)."""
    request = request or ScoreRequest()
    threshold, threshold_scale = request.threshold, request.threshold_scale
    higher_is_better, to_cosine = request.higher_is_better, request.to_cosine
    refusal_marked = request.refusal_marked
    if threshold_scale not in THRESHOLD_SCALES:
        raise InputError(f"threshold_scale must be 'backend' or 'cosine', got {threshold_scale!r}")
    marked = list(marked_refusals(corpus) if refusal_marked is None else refusal_marked)
    cosine = threshold is not None and threshold_scale == "cosine"
    if store is None:
        if cosine:
            raise InputError("a cosine threshold needs the store, to convert it to its scale")
        hib = True if higher_is_better is None else higher_is_better
        return ScoreSetup(hib, to_cosine, None, threshold, marked)
    if scale is None and (higher_is_better is None or cosine):
        if progress is not None:
            progress("resolving the store's score scale")
        scale = scale_for(store)
    summary = None
    if higher_is_better is None:
        assert scale is not None
        higher_is_better, to_cosine, summary = scale_converters(store, result=scale)
    if cosine:
        assert scale is not None and threshold is not None
        threshold = float(scale.from_cosine(np.asarray([threshold]))[0])
    return ScoreSetup(higher_is_better, to_cosine, summary, threshold, marked)


__all__ = ["THRESHOLD_SCALES", "ScoreRequest", "ScoreSetup", "score_setup"]
