"""Portable filter -> LlamaIndex ``MetadataFilters``.

Operators map one to one (``$exists false`` is ``IS_EMPTY``; ``$exists true`` is
``IS_EMPTY`` under ``FilterCondition.NOT``). A flat ``$and``/``$or`` of comparisons
becomes one ``MetadataFilters``; deeper nesting becomes nested ``MetadataFilters``,
which vector stores such as Qdrant and PGVectorStore accept and ``SimpleVectorStore``
refuses. SimpleVectorStore reads flat keys with Python semantics: ``$ne``/``$nin`` match
a row without the key, ``true == 1``, ``IS_EMPTY`` also matches ``""`` and ``[]``, and a
range on a field that holds a string raises ``TypeError``. ``MetadataFilter`` takes
no boolean value (its ``value`` is strict int, float, str or a list of those), so a
filter comparing with true/false is refused.
"""

from __future__ import annotations

from typing import Any

from indexcheck.filters._common import cannot, need
from indexcheck.filters.grammar import And, Cond, Node, Op

_OPS = {
    Op.EQ: "EQ",
    Op.NE: "NE",
    Op.GT: "GT",
    Op.GTE: "GTE",
    Op.LT: "LT",
    Op.LTE: "LTE",
    Op.IN: "IN",
    Op.NIN: "NIN",
}


def _types() -> Any:
    return need(
        "llama_index.core.vector_stores.types", "the LlamaIndex filter", None, "llama-index-core"
    )


def _node(t: Any, n: Node) -> Any:
    if isinstance(n, Cond):
        if n.op is Op.EXISTS:
            empty = t.MetadataFilter(key=n.field, value=None, operator=t.FilterOperator.IS_EMPTY)
            if n.value:
                return t.MetadataFilters(filters=[empty], condition=t.FilterCondition.NOT)
            return empty
        value = list(n.value) if isinstance(n.value, tuple) else n.value
        if any(isinstance(v, bool) for v in (value if isinstance(value, list) else [value])):
            raise cannot("llamaindex", n, "MetadataFilter takes no boolean value")
        return t.MetadataFilter(key=n.field, value=value, operator=t.FilterOperator[_OPS[n.op]])
    cond = t.FilterCondition.AND if isinstance(n, And) else t.FilterCondition.OR
    return t.MetadataFilters(filters=[_node(t, i) for i in n.items], condition=cond)


def to_llamaindex(node: Node) -> Any:
    """The ``filters=`` for a LlamaIndex retriever or ``VectorStoreQuery``."""
    t = _types()
    out = _node(t, node)
    if isinstance(out, t.MetadataFilters):
        return out
    return t.MetadataFilters(filters=[out], condition=t.FilterCondition.AND)
