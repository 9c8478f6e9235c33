"""Portable filter -> Chroma's ``where`` dict.

Chroma spells the same operators except ``$exists``, which it lacks (a filter using it
is refused). Its ``where`` takes one key per object, so several conditions become an
explicit ``$and``, and ``$and``/``$or`` need at least two items (one item is unwrapped).
Chroma metadata is flat: a dotted path is refused. Measured on chromadb 1.5:
``$ne``/``$nin`` match rows that lack the field; 2020 equals 2020.0; true is not 1.
"""

from __future__ import annotations

from typing import Any

from indexcheck.filters._common import cannot
from indexcheck.filters.grammar import And, Cond, Node, Op


def to_chroma(node: Node) -> dict[str, Any]:
    """The ``where`` argument of ``collection.query`` / ``collection.get``."""
    if isinstance(node, Cond):
        if node.op is Op.EXISTS:
            raise cannot("chroma", node, "Chroma's where has no $exists")
        if "." in node.field:
            raise cannot("chroma", node, "Chroma metadata is flat, so a dotted path has no meaning")
        value = list(node.value) if isinstance(node.value, tuple) else node.value
        return {node.field: {node.op.value: value}}
    items = [to_chroma(i) for i in node.items]
    if len(items) == 1:
        return items[0]
    return {"$and" if isinstance(node, And) else "$or": items}
