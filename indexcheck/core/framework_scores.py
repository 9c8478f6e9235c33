"""LangChain's and LlamaIndex's relevance scores, as plain formulas of the backend score.

A framework often hands the application a *relevance* score rather than the backend's
raw score, and a threshold written in application code is on that scale. Every entry here
is one such function, read from the framework's source (``source`` names the file and
function; ``version`` the release read), written over one variable as the probe's
catalogue does: ``cos``, ``dot`` or ``l2`` (plain Euclidean), valid for unit-norm vectors
(``cos = dot``, ``l2^2 = 2-2cos``).

``fn`` maps the variable to the framework's score, ``inv`` maps back (NaN where a score
has no preimage). Both take and return float64 arrays of any shape. ``cos_of_s`` and
``s_of_cos`` say the same as text.

Two LangChain functions are not monotone over the whole range:
``_max_inner_product_relevance_score_fn(d)`` is ``1-d`` for ``d > 0`` and ``-d``
otherwise. Applied to a backend that returns the raw dot product (FAISS ``IndexFlatIP``,
``PGVectorStore`` with ``INNER_PRODUCT``), a *closer* match gets a *lower* relevance for
every positive dot product. Those entries carry ``monotone=False`` and their ``inv``
follows the branch that holds for ``dot > 0``; ``note`` says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

_Fn = Callable[[np.ndarray], np.ndarray]

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
    "core/indices/query/embedding_utils.py get_top_k_embeddings (default similarity_fn: "
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


@dataclass(frozen=True)
class FrameworkScore:
    """One framework relevance function applied to one backend's raw score.

    ``backend``/``backend_metric``/``backend_score`` say where it applies: the indexcheck
    store scheme, the index metric, and the raw score formula that the framework feeds
    to its function (a formula of the probe's catalogue, e.g. ``l2^2`` or ``1-cos``).
    ``formula`` is the framework score over ``variable`` for unit vectors.
    """

    name: str
    framework: str
    backend: str
    backend_metric: str
    backend_score: str
    function: str
    formula: str
    variable: str
    higher_is_better: bool
    cos_of_s: str
    s_of_cos: str
    default: bool
    source: str
    fn: _Fn = field(repr=False, compare=False)
    inv: _Fn = field(repr=False, compare=False)
    monotone: bool = True
    note: str = ""

    def apply(self, x: np.ndarray) -> np.ndarray:
        """Variable (float array) -> framework score, float64."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.asarray(self.fn(np.asarray(x, dtype=np.float64)), dtype=np.float64)

    def invert(self, s: np.ndarray) -> np.ndarray:
        """Framework score -> variable, float64 (NaN outside the range)."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.asarray(self.inv(np.asarray(s, dtype=np.float64)), dtype=np.float64)


def _where(cond: np.ndarray, value: np.ndarray) -> np.ndarray:
    return np.where(cond, value, np.nan)


def _max_ip_fn(d: np.ndarray) -> np.ndarray:
    """LangChain ``_max_inner_product_relevance_score_fn``: 1-d if d > 0 else -d."""
    return np.where(d > 0, 1.0 - d, -d)


# Each formula over its variable, with inverses on the valid range.
def _euclid_l2sq(x: np.ndarray) -> np.ndarray:  # 1 - l2^2/sqrt(2)
    return np.asarray(1.0 - x * x / SQRT2, dtype=np.float64)


def _euclid_l2sq_inv(s: np.ndarray) -> np.ndarray:
    return _where(s <= 1.0, np.sqrt(np.clip(SQRT2 * (1.0 - s), 0.0, None)))


def _euclid_l2(x: np.ndarray) -> np.ndarray:  # 1 - l2/sqrt(2)
    return np.asarray(1.0 - x / SQRT2, dtype=np.float64)


def _euclid_l2_inv(s: np.ndarray) -> np.ndarray:
    return _where(s <= 1.0, SQRT2 * (1.0 - s))


def _one_minus_l2sq(x: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 - x * x, dtype=np.float64)


def _one_minus_l2sq_inv(s: np.ndarray) -> np.ndarray:
    return _where(s <= 1.0, np.sqrt(np.clip(1.0 - s, 0.0, None)))


def _exp_minus_l2sq(x: np.ndarray) -> np.ndarray:
    return np.asarray(np.exp(-(x * x)), dtype=np.float64)


def _exp_minus_l2sq_inv(s: np.ndarray) -> np.ndarray:
    return _where((s > 0) & (s <= 1.0), np.sqrt(np.clip(-np.log(s), 0.0, None)))


def _exp_one_minus(c: np.ndarray) -> np.ndarray:  # exp(-(1-c)), c = cos or dot
    return np.asarray(np.exp(c - 1.0), dtype=np.float64)


def _exp_one_minus_inv(s: np.ndarray) -> np.ndarray:
    return _where(s > 0, 1.0 + np.log(s))


def _ident(c: np.ndarray) -> np.ndarray:
    return c


def _square(x: np.ndarray) -> np.ndarray:
    return np.asarray(x * x, dtype=np.float64)


def _sqrt_inv(s: np.ndarray) -> np.ndarray:
    return _where(s >= 0, np.sqrt(np.clip(s, 0.0, None)))


def _faiss_ip(d: np.ndarray) -> np.ndarray:  # backend gives dot
    return _max_ip_fn(d)


def _faiss_ip_inv(s: np.ndarray) -> np.ndarray:  # the dot > 0 branch: s = 1-dot
    return _where((s >= 0) & (s <= 1.0), 1.0 - s)


def _chroma_ip(d: np.ndarray) -> np.ndarray:  # backend gives 1-dot
    return _max_ip_fn(1.0 - d)


def _pg_max_ip(d: np.ndarray) -> np.ndarray:  # backend gives <#> = -dot
    return _max_ip_fn(-d)


_FRAMEWORK_SCORES = [
    # LangChain FAISS (langchain-community): scores are faiss's own D before the function
    FrameworkScore(
        "langchain-faiss-euclidean", "langchain", "faiss", "l2", "l2^2",
        "_euclidean_relevance_score_fn", "1-l2^2/sqrt(2)", "l2", True,
        "cos = 1-(1-s)/sqrt(2)", "s = 1-sqrt(2)*(1-cos)", True, f"{LC_FAISS}; {LC_CORE}",
        _euclid_l2sq, _euclid_l2sq_inv,
        note="the default FAISS store: IndexFlatL2 returns SQUARED distances, which the "
        "function divides by sqrt(2) as if they were plain ones",
    ),
    FrameworkScore(
        "langchain-faiss-cosine", "langchain", "faiss", "l2", "l2^2",
        "_cosine_relevance_score_fn", "1-l2^2", "l2", True,
        "cos = (1+s)/2", "s = 2*cos-1", False, f"{LC_FAISS}; {LC_CORE}",
        _one_minus_l2sq, _one_minus_l2sq_inv,
        note="DistanceStrategy.COSINE still builds IndexFlatL2, so 1-d is 1-l2^2",
    ),
    FrameworkScore(
        "langchain-faiss-max-inner-product", "langchain", "faiss", "ip", "dot",
        "_max_inner_product_relevance_score_fn", "1-dot if dot>0 else -dot", "dot", False,
        "cos = 1-s (for cos > 0)", "s = 1-cos (for cos > 0)", False,
        f"{LC_FAISS}; {LC_CORE}", _faiss_ip, _faiss_ip_inv, monotone=False,
        note="faiss IndexFlatIP returns the dot product (higher is closer), so for every "
        "positive dot a closer match gets a LOWER relevance; a relevance threshold keeps "
        "the worst matches",
    ),
    # LangChain Chroma: Chroma's distances (l2 = squared, cosine = 1-cos, ip = 1-dot)
    FrameworkScore(
        "langchain-chroma-l2", "langchain", "chroma", "l2", "l2^2",
        "_euclidean_relevance_score_fn", "1-l2^2/sqrt(2)", "l2", True,
        "cos = 1-(1-s)/sqrt(2)", "s = 1-sqrt(2)*(1-cos)", True, f"{LC_CHROMA}; {LC_CORE}",
        _euclid_l2sq, _euclid_l2sq_inv,
        note="Chroma's default space is l2, and its l2 distance is squared",
    ),
    FrameworkScore(
        "langchain-chroma-cosine", "langchain", "chroma", "cosine", "1-cos",
        "_cosine_relevance_score_fn", "cos", "cos", True, "cos = s", "s = cos", False,
        f"{LC_CHROMA}; {LC_CORE}", _ident, _ident,
    ),
    FrameworkScore(
        "langchain-chroma-ip", "langchain", "chroma", "ip", "1-dot",
        "_max_inner_product_relevance_score_fn", "dot", "dot", True, "cos = s", "s = cos",
        False, f"{LC_CHROMA}; {LC_CORE}", _chroma_ip, _ident,
        note="1-d with d = 1-dot while d > 0; at dot >= 1 the function returns -d = dot-1 "
        "(0 for an exact match of unit vectors)",
    ),
    # LangChain PGVector (langchain_pg_embedding) and PGVectorStore (v2 tables)
    FrameworkScore(
        "langchain-pgvector-cosine", "langchain", "pgvector", "cosine", "1-cos",
        "_cosine_relevance_score_fn", "cos", "cos", True, "cos = s", "s = cos", True,
        f"{LC_PGVECTOR}; {LC_CORE}", _ident, _ident,
    ),
    FrameworkScore(
        "langchain-pgvector-euclidean", "langchain", "pgvector", "l2", "l2",
        "_euclidean_relevance_score_fn", "1-l2/sqrt(2)", "l2", True,
        "cos = 1-(1-s)^2", "s = 1-sqrt(1-cos)", False, f"{LC_PGVECTOR}; {LC_CORE}",
        _euclid_l2, _euclid_l2_inv,
    ),
    FrameworkScore(
        "langchain-pgvector-max-inner-product", "langchain", "pgvector", "ip", "-dot",
        "_max_inner_product_relevance_score_fn", "dot if dot>=0 else 1+dot", "dot", True,
        "cos = s (for cos >= 0)", "s = cos (for cos >= 0)", False,
        f"{LC_PGVECTOR}; {LC_CORE}", _pg_max_ip, _ident, monotone=False,
        note="<#> is -dot, so the function gives dot for dot >= 0 and 1+dot below",
    ),
    FrameworkScore(
        "langchain-pgvectorstore-cosine", "langchain", "pgvector", "cosine", "1-cos",
        "_cosine_relevance_score_fn", "cos", "cos", True, "cos = s", "s = cos", True,
        f"{LC_PGVECTORSTORE}; {LC_CORE}", _ident, _ident,
    ),
    FrameworkScore(
        "langchain-pgvectorstore-euclidean", "langchain", "pgvector", "l2", "l2",
        "_euclidean_relevance_score_fn", "1-l2/sqrt(2)", "l2", True,
        "cos = 1-(1-s)^2", "s = 1-sqrt(1-cos)", False, f"{LC_PGVECTORSTORE}; {LC_CORE}",
        _euclid_l2, _euclid_l2_inv,
    ),
    FrameworkScore(
        "langchain-pgvectorstore-inner-product", "langchain", "pgvector", "ip", "dot",
        "_max_inner_product_relevance_score_fn", "1-dot if dot>0 else -dot", "dot", False,
        "cos = 1-s (for cos > 0)", "s = 1-cos (for cos > 0)", False,
        f"{LC_PGVECTORSTORE}; {LC_CORE}", _faiss_ip, _faiss_ip_inv, monotone=False,
        note="the SELECT uses inner_product() (the dot itself, not <#>), so for every "
        "positive dot a closer match gets a LOWER relevance",
    ),
    # LlamaIndex
    FrameworkScore(
        "llamaindex-simple", "llamaindex", "llamaindex", "cosine", "cos",
        "similarity (SimilarityMode.DEFAULT)", "cos", "cos", True, "cos = s", "s = cos",
        True, LI_SIMPLE, _ident, _ident,
        note="computed in Python over the persisted vectors; exact, no ANN",
    ),
    FrameworkScore(
        "llamaindex-faiss-l2", "llamaindex", "faiss", "l2", "l2^2",
        "FaissVectorStore.query", "l2^2", "l2", False, "cos = 1-s/2", "s = 2-2*cos", True,
        LI_FAISS, _square, _sqrt_inv,
        note="the 'similarity' is faiss's squared L2 distance: lower is closer",
    ),
    FrameworkScore(
        "llamaindex-faiss-ip", "llamaindex", "faiss", "ip", "dot",
        "FaissVectorStore.query", "dot", "dot", True, "cos = s", "s = cos", False,
        LI_FAISS, _ident, _ident,
    ),
    FrameworkScore(
        "llamaindex-chroma-l2", "llamaindex", "chroma", "l2", "l2^2",
        "exp(-distance)", "exp(-l2^2)", "l2", True, "cos = 1+ln(s)/2", "s = exp(2*cos-2)",
        True, LI_CHROMA, _exp_minus_l2sq, _exp_minus_l2sq_inv,
        note="Chroma's default space l2 gives a squared distance",
    ),
    FrameworkScore(
        "llamaindex-chroma-cosine", "llamaindex", "chroma", "cosine", "1-cos",
        "exp(-distance)", "exp(cos-1)", "cos", True, "cos = 1+ln(s)", "s = exp(cos-1)",
        False, LI_CHROMA, _exp_one_minus, _exp_one_minus_inv,
    ),
    FrameworkScore(
        "llamaindex-chroma-ip", "llamaindex", "chroma", "ip", "1-dot",
        "exp(-distance)", "exp(dot-1)", "dot", True, "cos = 1+ln(s)", "s = exp(cos-1)",
        False, LI_CHROMA, _exp_one_minus, _exp_one_minus_inv,
    ),
    FrameworkScore(
        "llamaindex-pgvector", "llamaindex", "pgvector", "cosine", "1-cos",
        "1 - distance", "cos", "cos", True, "cos = s", "s = cos", True, LI_PG,
        _ident, _ident,
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
    s = FRAMEWORK_SCORES[name]
    c = np.asarray(cos, dtype=np.float64)
    if s.variable == "l2":
        x = np.sqrt(np.clip(2.0 - 2.0 * c, 0.0, None))
    else:
        x = c
    return s.apply(x)


def cos_from_framework_score(name: str, score: np.ndarray) -> np.ndarray:
    """Cosine (unit vectors) for a framework score, float64; NaN outside the range."""
    s = FRAMEWORK_SCORES[name]
    x = s.invert(np.asarray(score, dtype=np.float64))
    if s.variable == "l2":
        return np.asarray(1.0 - x * x / 2.0, dtype=np.float64)
    return x
