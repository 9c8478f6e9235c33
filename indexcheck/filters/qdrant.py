"""Portable filter -> ``qdrant_client.models.Filter``.

- strings and booleans: ``MatchValue`` / ``MatchAny``; numbers: ``Range`` (``gte = lte``
  for equality), because Qdrant keeps integer and float payloads apart and a
  ``MatchValue(2020)`` misses a stored ``2020.0`` that every other engine calls equal;
- ``$ne``/``$nin``: ``must_not`` of the match, which (as documented, and the engine
  tests hold it) keeps points that lack the key; ``MatchExcept`` would drop them;
- ``$exists``: ``IsEmpty`` (matches a missing key, null, or an empty list), negated
  with ``must_not`` for ``true``;
- dotted paths address nested payload as Qdrant does (``prefix="metadata."`` for
  LangChain's layout, which nests the metadata). A ``Range`` or ``MatchValue`` condition is
  fastest with a payload index on the key.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from indexcheck.filters._common import need
from indexcheck.filters.grammar import RANGE_OPS, And, Cond, Node, Op

_RANGE = {Op.GT: "gt", Op.GTE: "gte", Op.LT: "lt", Op.LTE: "lte"}


def _models() -> Any:
    return need("qdrant_client.models", "the Qdrant filter", "qdrant", "qdrant-client")


def _eq(m: Any, key: str, value: Any) -> Any:
    if isinstance(value, bool | str):
        return m.FieldCondition(key=key, match=m.MatchValue(value=value))
    return m.FieldCondition(key=key, range=m.Range(gte=value, lte=value))


def _in(m: Any, key: str, values: tuple[Any, ...]) -> Any:
    if all(isinstance(v, str) for v in values):
        return m.FieldCondition(key=key, match=m.MatchAny(any=list(values)))
    return m.Filter(should=[_eq(m, key, v) for v in values])


def _cond(m: Any, c: Cond) -> Any:
    if c.op is Op.EXISTS:
        empty = m.IsEmptyCondition(is_empty=m.PayloadField(key=c.field))
        return m.Filter(must_not=[empty]) if c.value else empty
    if c.op in RANGE_OPS:
        return m.FieldCondition(key=c.field, range=m.Range(**{_RANGE[c.op]: c.value}))
    if c.op in (Op.IN, Op.NIN):
        assert isinstance(c.value, tuple)
        hit = _in(m, c.field, c.value)
    else:
        hit = _eq(m, c.field, c.value)
    return hit if c.op in (Op.EQ, Op.IN) else m.Filter(must_not=[hit])


def _node(m: Any, n: Node, prefix: str) -> Any:
    if isinstance(n, Cond):
        return _cond(m, replace(n, field=prefix + n.field) if prefix else n)
    items = [_node(m, i, prefix) for i in n.items]
    return m.Filter(must=items) if isinstance(n, And) else m.Filter(should=items)


def to_qdrant(node: Node, prefix: str = "") -> Any:
    """The ``query_filter`` / ``scroll_filter`` for ``QdrantClient``: a ``models.Filter``;
    portable field ``x`` is payload key ``prefix + x``."""
    m = _models()
    out = _node(m, node, prefix)
    return out if isinstance(out, m.Filter) else m.Filter(must=[out])
