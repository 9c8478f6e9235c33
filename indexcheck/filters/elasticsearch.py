"""Portable filter -> Elasticsearch / OpenSearch query DSL (a ``bool`` of ``filter`` clauses).

Both engines share the DSL, so this one translator serves both (``filters/opensearch.py``
names it for OpenSearch). Fields are read from the index mapping (``types``: dotted path
-> mapped type, with ``path.keyword`` for a text field's keyword sub-field):

- strings: ``term``/``terms`` on the field when it is a ``keyword``, or on ``path.keyword``
  when it is ``text`` (a ``term`` on the text field itself matches lower-case tokens, not
  the value); a text field with no keyword sub-field, or a string longer than its
  ``ignore_above`` (256 under dynamic mapping: such strings are not in ``.keyword`` at all),
  cannot be matched exactly and is refused naming the operator;
- numbers and booleans: ``term``/``terms``/``range`` on the field itself; a range on a
  field mapped as anything but a number is refused;
- ``$ne``/``$nin``: ``must_not`` of the match, which keeps documents lacking the field
  (``Missing.INCLUDE``); ``$exists``: ``exists`` (or its ``must_not``);
- ``$and``: ``bool.filter``; ``$or``: ``bool.should`` with ``minimum_should_match: 1``.

A field the mapping does not hold (no document ever had it) matches nothing, as the
engine does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from indexcheck.filters._common import cannot
from indexcheck.filters.grammar import RANGE_OPS, And, Cond, Node, Op, Or

_RANGE = {Op.GT: "gt", Op.GTE: "gte", Op.LT: "lt", Op.LTE: "lte"}
NUMBERS = frozenset(
    {"long", "integer", "short", "byte", "double", "float", "half_float", "scaled_float",
     "unsigned_long"}
)  # fmt: skip
NOTHING: dict[str, Any] = {"bool": {"must_not": [{"match_all": {}}]}}


class _Fields:
    def __init__(
        self, store: str, types: Mapping[str, str], prefix: str, ignore_above: Mapping[str, int]
    ) -> None:
        self.store, self.types, self.prefix, self.ignore_above = (
            store, types, prefix, ignore_above
        )  # fmt: skip

    def path(self, c: Cond, value: Any) -> str | None:
        """The field to compare ``value`` on exactly, None when no document can match."""
        path = self.prefix + c.field
        typ = self.types.get(path)
        if typ is None:
            return None
        if isinstance(value, str):
            if typ == "keyword":
                key = path
            elif typ == "text" and self.types.get(path + ".keyword") == "keyword":
                key = path + ".keyword"
            elif typ == "text":
                raise cannot(
                    self.store, c, f"'{path}' is a text field with no keyword sub-field, and "
                    "a term on analysed text matches lower-case tokens, not the value; map it "
                    "as keyword (or add a .keyword sub-field) to filter on it exactly",
                )  # fmt: skip
            else:
                return None  # a string against a number or boolean field: never equal
            limit = self.ignore_above.get(key)
            if limit is not None and len(value) > limit:
                raise cannot(
                    self.store, c, f"the value is {len(value)} characters long and '{key}' "
                    f"keeps only strings up to ignore_above={limit}; longer ones are not "
                    "indexed there, so no exact match is possible",
                )  # fmt: skip
            return key
        if isinstance(value, bool):
            return path if typ == "boolean" else None
        return path if typ in NUMBERS else None


def _match(f: _Fields, c: Cond, values: tuple[Any, ...]) -> dict[str, Any]:
    by_path: dict[str, list[Any]] = {}
    for v in values:
        key = f.path(c, v)
        if key is not None:
            by_path.setdefault(key, []).append(v)
    clauses: list[dict[str, Any]] = [
        {"term": {k: vs[0]}} if len(vs) == 1 else {"terms": {k: vs}} for k, vs in by_path.items()
    ]
    if not clauses:
        return NOTHING
    return clauses[0] if len(clauses) == 1 else {"bool": {"should": clauses,
                                                          "minimum_should_match": 1}}  # fmt: skip


def _cond(f: _Fields, c: Cond) -> dict[str, Any]:
    path = f.prefix + c.field
    if c.op is Op.EXISTS:
        has = {"exists": {"field": path}}
        return has if c.value else {"bool": {"must_not": [has]}}
    if c.op in RANGE_OPS:
        typ = f.types.get(path)
        if typ is None:
            return NOTHING
        if typ not in NUMBERS:
            raise cannot(f.store, c, f"'{path}' is mapped as {typ}, not a number")
        return {"range": {path: {_RANGE[c.op]: c.value}}}
    values = c.value if isinstance(c.value, tuple) else (c.value,)
    hit = _match(f, c, values)
    if c.op in (Op.EQ, Op.IN):
        return hit
    return {"bool": {"must_not": [hit]}}


def _node(f: _Fields, n: Node) -> dict[str, Any]:
    if isinstance(n, Cond):
        return _cond(f, n)
    items = [_node(f, i) for i in n.items]
    if isinstance(n, And):
        return {"bool": {"filter": items}}
    assert isinstance(n, Or)
    return {"bool": {"should": items, "minimum_should_match": 1}}


def to_elasticsearch(
    node: Node,
    types: Mapping[str, str],
    prefix: str = "metadata.",
    ignore_above: Mapping[str, int] | None = None,
    store: str = "elasticsearch",
) -> dict[str, Any]:
    """The query DSL clause for ``node``: ``types`` maps mapped paths (``metadata.year``,
    ``metadata.topic.keyword``) to their type, ``ignore_above`` keyword paths to theirs;
    portable field ``x`` is ``prefix + x``."""
    return _node(_Fields(store, types, prefix, ignore_above or {}), node)
