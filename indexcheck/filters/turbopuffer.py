"""Portable filter -> turbopuffer's ``filters`` (nested arrays).

turbopuffer documents (turbopuffer.com/docs/query, "Filtering Parameters") ``Eq NotEq In
NotIn Lt Lte Gt Gte`` on attributes, ``And``/``Or``/``Not``, and ``Eq null`` / ``NotEq null``
for a missing / present attribute (so ``$exists`` is expressible). ``NotEq`` and ``NotIn``
are documented as the inverses of ``Eq`` and ``In``: a row lacking the attribute matches them
(:data:`~indexcheck.filters.evaluate.ENGINE_MISSING`). Attributes are flat (a dotted path is
refused), ``id`` and ``vector`` are turbopuffer's own columns (refused as metadata fields),
and "values must have the same type as the attribute's value": given the namespace schema
(``types``), a comparison whose value has another type than the attribute's is refused by
operator rather than sent for turbopuffer to reject.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from indexcheck.filters._common import cannot
from indexcheck.filters.grammar import And, Cond, Node, Op, kind

STORE = "turbopuffer"
_OPS = {
    Op.EQ: "Eq", Op.NE: "NotEq", Op.GT: "Gt", Op.GTE: "Gte", Op.LT: "Lt", Op.LTE: "Lte",
    Op.IN: "In", Op.NIN: "NotIn",
}  # fmt: skip
_RESERVED = frozenset({"id", "vector"})
#: turbopuffer attribute type -> the portable value kind it holds
_TYPE_KIND = {"string": "string", "uuid": "string", "int": "number", "uint": "number",
              "float": "number", "bool": "bool"}  # fmt: skip


def _check_kind(c: Cond, types: Mapping[str, str] | None) -> None:
    if types is None:
        return
    want = _TYPE_KIND.get(types.get(c.field, ""), None)
    values = c.value if isinstance(c.value, tuple) else (c.value,)
    if want is not None and any(kind(v) != want for v in values):
        raise cannot(
            STORE, c, f"the attribute is of type {types[c.field]}, and turbopuffer compares "
            "values of the attribute's own type only",
        )  # fmt: skip


def _cond(c: Cond, types: Mapping[str, str] | None) -> list[Any]:
    if "." in c.field:
        raise cannot(STORE, c, "turbopuffer attributes are flat, so a dotted path has no meaning")
    if c.field in _RESERVED:
        raise cannot(STORE, c, f"'{c.field}' is turbopuffer's own column, not an attribute")
    if c.op is Op.EXISTS:
        return [c.field, "NotEq" if c.value else "Eq", None]
    _check_kind(c, types)
    if isinstance(c.value, tuple):
        return [c.field, _OPS[c.op], list(c.value)]
    return [c.field, _OPS[c.op], c.value]


def to_turbopuffer(node: Node, types: Mapping[str, str] | None = None) -> list[Any]:
    """The ``filters`` argument of ``namespace.query``; ``types`` maps attribute names to
    the namespace schema's types (``string``, ``int``, ...) when known."""
    if isinstance(node, Cond):
        return _cond(node, types)
    items = [to_turbopuffer(i, types) for i in node.items]
    if len(items) == 1:
        return items[0]
    return ["And" if isinstance(node, And) else "Or", items]
