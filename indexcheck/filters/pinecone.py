"""Portable filter -> Pinecone's metadata filter (a MongoDB-style dict).

Pinecone documents ``$eq $ne`` (string, number, boolean), ``$gt $gte $lt $lte`` (number),
``$in $nin`` (strings or numbers), ``$exists`` and ``$and``/``$or``
(docs.pinecone.io/guides/search/filter-by-metadata). Its metadata is flat, so a dotted path
is refused, and so is ``$in``/``$nin`` over booleans (Pinecone takes strings and numbers
only). A row lacking the field matches no comparison, ``$ne``/``$nin`` included
(:data:`~indexcheck.filters.evaluate.ENGINE_MISSING`).
"""

from __future__ import annotations

from typing import Any

from indexcheck.filters._common import cannot
from indexcheck.filters.grammar import LIST_OPS, And, Cond, Node


def _cond(c: Cond) -> dict[str, Any]:
    if "." in c.field:
        raise cannot("pinecone", c, "Pinecone metadata is flat, so a dotted path has no meaning")
    if c.op in LIST_OPS:
        assert isinstance(c.value, tuple)
        if any(isinstance(v, bool) for v in c.value):
            raise cannot("pinecone", c, "Pinecone's $in and $nin take strings and numbers only")
        return {c.field: {c.op.value: list(c.value)}}
    return {c.field: {c.op.value: c.value}}


def to_pinecone(node: Node) -> dict[str, Any]:
    """The ``filter`` argument of ``Index.query``."""
    if isinstance(node, Cond):
        return _cond(node)
    items = [to_pinecone(i) for i in node.items]
    if len(items) == 1:
        return items[0]
    return {"$and" if isinstance(node, And) else "$or": items}
