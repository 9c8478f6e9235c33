"""Portable filter -> the Redis Query Engine's query syntax (the part before ``=>[KNN ...]``).

Redis filters only on indexed fields, each by its type (docs: "Query syntax" and "Tag
fields" of the Redis Query Engine, RediSearch 2.10):

- ``TAG``: ``@f:{a | b}`` is an exact match of one of the values (case folded unless the
  field is ``CASESENSITIVE``; a stored value is split at the field's separator, ``,`` by
  default); every character but letters, digits and ``_`` is escaped with ``\\``;
- ``NUMERIC``: ``@f:[lo hi]``, ``(`` for an open bound, ``-inf``/``+inf``;
- ``TEXT``: words, stemmed: no exact value, so refused;
- negation ``-(...)`` keeps documents without the field (``$ne``/``$nin`` include a missing
  field: ``ENGINE_MISSING["redis"]`` is ``include``); ``$exists`` is
  ``ismissing(@f)`` on a field indexed with ``INDEXMISSING``, and ``@f:[-inf +inf]`` on a
  NUMERIC field; otherwise refused.

Strings compare only with TAG fields and numbers only with NUMERIC ones (a number in a TAG
field is text to Redis, so ``2020`` would match the text ``"2020"``); booleans are refused:
Redis stores none. A filter that names a field the index does not hold is refused naming
the fields it does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from indexcheck.errors import FilterError
from indexcheck.filters._common import cannot, number_literal
from indexcheck.filters.grammar import LIST_OPS, RANGE_OPS, And, Cond, Node, Op, kind

STORE = "redis"
_PLAIN = re.compile(r"[A-Za-z0-9_]")

#: attribute name -> (type, flags)
Fields = Mapping[str, tuple[str, frozenset[str]]]


def escape(text: str) -> str:
    """``text`` with every character but letters, digits and ``_`` backslash-escaped."""
    return "".join(ch if _PLAIN.match(ch) else "\\" + ch for ch in text)


def _field(c: Cond, fields: Fields) -> tuple[str, str, frozenset[str]]:
    if c.field not in fields:
        known = ", ".join(f"{n} ({t})" for n, (t, _) in sorted(fields.items()) if t != "VECTOR")
        raise FilterError(
            f"the {STORE} store cannot filter on '{c.field}': the index does not hold that "
            f"field, and Redis filters only on indexed fields (it holds: {known or 'none'}); "
            "add it to the index schema (FT.ALTER) or filter on another"
        )
    typ, flags = fields[c.field]
    return f"@{escape(c.field)}", typ, flags


def _values(c: Cond) -> tuple[object, ...]:
    return c.value if isinstance(c.value, tuple) else (c.value,)


def _tag(c: Cond, at: str) -> str:
    parts = []
    for v in _values(c):
        if kind(v) != "string":
            raise cannot(STORE, c, f"'{c.field}' is a TAG field, which holds text; compare it "
                         "with strings")  # fmt: skip
        assert isinstance(v, str)
        if not v:
            raise cannot(STORE, c, "an empty tag cannot be queried")
        parts.append(escape(v))
    return f"{at}:{{{' | '.join(parts)}}}"


def _numeric(c: Cond, at: str) -> str:
    def one(v: object) -> str:
        if kind(v) != "number":
            raise cannot(STORE, c, f"'{c.field}' is a NUMERIC field; compare it with numbers")
        assert isinstance(v, int | float)
        lit = number_literal(v)
        return f"{at}:[{lit} {lit}]"

    if c.op in RANGE_OPS:
        assert isinstance(c.value, int | float) and not isinstance(c.value, bool)
        lit = number_literal(c.value)
        return {
            Op.GT: f"{at}:[({lit} +inf]",
            Op.GTE: f"{at}:[{lit} +inf]",
            Op.LT: f"{at}:[-inf ({lit}]",
            Op.LTE: f"{at}:[-inf {lit}]",
        }[c.op]
    parts = [one(v) for v in _values(c)]
    return parts[0] if len(parts) == 1 else "(" + " | ".join(parts) + ")"


def _cond(c: Cond, fields: Fields) -> str:
    at, typ, flags = _field(c, fields)
    if c.op is Op.EXISTS:
        if "INDEXMISSING" in flags:
            return f"-ismissing({at})" if c.value else f"ismissing({at})"
        if typ == "NUMERIC":
            return f"{at}:[-inf +inf]" if c.value else f"-{at}:[-inf +inf]"
        raise cannot(STORE, c, f"the {typ} field '{c.field}' is not indexed with "
                     "INDEXMISSING, so Redis cannot tell a missing value")  # fmt: skip
    if any(kind(v) == "bool" for v in _values(c)):
        raise cannot(STORE, c, "Redis stores no booleans (a hash field is text); store the "
                     "flag as a TAG such as \"true\" and filter on that")  # fmt: skip
    if typ == "TAG":
        if c.op in RANGE_OPS:
            raise cannot(STORE, c, f"'{c.field}' is a TAG field, which has no order; index "
                         "it as NUMERIC")  # fmt: skip
        hit = _tag(c, at)
    elif typ == "NUMERIC":
        hit = _numeric(c, at)
    else:
        raise cannot(STORE, c, f"'{c.field}' is a {typ} field, which Redis matches by words, "
                     "not by value; index it as TAG (text) or NUMERIC")  # fmt: skip
    if c.op in (Op.NE, Op.NIN):
        return f"-{hit}" if hit.startswith("(") else f"-({hit})"
    return hit


def to_redis(node: Node, *, fields: Fields) -> str:
    """The query text selecting what ``node`` matches, over the index's ``fields``."""
    if isinstance(node, Cond):
        if node.op in LIST_OPS and not isinstance(node.value, tuple):
            raise FilterError(f"filter: '{node.op.value}' on '{node.field}' needs a list")
        return _cond(node, fields)
    parts = [f"({to_redis(i, fields=fields)})" for i in node.items]
    return " ".join(parts) if isinstance(node, And) else " | ".join(parts)
