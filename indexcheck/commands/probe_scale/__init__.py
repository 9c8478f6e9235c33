"""probe-scale: measure which formula a vector store's reported scores follow.

Stores report different numbers for one pair of vectors: Upstash COSINE gives
``(1+cos)/2``, pgvector ``<=>`` ``1-cos``, FAISS L2 ``l2^2``, Qdrant Euclid ``l2``... A
threshold calibrated on one scale means something else on another. The probe takes
vectors from the store itself, builds queries from them (the vectors, mixtures,
perturbations and random directions; half of them rescaled so that ``cos`` and ``dot``
differ even on unit-norm data), computes the exact ``cos``, ``dot`` and ``l2`` of every
returned (query, id) pair from the fetched vectors, and tests every formula of
:data:`CATALOGUE` against the reported scores. A formula fits when every residual is
within a float tolerance (relative to the magnitude of the score and of the vectors, so
float32 and float16 backends pass); nothing is fitted, so a formula that fits is the
scale. When nothing fits the result says so (``ok=False``) and never names a guess.

A probe costs ``probes`` queries (16 by default) in one ``query`` call, one
``iter_vectors`` block and one ``fetch`` of the returned ids. :func:`scale_for` caches
the result per store fingerprint so later reports can show cosine beside the backend's
own scores without probing again.
"""

from __future__ import annotations

from ...scales.formula import Transform
from ...scales.transforms import CATALOGUE, convert_threshold, transform_of
from .probe import MAX_PROBES, build_queries, probe_scale
from .result import ScaleResult
from .scale import (
    cache_path,
    default_cache_dir,
    documented_scale,
    scale_converters,
    scale_for,
    write_cache,
)
from .settings import ProbeScaleSettings

__all__ = [
    "CATALOGUE",
    "MAX_PROBES",
    "ProbeScaleSettings",
    "build_queries",
    "ScaleResult",
    "Transform",
    "cache_path",
    "convert_threshold",
    "default_cache_dir",
    "documented_scale",
    "probe_scale",
    "scale_converters",
    "scale_for",
    "transform_of",
    "write_cache",
]
