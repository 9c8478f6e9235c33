"""Score formulas: how stores turn cos, dot or l2 into a score, conversions, a store's scale.

The one table of score families: probe-scale measures against it, convert-threshold converts
with it, and reports and the score-family lookup of :mod:`.exact` derive from it.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError
from .formula import Transform, _from_cos, _to_cos

RTOL = 1e-3
"""Relative tolerance of a residual: float32 sums over long vectors, float16 storage."""
ATOL = 1e-6
"""Absolute floor of the tolerance (float32 rounding of scores near zero)."""

_BACKEND_LIST = [
    Transform("cos", "cos", True, lambda c: c, lambda s: s, "cos = s", "s = cos",
              "Qdrant Cosine, Milvus COSINE"),
    Transform("1-cos", "cos", False, lambda c: 1 - c, lambda s: 1 - s, "cos = 1-s",
              "s = 1-cos", "pgvector <=>, Chroma cosine, LanceDB cosine"),
    Transform("(1+cos)/2", "cos", True, lambda c: (1 + c) / 2, lambda s: 2 * s - 1,
              "cos = 2*s-1", "s = (1+cos)/2",
              "Upstash COSINE, Elasticsearch cosine, OpenSearch cosinesimil (2.19+, lucene)"),
    Transform("2-2cos", "cos", False, lambda c: 2 - 2 * c, lambda s: 1 - s / 2,
              "cos = 1-s/2", "s = 2-2*cos", "LanceDB cosine via an IVF index (approximate scores)"),
    Transform("1/(2-cos)", "cos", True, lambda c: 1 / (2 - c), lambda s: 2 - 1 / s,
              "cos = 2-1/s", "s = 1/(2-cos)",
              "Azure AI Search cosine, OpenSearch cosinesimil (nmslib/faiss before 2.19)"),
    Transform("dot", "dot", True, lambda d: d, lambda s: s, "cos = s", "s = cos",
              "FAISS IP, Milvus IP, Qdrant Dot"),
    Transform("-dot", "dot", False, lambda d: -d, lambda s: -s, "cos = -s", "s = -cos",
              "pgvector <#>"),
    Transform("1-dot", "dot", False, lambda d: 1 - d, lambda s: 1 - s, "cos = 1-s",
              "s = 1-cos", "Chroma ip, LanceDB dot"),
    Transform("(1+dot)/2", "dot", True, lambda d: (1 + d) / 2, lambda s: 2 * s - 1,
              "cos = 2*s-1", "s = (1+cos)/2",
              "Upstash DOT_PRODUCT, Elasticsearch dot_product"),
    Transform("1+dot|1/(1-dot)", "dot", True, lambda d: np.where(d >= 0, 1 + d, 1 / (1 - d)),
              lambda s: np.where(s >= 1, s - 1, 1 - 1 / s), "cos = where(s >= 1, s-1, 1-1/s)",
              "s = where(cos >= 0, 1+cos, 1/(1-cos))",
              "Elasticsearch max_inner_product, OpenSearch innerproduct"),
    Transform("l2", "l2", False, lambda x: x, lambda s: np.where(s >= 0, s, np.nan),
              "cos = 1-s^2/2", "s = sqrt(2-2*cos)", "Qdrant Euclid, pgvector <->"),
    Transform("l2^2", "l2", False, lambda x: x * x, lambda s: np.sqrt(s),
              "cos = 1-s/2", "s = 2-2*cos", "FAISS L2, Chroma l2, Milvus L2, LanceDB l2"),
    Transform("1/(1+l2^2)", "l2", True, lambda x: 1 / (1 + x * x),
              lambda s: np.sqrt(1 / s - 1), "cos = (3-1/s)/2", "s = 1/(3-2*cos)",
              "Upstash EUCLIDEAN, Elasticsearch l2_norm, OpenSearch l2"),
    Transform("1/(1+l2)", "l2", True, lambda x: 1 / (1 + x),
              lambda s: np.where(s <= 1, 1 / s - 1, np.nan), "cos = 1-(1/s-1)^2/2",
              "s = 1/(1+sqrt(2-2*cos))",
              "MongoDB Atlas euclidean, relevance = 1/(1+distance) wrappers"),
]  # fmt: skip


def _framework_transforms() -> tuple[list[Transform], dict[str, str]]:
    """LangChain's and LlamaIndex's relevance functions that are plain monotone formulas
    of the backend score (``scales/framework_scores.py``), and each entry's name -> formula.

    They convert a threshold written against a framework's relevance score
    (:func:`transform_of` finds them by formula or by name). The probe does not fit
    them: they hold for unit-norm vectors only, and no backend reports them."""
    from .framework_scores import FRAMEWORK_SCORES

    known = {t.formula for t in _BACKEND_LIST}
    out: dict[str, Transform] = {}
    names: dict[str, str] = {}
    for fs in FRAMEWORK_SCORES.values():
        relevance = fs.relevance
        if not relevance.monotone:
            continue
        names[fs.name] = relevance.formula
        if relevance.formula not in known:
            out.setdefault(relevance.formula, relevance)
    return list(out.values()), names


FRAMEWORK_LIST, FRAMEWORK_NAMES = _framework_transforms()

_CATALOGUE_LIST = _BACKEND_LIST
CATALOGUE: dict[str, Transform] = {t.formula: t for t in _CATALOGUE_LIST}
"""Every score formula a backend reports, keyed by its formula string."""
FRAMEWORK_CATALOGUE: dict[str, Transform] = {t.formula: t for t in FRAMEWORK_LIST}
"""The framework relevance formulas that are not backend scores (unit-norm vectors)."""

_ALIASES = {
    "cosine": "cos",
    "(cos+1)/2": "(1+cos)/2",
    "2-2*cos": "2-2cos",
    "2*(1-cos)": "2-2cos",
    "(dot+1)/2": "(1+dot)/2",
    "1/(l2^2+1)": "1/(1+l2^2)",
    "1/(l2+1)": "1/(1+l2)",
    "l2sq": "l2^2",
}


#: names users write for the default strategies (LangChain calls them EUCLIDEAN_DISTANCE)
_FRAMEWORK_ALIASES = {
    "langchain-faiss-l2": "langchain-faiss-euclidean",
    "langchain-faiss": "langchain-faiss-euclidean",
    "langchain-chroma": "langchain-chroma-l2",
    "langchain-pgvector": "langchain-pgvector-cosine",
    "langchain-pgvector-l2": "langchain-pgvector-euclidean",
    "langchain-pgvectorstore": "langchain-pgvectorstore-cosine",
    "llamaindex-chroma": "llamaindex-chroma-l2",
    "llamaindex-faiss": "llamaindex-faiss-l2",
}


def transform_of(text: str) -> Transform:
    """The catalogue entry for a formula string (spaces, ``**`` and case are forgiven),
    or for a framework score's name (``langchain-faiss-euclidean``,
    ``llamaindex-chroma-l2``, ...; see ``scales/framework_scores.py``)."""
    key = text.strip().lower().replace(" ", "").replace("**", "^").replace("²", "^2")
    key = _ALIASES.get(key, key)
    name = _FRAMEWORK_ALIASES.get(key, key)
    if name in FRAMEWORK_NAMES:
        key = FRAMEWORK_NAMES[name]
    else:
        from .framework_scores import FRAMEWORK_SCORES

        if name in FRAMEWORK_SCORES:  # a relevance function that is not monotone
            fs = FRAMEWORK_SCORES[name]
            raise InputError(
                f"{name} ({fs.relevance.formula}) is not a monotone function of the backend "
                f"score, so a threshold on it does not convert: {fs.note}"
            )
    if key in FRAMEWORK_CATALOGUE:
        return FRAMEWORK_CATALOGUE[key]
    if key not in CATALOGUE:
        known = ", ".join(CATALOGUE)
        raise InputError(
            f"unknown score formula '{text}'; use one of: {known} (or a framework score "
            "name such as langchain-faiss-euclidean)"
        )
    return CATALOGUE[key]


def convert_threshold(
    value: float, from_formula: str, to_formula: str, normalized: bool = True
) -> float:
    """A threshold on one score scale expressed on another (12 significant digits).

    ``normalized`` says queries and stored vectors are unit-norm, which conversions
    between ``cos``, ``dot`` and ``l2`` need. Raises InputError when ``value`` lies
    outside the range of the source scale, or the conversion needs unit vectors.
    """
    src, dst = transform_of(from_formula), transform_of(to_formula)
    lo, hi = src.score_range(normalized)
    if not (math.isfinite(value) and lo <= value <= hi):
        unit = " on unit-norm vectors" if normalized and src.variable != "cos" else ""
        raise InputError(
            f"{value:g} is outside the range of {src.formula} [{lo:g}, {hi:g}]{unit}; "
            "check the value and --from"
        )
    if src.variable != dst.variable and not normalized:
        raise InputError(
            f"converting {src.formula} to {dst.formula} needs unit-norm vectors "
            f"({src.variable} and {dst.variable} are unrelated otherwise); "
            "normalise the vectors or convert within one variable"
        )
    x = src.invert(np.asarray([value], dtype=np.float64))
    if src.variable != dst.variable:
        x = _from_cos(dst.variable, np.clip(_to_cos(src.variable, x), -1.0, 1.0))
    out = float(dst.apply(x)[0])
    if not math.isfinite(out):
        raise InputError(f"{value:g} on {src.formula} has no finite value on {dst.formula}")
    return float(f"{out:.12g}")
