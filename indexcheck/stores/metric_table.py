"""The one metric table: each engine's name for a metric -> the score it reports.

A :class:`Score` is a formula over ``cos``, ``dot`` and ``l2`` (what ``StoreInfo.score``
shows and probe-scale tests) and which way is nearer (``higher_is_better``). Engines
spell the same metric differently and report different scores for it (Chroma's
``cosine`` is a distance, ``1-cos``; Milvus's ``COSINE`` is the similarity), so each
engine has its own row of names, all pointing at the few shared entries below.

    >>> score_of("milvus", "COSINE")
    Score(formula='cos', higher_is_better=True)
    >>> score_of("lancedb", "cosine").formula
    '1-cos'
"""

from __future__ import annotations

from typing import NamedTuple


class Score(NamedTuple):
    """A reported score: its formula and whether a higher one is nearer."""

    formula: str
    higher_is_better: bool


COS = Score("cos", True)
DOT = Score("dot", True)
L2_SQUARED = Score("l2^2", False)
L2 = Score("l2", False)
L1 = Score("l1", False)
ONE_MINUS_COS = Score("1-cos", False)
ONE_MINUS_DOT = Score("1-dot", False)
MINUS_DOT = Score("-dot", False)
HALF_ONE_PLUS_COS = Score("(1+cos)/2", True)
HALF_ONE_PLUS_DOT = Score("(1+dot)/2", True)
INV_ONE_PLUS_L2_SQUARED = Score("1/(1+l2^2)", True)
INV_ONE_PLUS_L2 = Score("1/(1+l2)", True)
INV_TWO_MINUS_COS = Score("1/(2-cos)", True)
MAX_INNER_PRODUCT = Score("1+dot|1/(1-dot)", True)
#: OpenSearch's cosinesimil on nmslib and faiss before 2.19 (``1/(1+d)``, ``d = 1-cos``)
OPENSEARCH_LEGACY_COSINE = "cosinesimil (nmslib/faiss before 2.19)"

#: engine -> its own metric name -> the score it reports for that metric
ENGINE_SCORES: dict[str, dict[str, Score]] = {
    # the local stores (parquet, jsonl, faiss-built, llamaindex, testing): exact search
    # by indexcheck itself, cosine as the similarity
    "local": {"cosine": COS, "ip": DOT, "l2": L2_SQUARED},
    "milvus": {"COSINE": COS, "IP": DOT, "L2": L2_SQUARED},
    # LanceDB's ``_distance``: squared l2, and one minus the similarity otherwise
    "lancedb": {"l2": L2_SQUARED, "cosine": ONE_MINUS_COS, "dot": ONE_MINUS_DOT},
    "chroma": {"l2": L2_SQUARED, "ip": ONE_MINUS_DOT, "cosine": ONE_MINUS_COS},
    # pgvector's operators ``<=>``, ``<->``, ``<#>`` and ``<+>``
    "pgvector": {"cosine": ONE_MINUS_COS, "l2": L2, "ip": MINUS_DOT, "l1": L1},
    # Qdrant's distances; Euclid is the plain (not squared) distance
    "qdrant": {"Cosine": COS, "Dot": DOT, "Euclid": L2, "Manhattan": L1},
    # sqlite-vec's vec0 ``distance`` (plain, not squared, l2), and llm collections, which
    # indexcheck searches itself with llm's cosine similarity
    "sqlitevec": {"l2": L2, "cosine": ONE_MINUS_COS, "l1": L1, "cosine_similarity": COS},
    # Pinecone's query score: the cosine, the dot product, and the SQUARED euclidean distance
    "pinecone": {"cosine": COS, "dotproduct": DOT, "euclidean": L2_SQUARED},
    # the Redis Query Engine's KNN score is a distance: ``1-cos``, ``1-dot`` and the squared
    # Euclidean distance (measured on Redis Stack 7.4.1 / RediSearch 2.10.5)
    "redis": {"COSINE": ONE_MINUS_COS, "IP": ONE_MINUS_DOT, "L2": L2_SQUARED},
    # Elasticsearch's knn ``_score`` per dense_vector ``similarity`` (float vectors; an
    # int8/int4/bbq index scores its quantised vectors, so near these, not exactly)
    "elasticsearch": {
        "cosine": HALF_ONE_PLUS_COS,
        "dot_product": HALF_ONE_PLUS_DOT,
        "l2_norm": INV_ONE_PLUS_L2_SQUARED,
        "max_inner_product": MAX_INNER_PRODUCT,
    },
    # OpenSearch's k-NN ``_score`` per space_type; cosinesimil is (1+cos)/2 on lucene and,
    # from 2.19, on every engine; nmslib and faiss reported 1/(2-cos) before
    "opensearch": {
        "l2": INV_ONE_PLUS_L2_SQUARED,
        "innerproduct": MAX_INNER_PRODUCT,
        "cosinesimil": HALF_ONE_PLUS_COS,
        OPENSEARCH_LEGACY_COSINE: INV_TWO_MINUS_COS,
    },
    # Weaviate's ``distance`` per vectorIndexConfig ``distance`` (lower is better), and the
    # ``certainty`` it computes for cosine only, ``(2-d)/2``
    "weaviate": {
        "cosine": ONE_MINUS_COS,
        "dot": MINUS_DOT,
        "l2-squared": L2_SQUARED,
        "manhattan": L1,
        "cosine certainty": HALF_ONE_PLUS_COS,
    },
    # turbopuffer's ``$dist``: ``cosine_distance`` is 1-cos (0..2), ``euclidean_squared`` the
    # squared distance; both lower is better (turbopuffer.com/docs/query)
    "turbopuffer": {"cosine_distance": ONE_MINUS_COS, "euclidean_squared": L2_SQUARED},
    # MongoDB Atlas's vectorSearchScore per index similarity ("About the similarity
    # functions"): (1+cos)/2, (1+dot)/2, and 1/(1+d) with d the plain Euclidean distance
    "mongodb": {
        "cosine": HALF_ONE_PLUS_COS,
        "dotProduct": HALF_ONE_PLUS_DOT,
        "euclidean": INV_ONE_PLUS_L2,
    },
}


def scores_of(engine: str) -> dict[str, Score]:
    """The metric names ``engine`` knows, in its own spelling, with their scores."""
    return ENGINE_SCORES[engine]


def score_of(engine: str, metric: str) -> Score | None:
    """What ``engine`` reports for ``metric`` (its own spelling), or None when unknown."""
    return ENGINE_SCORES[engine].get(metric)
