"""probe-scale: measure which formula a vector store's reported scores follow.

Stores report different numbers for one pair of vectors (Upstash COSINE ``(1+cos)/2``, pgvector
``<=>`` ``1-cos``, FAISS L2 ``l2^2``, Qdrant Euclid ``l2``), so a threshold calibrated on one
scale means something else on another. The probe builds queries from the store's own vectors
(the vectors, mixtures, perturbations, random directions; half rescaled so ``cos`` and ``dot``
differ on unit data), computes the exact ``cos``, ``dot`` and ``l2`` of every returned pair
from the fetched vectors, and tests every formula of :data:`CATALOGUE`: one fits when every
residual is within a float tolerance (relative to the score's and the vectors' magnitude, so
float16 backends pass). Nothing is fitted; when nothing fits the result says so (``ok=False``)
and never names a guess. A probe costs ``probes`` queries (16) in one ``query`` call, one
``iter_vectors`` block and one ``fetch``; :func:`scale_for` caches the result per store
fingerprint.
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
