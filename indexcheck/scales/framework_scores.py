"""LangChain's and LlamaIndex's relevance scores, as plain formulas of the backend score.

A framework often hands the application a relevance score rather than the backend's raw
score, and a threshold in application code is on that scale. Each entry is one such function,
read from the framework's source (``source``: file and function; ``version``: the release
read), written over ``cos``, ``dot`` or ``l2`` (plain Euclidean) for unit-norm vectors
(``cos = dot``, ``l2^2 = 2-2cos``). Its ``relevance`` is a :class:`~.formula.Transform`, as in
the backend catalogue (``fn`` to the framework's score, ``inv`` back, NaN where a score has no
preimage); functions giving one formula share an entry. LangChain's
``_max_inner_product_relevance_score_fn(d)`` (``1-d`` for ``d > 0``, else ``-d``) is not
monotone: on a backend returning the raw dot product (FAISS ``IndexFlatIP``, ``PGVectorStore``
with ``INNER_PRODUCT``) a closer match gets a lower relevance for every positive dot. Such
entries carry ``monotone=False``, an ``inv`` for ``dot > 0`` and a ``note``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .formula import Transform, _from_cos, _to_cos

SQRT2 = math.sqrt(2.0)

LC_CORE = (
    "langchain-core 1.8.3, langchain_core/vectorstores/base.py "
    "(https://github.com/langchain-ai/langchain/blob/master/libs/core/langchain_core/"
    "vectorstores/base.py)"
)
LC_FAISS = (
    "langchain-community 0.4.2, langchain_community/vectorstores/faiss.py "
    "FAISS._select_relevance_score_fn, FAISS.__from (IndexFlatIP for MAX_INNER_PRODUCT, "
    "IndexFlatL2 otherwise; default EUCLIDEAN_DISTANCE)"
)
LC_CHROMA = (
    "langchain-chroma 1.1.0, langchain_chroma/vectorstores.py "
    "Chroma._select_relevance_score_fn (by the collection's hnsw/spann space)"
)
LC_PGVECTOR = (
    "langchain-postgres 0.0.19, langchain_postgres/vectorstores.py PGVector "
    "(distance_strategy -> cosine_distance <=>, l2_distance <->, max_inner_product <#>; "
    "default COSINE)"
)
LC_PGVECTORSTORE = (
    "langchain-postgres 0.0.19, langchain_postgres/v2/async_vectorstore.py "
    "AsyncPGVectorStore (SELECT search_function(...) AS distance; DistanceStrategy in "
    "v2/indexes.py: cosine_distance, l2_distance, inner_product; default COSINE_DISTANCE)"
)
LI_SIMPLE = (
    "llama-index-core 0.14.25, llama_index/core/vector_stores/simple.py + "
    "commands/indices/query/embedding_utils.py get_top_k_embeddings (default similarity_fn: "
    "base/embeddings/base.py similarity(), cosine)"
)
LI_CHROMA = (
    "llama-index-vector-stores-chroma 0.6.0, llama_index/vector_stores/chroma/base.py "
    "ChromaVectorStore._query: similarity_score = math.exp(-distance)"
)
LI_FAISS = (
    "llama-index-vector-stores-faiss 0.7.0, llama_index/vector_stores/faiss/base.py "
    "FaissVectorStore.query: similarities = the faiss distances as returned"
)
LI_PG = (
    "llama-index-vector-stores-postgres 0.9.0, llama_index/vector_stores/postgres/base.py "
    "PGVectorStore: ORDER BY cosine_distance, similarity = 1 - distance"
)


def _where(cond: np.ndarray, value: np.ndarray) -> np.ndarray:
    return np.where(cond, value, np.nan)


def _max_ip(d: np.ndarray) -> np.ndarray:
    """LangChain ``_max_inner_product_relevance_score_fn``: 1-d if d > 0 else -d."""
    return np.where(d > 0, 1.0 - d, -d)


def _ident(c: np.ndarray) -> np.ndarray:
    return c


def _exp_one_minus(c: np.ndarray) -> np.ndarray:  # exp(-(1-c)), c = cos or dot
    return np.exp(c - 1.0)


def _exp_one_minus_inv(s: np.ndarray) -> np.ndarray:
    return _where(s > 0, 1.0 + np.log(s))


_LC_COSINE = "LangChain _cosine_relevance_score_fn"
_LC_EUCLIDEAN = "LangChain _euclidean_relevance_score_fn"
_LC_MAX_IP = "LangChain _max_inner_product_relevance_score_fn"

# What each function makes of the backend score it is fed, over the variable (unit vectors)
# fmt: off
EUCLIDEAN_OF_L2SQ = Transform(
    "1-l2^2/sqrt(2)", "l2", True, lambda x: 1.0 - x * x / SQRT2,
    lambda s: _where(s <= 1.0, np.sqrt(np.clip(SQRT2 * (1.0 - s), 0.0, None))),
    "cos = 1-(1-s)/sqrt(2)", "s = 1-sqrt(2)*(1-cos)", f"{_LC_EUCLIDEAN} of l2^2",
)
EUCLIDEAN_OF_L2 = Transform(
    "1-l2/sqrt(2)", "l2", True, lambda x: 1.0 - x / SQRT2,
    lambda s: _where(s <= 1.0, SQRT2 * (1.0 - s)),
    "cos = 1-(1-s)^2", "s = 1-sqrt(1-cos)", f"{_LC_EUCLIDEAN} of l2",
)
COSINE_OF_L2SQ = Transform(
    "1-l2^2", "l2", True, lambda x: 1.0 - x * x,
    lambda s: _where(s <= 1.0, np.sqrt(np.clip(1.0 - s, 0.0, None))),
    "cos = (1+s)/2", "s = 2*cos-1", f"{_LC_COSINE} of l2^2",
)
MAX_IP_OF_DOT = Transform(
    "1-dot if dot>0 else -dot", "dot", False, _max_ip,
    lambda s: _where((s >= 0) & (s <= 1.0), 1.0 - s),  # the dot > 0 branch: s = 1-dot
    "cos = 1-s (for cos > 0)", "s = 1-cos (for cos > 0)", f"{_LC_MAX_IP} of dot",
    monotone=False,
)
MAX_IP_OF_MINUS_DOT = Transform(
    "dot if dot>=0 else 1+dot", "dot", True, lambda d: _max_ip(-d), _ident,
    "cos = s (for cos >= 0)", "s = cos (for cos >= 0)", f"{_LC_MAX_IP} of -dot",
    monotone=False,
)
MAX_IP_OF_ONE_MINUS_DOT = Transform(
    "dot", "dot", True, lambda d: _max_ip(1.0 - d), _ident, "cos = s", "s = cos",
    f"{_LC_MAX_IP} of 1-dot",
)
COS = Transform(
    "cos", "cos", True, _ident, _ident, "cos = s", "s = cos",
    f"{_LC_COSINE} of 1-cos; LlamaIndex's cosine similarity",
)
DOT = Transform(
    "dot", "dot", True, _ident, _ident, "cos = s", "s = cos",
    "LlamaIndex FaissVectorStore.query of dot",
)
L2SQ = Transform(
    "l2^2", "l2", False, lambda x: x * x, lambda s: _where(s >= 0, np.sqrt(np.clip(s, 0.0, None))),
    "cos = 1-s/2", "s = 2-2*cos", "LlamaIndex FaissVectorStore.query of l2^2",
)
EXP_OF_L2SQ = Transform(
    "exp(-l2^2)", "l2", True, lambda x: np.exp(-(x * x)),
    lambda s: _where((s > 0) & (s <= 1.0), np.sqrt(np.clip(-np.log(s), 0.0, None))),
    "cos = 1+ln(s)/2", "s = exp(2*cos-2)", "LlamaIndex Chroma exp(-distance) of l2^2",
)
EXP_OF_ONE_MINUS_COS = Transform(
    "exp(cos-1)", "cos", True, _exp_one_minus, _exp_one_minus_inv,
    "cos = 1+ln(s)", "s = exp(cos-1)", "LlamaIndex Chroma exp(-distance) of 1-cos",
)
EXP_OF_ONE_MINUS_DOT = Transform(
    "exp(dot-1)", "dot", True, _exp_one_minus, _exp_one_minus_inv,
    "cos = 1+ln(s)", "s = exp(cos-1)", "LlamaIndex Chroma exp(-distance) of 1-dot",
)
# fmt: on


@dataclass(frozen=True)
class FrameworkScore:
    """One framework relevance function applied to one backend's raw score.

    ``backend``/``backend_metric``/``backend_score`` say where it applies: the indexcheck
    store scheme, the index metric, and the raw score formula that the framework feeds
    to its function (a formula of the probe's catalogue, e.g. ``l2^2`` or ``1-cos``).
    ``relevance`` is the score the application gets, over the variable for unit vectors.
    """

    name: str
    framework: str
    backend: str
    backend_metric: str
    backend_score: str
    function: str
    relevance: Transform
    default: bool
    source: str
    note: str = ""


_FRAMEWORK_SCORES = [
    # LangChain FAISS (langchain-community): scores are faiss's own D before the function
    FrameworkScore(
        "langchain-faiss-euclidean", "langchain", "faiss", "l2", "l2^2",
        "_euclidean_relevance_score_fn", EUCLIDEAN_OF_L2SQ, True, f"{LC_FAISS}; {LC_CORE}",
        note="the default FAISS store: IndexFlatL2 returns SQUARED distances, which the "
        "function divides by sqrt(2) as if they were plain ones",
    ),
    FrameworkScore(
        "langchain-faiss-cosine", "langchain", "faiss", "l2", "l2^2",
        "_cosine_relevance_score_fn", COSINE_OF_L2SQ, False, f"{LC_FAISS}; {LC_CORE}",
        note="DistanceStrategy.COSINE still builds IndexFlatL2, so 1-d is 1-l2^2",
    ),
    FrameworkScore(
        "langchain-faiss-max-inner-product", "langchain", "faiss", "ip", "dot",
        "_max_inner_product_relevance_score_fn", MAX_IP_OF_DOT, False,
        f"{LC_FAISS}; {LC_CORE}",
        note="faiss IndexFlatIP returns the dot product (higher is closer), so for every "
        "positive dot a closer match gets a LOWER relevance; a relevance threshold keeps "
        "the worst matches",
    ),
    # LangChain Chroma: Chroma's distances (l2 = squared, cosine = 1-cos, ip = 1-dot)
    FrameworkScore(
        "langchain-chroma-l2", "langchain", "chroma", "l2", "l2^2",
        "_euclidean_relevance_score_fn", EUCLIDEAN_OF_L2SQ, True, f"{LC_CHROMA}; {LC_CORE}",
        note="Chroma's default space is l2, and its l2 distance is squared",
    ),
    FrameworkScore(
        "langchain-chroma-cosine", "langchain", "chroma", "cosine", "1-cos",
        "_cosine_relevance_score_fn", COS, False, f"{LC_CHROMA}; {LC_CORE}",
    ),
    FrameworkScore(
        "langchain-chroma-ip", "langchain", "chroma", "ip", "1-dot",
        "_max_inner_product_relevance_score_fn", MAX_IP_OF_ONE_MINUS_DOT, False,
        f"{LC_CHROMA}; {LC_CORE}",
        note="1-d with d = 1-dot while d > 0; at dot >= 1 the function returns -d = dot-1 "
        "(0 for an exact match of unit vectors)",
    ),
    # LangChain PGVector (langchain_pg_embedding) and PGVectorStore (v2 tables)
    FrameworkScore(
        "langchain-pgvector-cosine", "langchain", "pgvector", "cosine", "1-cos",
        "_cosine_relevance_score_fn", COS, True, f"{LC_PGVECTOR}; {LC_CORE}",
    ),
    FrameworkScore(
        "langchain-pgvector-euclidean", "langchain", "pgvector", "l2", "l2",
        "_euclidean_relevance_score_fn", EUCLIDEAN_OF_L2, False, f"{LC_PGVECTOR}; {LC_CORE}",
    ),
    FrameworkScore(
        "langchain-pgvector-max-inner-product", "langchain", "pgvector", "ip", "-dot",
        "_max_inner_product_relevance_score_fn", MAX_IP_OF_MINUS_DOT, False,
        f"{LC_PGVECTOR}; {LC_CORE}",
        note="<#> is -dot, so the function gives dot for dot >= 0 and 1+dot below",
    ),
    FrameworkScore(
        "langchain-pgvectorstore-cosine", "langchain", "pgvector", "cosine", "1-cos",
        "_cosine_relevance_score_fn", COS, True, f"{LC_PGVECTORSTORE}; {LC_CORE}",
    ),
    FrameworkScore(
        "langchain-pgvectorstore-euclidean", "langchain", "pgvector", "l2", "l2",
        "_euclidean_relevance_score_fn", EUCLIDEAN_OF_L2, False,
        f"{LC_PGVECTORSTORE}; {LC_CORE}",
    ),
    FrameworkScore(
        "langchain-pgvectorstore-inner-product", "langchain", "pgvector", "ip", "dot",
        "_max_inner_product_relevance_score_fn", MAX_IP_OF_DOT, False,
        f"{LC_PGVECTORSTORE}; {LC_CORE}",
        note="the SELECT uses inner_product() (the dot itself, not <#>), so for every "
        "positive dot a closer match gets a LOWER relevance",
    ),
    # LlamaIndex
    FrameworkScore(
        "llamaindex-simple", "llamaindex", "llamaindex", "cosine", "cos",
        "similarity (SimilarityMode.DEFAULT)", COS, True, LI_SIMPLE,
        note="computed in Python over the persisted vectors; exact, no ANN",
    ),
    FrameworkScore(
        "llamaindex-faiss-l2", "llamaindex", "faiss", "l2", "l2^2",
        "FaissVectorStore.query", L2SQ, True, LI_FAISS,
        note="the 'similarity' is faiss's squared L2 distance: lower is closer",
    ),
    FrameworkScore(
        "llamaindex-faiss-ip", "llamaindex", "faiss", "ip", "dot",
        "FaissVectorStore.query", DOT, False, LI_FAISS,
    ),
    FrameworkScore(
        "llamaindex-chroma-l2", "llamaindex", "chroma", "l2", "l2^2",
        "exp(-distance)", EXP_OF_L2SQ, True, LI_CHROMA,
        note="Chroma's default space l2 gives a squared distance",
    ),
    FrameworkScore(
        "llamaindex-chroma-cosine", "llamaindex", "chroma", "cosine", "1-cos",
        "exp(-distance)", EXP_OF_ONE_MINUS_COS, False, LI_CHROMA,
    ),
    FrameworkScore(
        "llamaindex-chroma-ip", "llamaindex", "chroma", "ip", "1-dot",
        "exp(-distance)", EXP_OF_ONE_MINUS_DOT, False, LI_CHROMA,
    ),
    FrameworkScore(
        "llamaindex-pgvector", "llamaindex", "pgvector", "cosine", "1-cos",
        "1 - distance", COS, True, LI_PG,
    ),
]  # fmt: skip

FRAMEWORK_SCORES: dict[str, FrameworkScore] = {s.name: s for s in _FRAMEWORK_SCORES}
"""Every framework relevance function, keyed by name."""


def framework_scores_for(backend: str, metric: str | None = None) -> list[FrameworkScore]:
    """The entries that apply to an indexcheck store scheme (and index metric), defaults
    first."""
    out = [
        s
        for s in _FRAMEWORK_SCORES
        if s.backend == backend and (metric is None or s.backend_metric == metric)
    ]
    return sorted(out, key=lambda s: not s.default)


def framework_score_from_cos(name: str, cos: np.ndarray) -> np.ndarray:
    """The framework's score for cosines of unit vectors, float64 like ``cos``'s shape."""
    relevance = FRAMEWORK_SCORES[name].relevance
    c = np.asarray(cos, dtype=np.float64)
    return relevance.apply(_from_cos(relevance.variable, c))


def cos_from_framework_score(name: str, score: np.ndarray) -> np.ndarray:
    """Cosine (unit vectors) for a framework score, float64; NaN outside the range."""
    relevance = FRAMEWORK_SCORES[name].relevance
    return _to_cos(relevance.variable, relevance.invert(np.asarray(score, dtype=np.float64)))
