"""Portable filter -> the Weaviate v4 client's ``Filter`` (gRPC ``Filters``), typed by the schema.

Weaviate documents (docs.weaviate.io/weaviate/search/filters, config-refs/schema):
``Equal NotEqual GreaterThan(Equal) LessThan(Equal) ContainsAny IsNull`` and ``And``/``Or``.
What the translation must respect, each a refusal (exit 2) naming the operator when it cannot:

- a filter value must match the property's data type: ``valueNumber`` on ``number`` (what
  auto-schema makes of every JSON number), ``valueInt`` on ``int``; the client picks by the
  Python type, so numbers are cast to the property's type (a fraction on an ``int`` property,
  or a string on a number, has no Weaviate spelling);
- Equal on text matches by the property's tokenization (``word``, the default, matches any
  object holding the tokens, case-folded), so only ``field`` tokenization is exact equality;
- ``$exists`` is ``IsNull``, which needs ``indexNullState`` in the collection's
  invertedIndexConfig; a property the schema lacks, or a dotted path, has no meaning.
- NotEqual keeps objects that lack the property (the inverted index takes the complement of
  Equal), so ``$ne``/``$nin`` are ``Missing.INCLUDE``; ``$nin`` is an And of NotEqual.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from indexcheck.filters._common import cannot, need
from indexcheck.filters.grammar import RANGE_OPS, And, Cond, Node, Op

_RANGE = {
    Op.GT: "greater_than",
    Op.GTE: "greater_or_equal",
    Op.LT: "less_than",
    Op.LTE: "less_or_equal",
}
_TEXT = ("text", "text[]", "string", "string[]")


def _cast(c: Cond, dtype: str, value: Any) -> Any:
    base = dtype.removesuffix("[]")
    if base in ("number", "int"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise cannot(
                "weaviate", c, f"'{c.field}' is a {dtype} property; compare it with a number"
            )
        if base == "int":
            if float(value) != int(value):
                raise cannot(
                    "weaviate",
                    c,
                    f"'{c.field}' is an int property and Weaviate "
                    "takes no fraction for it (valueInt)",
                )
            return int(value)
        return float(value)
    if base == "boolean":
        if not isinstance(value, bool):
            raise cannot(
                "weaviate", c, f"'{c.field}' is a boolean property; compare it with true or false"
            )
        return value
    if base in _TEXT:
        if not isinstance(value, str):
            raise cannot("weaviate", c, f"'{c.field}' is a text property; compare it with a string")
        return value
    raise cannot(
        "weaviate",
        c,
        f"'{c.field}' is a {dtype} property, which the portable filter does not compare",
    )


def _cond(f: Any, c: Cond, props: Mapping[str, tuple[str, str | None]], null_state: bool) -> Any:
    if "." in c.field:
        raise cannot("weaviate", c, "Weaviate filters top-level properties only")
    if c.field not in props:
        known = ", ".join(sorted(props)) or "none"
        raise cannot("weaviate", c, f"the collection has no property '{c.field}' (it has: {known})")
    dtype, tokenization = props[c.field]
    prop = f.by_property(c.field)
    if c.op is Op.EXISTS:
        if not null_state:
            raise cannot(
                "weaviate",
                c,
                "IsNull needs indexNullState: true in the collection's invertedIndexConfig",
            )
        return prop.is_none(not c.value)
    if c.op in RANGE_OPS:
        return getattr(prop, _RANGE[c.op])(_cast(c, dtype, c.value))
    if dtype in _TEXT and tokenization not in (None, "field"):
        raise cannot(
            "weaviate",
            c,
            f"'{c.field}' is text tokenized '{tokenization}', which "
            "Equal matches by token, not whole value; only field "
            "tokenization compares exactly",
        )
    if c.op in (Op.IN, Op.NIN):
        assert isinstance(c.value, tuple)
        values = [_cast(c, dtype, v) for v in c.value]
        if c.op is Op.IN:
            return prop.contains_any(values)
        parts = [f.by_property(c.field).not_equal(v) for v in values]
        return parts[0] if len(parts) == 1 else f.all_of(parts)
    value = _cast(c, dtype, c.value)
    return prop.equal(value) if c.op is Op.EQ else prop.not_equal(value)


def _node(f: Any, n: Node, props: Mapping[str, tuple[str, str | None]], null_state: bool) -> Any:
    if isinstance(n, Cond):
        return _cond(f, n, props, null_state)
    items = [_node(f, i, props, null_state) for i in n.items]
    if len(items) == 1:
        return items[0]
    return f.all_of(items) if isinstance(n, And) else f.any_of(items)


def to_weaviate(
    node: Node,
    properties: Mapping[str, tuple[str, str | None]] | None = None,
    null_state: bool = False,
) -> Any:
    """The ``filters`` argument of the v4 client's queries. ``properties``: name ->
    (data type, tokenization) from the collection's schema; ``null_state``: whether the
    collection indexes null state (``$exists`` needs it)."""
    query = need("weaviate.classes.query", "the Weaviate filter", "weaviate", "weaviate-client")
    return _node(query.Filter, node, properties or {}, null_state)
