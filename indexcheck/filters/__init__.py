"""One portable metadata filter language, evaluated exactly and translated per engine.

::

    node = parse_filter('{"profile": "ckd", "year": {"$gte": 2020}}')
    check_fields(node, metadata_fields(rows))        # unknown field -> FilterError
    mask = evaluate(node, rows, missing=ENGINE_MISSING["qdrant"])   # exact truth, (n,) bool
    native = translate(node, "qdrant")               # models.Filter

Wired into the stores (``store.query(vectors, k, filter)``), compare-ann, sweep-threshold,
probe-scale and ci; see the README section "Filtered search".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from indexcheck.errors import FilterError
from indexcheck.filters.evaluate import (
    ENGINE_MISSING,
    MetadataColumns,
    Missing,
    evaluate,
    metadata_fields,
)
from indexcheck.filters.grammar import (
    And,
    Cond,
    Node,
    Op,
    Or,
    canonical,
    check_fields,
    fields_of,
    parse_filter,
    to_obj,
)


def _translators() -> dict[str, Callable[..., Any]]:
    from indexcheck.filters.chroma import to_chroma
    from indexcheck.filters.elasticsearch import to_elasticsearch
    from indexcheck.filters.lancedb import to_lancedb
    from indexcheck.filters.llamaindex import to_llamaindex
    from indexcheck.filters.milvus import to_milvus
    from indexcheck.filters.mongodb import to_mongodb
    from indexcheck.filters.opensearch import to_opensearch
    from indexcheck.filters.pgvector import to_pgvector
    from indexcheck.filters.pinecone import to_pinecone
    from indexcheck.filters.qdrant import to_qdrant
    from indexcheck.filters.redis import to_redis
    from indexcheck.filters.sqlitevec import to_sqlitevec
    from indexcheck.filters.turbopuffer import to_turbopuffer
    from indexcheck.filters.upstash import to_upstash
    from indexcheck.filters.weaviate import to_weaviate

    return {
        "upstash": to_upstash,
        "pgvector": to_pgvector,
        "chroma": to_chroma,
        "qdrant": to_qdrant,
        "milvus": to_milvus,
        "lancedb": to_lancedb,
        "llamaindex": to_llamaindex,
        "sqlitevec": to_sqlitevec,
        "pinecone": to_pinecone,
        "redis": to_redis,
        "elasticsearch": to_elasticsearch,
        "opensearch": to_opensearch,
        "weaviate": to_weaviate,
        "turbopuffer": to_turbopuffer,
        "mongodb": to_mongodb,
    }


def translate(node: Node, engine: str, **options: Any) -> Any:
    """The engine's native filter for ``node``; ``options`` go to that engine's translator
    (e.g. ``metadata_column=`` for pgvector, ``json_field=`` for milvus)."""
    table = _translators()
    if engine not in table:
        local = (
            " (it filters through evaluate(): an id selector)" if engine in ENGINE_MISSING else ""
        )
        raise FilterError(
            f"no filter translation for store '{engine}'{local}; "
            f"stores with one: {', '.join(sorted(table))}"
        )
    return table[engine](node, **options)


__all__ = [
    "ENGINE_MISSING",
    "And",
    "Cond",
    "FilterError",
    "MetadataColumns",
    "Missing",
    "Node",
    "Op",
    "Or",
    "canonical",
    "check_fields",
    "evaluate",
    "fields_of",
    "metadata_fields",
    "parse_filter",
    "to_obj",
    "translate",
]
