"""Portable filter -> Chroma's ``where`` dict.

Chroma spells the same operators except ``$exists``, which it lacks (a filter using it
is refused). Its ``where`` takes one key per object, so several conditions become an
explicit ``$and``, and ``$and``/``$or`` need at least two items (one item is unwrapped);
a ``$in`` list must hold one Python type, so ints and floats are split into two.
Chroma metadata is flat: a dotted path is refused. Chroma's own rules (the engine tests hold
them): ``$ne``/``$nin`` match rows that lack the field; 2020 equals 2020.0; true is not 1; and
a fractional bound against integer metadata is truncated (``year >= 2019.5`` matches
2019). Name such fields in ``integer_fields`` and their fractional bounds are rewritten
to the equal integer bound (``>= 2019.5`` -> ``>= 2020``).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

from indexcheck.filters._common import cannot
from indexcheck.filters.grammar import RANGE_OPS, And, Cond, Node, Op

# over integers: > 2019.5 is > 2019, >= 2019.5 is >= 2020, < 2019.5 is < 2020, <= 2019.5 is <= 2019
_INT_BOUND = {Op.GT: math.floor, Op.GTE: math.ceil, Op.LT: math.ceil, Op.LTE: math.floor}


def _integral(node: Cond) -> Cond:
    if node.op in RANGE_OPS and isinstance(node.value, float):
        return Cond(node.field, node.op, _INT_BOUND[node.op](node.value))
    values = node.value if isinstance(node.value, tuple) else (node.value,)
    if any(isinstance(v, float) for v in values):
        raise cannot("chroma", node, f"'{node.field}' holds integers and the value is fractional")
    return node


def _list(node: Cond) -> dict[str, Any]:
    # Chroma wants one Python type per list: ints and floats ([0, 0.5]) go in two lists
    assert isinstance(node.value, tuple)
    groups: dict[type, list[Any]] = {}
    for v in node.value:
        groups.setdefault(type(v), []).append(v)
    parts = [{node.field: {node.op.value: vals}} for vals in groups.values()]
    if len(parts) == 1:
        return parts[0]
    return {"$or" if node.op is Op.IN else "$and": parts}


def to_chroma(node: Node, *, integer_fields: Collection[str] = ()) -> dict[str, Any]:
    """The ``where`` argument of ``collection.query`` / ``collection.get``;
    ``integer_fields``: fields whose metadata values are integers."""
    if isinstance(node, Cond) and node.field in integer_fields:
        node = _integral(node)
    if isinstance(node, Cond):
        if node.op is Op.EXISTS:
            raise cannot("chroma", node, "Chroma's where has no $exists")
        if "." in node.field:
            raise cannot("chroma", node, "Chroma metadata is flat, so a dotted path has no meaning")
        if isinstance(node.value, tuple):
            return _list(node)
        return {node.field: {node.op.value: node.value}}
    items = [to_chroma(i, integer_fields=integer_fields) for i in node.items]
    if len(items) == 1:
        return items[0]
    return {"$and" if isinstance(node, And) else "$or": items}
