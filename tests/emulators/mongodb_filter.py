"""The MQL query predicates the MongoDB emulator evaluates (test code, not product).

Written from the MongoDB manual's "Query Predicates" pages (comparison ``$eq $ne $gt $gte
$lt $lte $in $nin``, element ``$exists``, logical ``$and $or $nor $not``), independently of
indexcheck's own filter evaluation, so the store tests compare two implementations:

- ``{field: value}`` is ``$eq``; a dotted path walks embedded documents; an array value
  matches when one element (or the whole array) does;
- ``$eq``: numbers by value (``2020 == 2020.0``; a boolean is never a number), otherwise
  the same BSON type and equal; ``null`` matches a missing field too;
- ``$gt $gte $lt $lte``: type bracketing, so only values of the query value's type (numbers
  with numbers, strings with strings) can match; a missing field never does;
- ``$ne``/``$nin`` are the negations of ``$eq``/``$in``, so they match documents that lack
  the field;
- ``$exists``: the field is there (a ``null`` value counts as there).
"""

from __future__ import annotations

import datetime
import operator
from collections.abc import Callable
from typing import Any

from bson import ObjectId

MISSING = object()
_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le,
}  # fmt: skip
FIELD_OPS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists",
                       "$not"})  # fmt: skip
LOGICAL_OPS = frozenset({"$and", "$or", "$nor"})


class QueryError(Exception):
    """A predicate the server refuses (``code``, ``codeName`` and ``errmsg`` of the reply)."""

    def __init__(self, errmsg: str, code: int = 2, code_name: str = "BadValue") -> None:
        super().__init__(errmsg)
        self.errmsg, self.code, self.code_name = errmsg, code, code_name


def lookup(doc: Any, path: str) -> Any:
    """The value at a dotted ``path``, or ``MISSING``."""
    node = doc
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return MISSING
    return node


def _bracket(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, ObjectId):
        return "objectId"
    if isinstance(v, datetime.datetime):
        return "date"
    if v is None:
        return "null"
    return type(v).__name__


def _equal(have: Any, want: Any) -> bool:
    if want is None:
        return have is MISSING or have is None
    if have is MISSING:
        return False
    if _bracket(have) != _bracket(want):
        return False
    return bool(have == want)


def _values(have: Any) -> list[Any]:
    """The candidates an array field offers: each element, then the array itself."""
    return [*have, have] if isinstance(have, list) else [have]


def _eq(have: Any, want: Any) -> bool:
    return any(_equal(h, want) for h in _values(have))


def _op(have: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return _eq(have, arg)
    if op == "$ne":
        return not _eq(have, arg)
    if op in _ORDER:
        if have is MISSING:
            return False
        return any(
            _bracket(h) == _bracket(arg) and h is not None and _ORDER[op](h, arg)
            for h in _values(have)
        )
    if op in ("$in", "$nin"):
        if not isinstance(arg, list):
            raise QueryError(f"{op} needs an array")
        hit = any(_eq(have, a) for a in arg)
        return hit if op == "$in" else not hit
    if op == "$exists":
        return (have is not MISSING) == bool(arg)
    if op == "$not":
        if not isinstance(arg, dict):
            raise QueryError("$not needs a regex or a document")
        return not _field(have, arg)
    raise QueryError(f"unknown operator: {op}")


def _field(have: Any, cond: Any) -> bool:
    if isinstance(cond, dict) and cond and all(str(k).startswith("$") for k in cond):
        return all(_op(have, op, arg) for op, arg in cond.items())
    return _eq(have, cond)


def matches(doc: dict[str, Any], query: dict[str, Any]) -> bool:
    """True when ``doc`` satisfies the MQL ``query``."""
    for key, cond in query.items():
        if key in LOGICAL_OPS:
            if not isinstance(cond, list) or not cond:
                raise QueryError(f"{key} argument must be a non-empty array")
            hits = [matches(doc, c) for c in cond]
            ok = all(hits) if key == "$and" else any(hits)
            if (not ok) if key != "$nor" else any(hits):
                return False
        elif key.startswith("$"):
            raise QueryError(f"unknown top level operator: {key}")
        elif not _field(lookup(doc, key), cond):
            return False
    return True


def paths_and_ops(query: Any) -> list[tuple[str, str]]:
    """Every (path, operator) a predicate uses, for the ``$vectorSearch`` checks."""
    out: list[tuple[str, str]] = []
    if not isinstance(query, dict):
        return out
    for key, cond in query.items():
        if key in LOGICAL_OPS:
            for c in cond if isinstance(cond, list) else []:
                out.extend(paths_and_ops(c))
        elif key.startswith("$"):
            out.append(("", key))
        elif isinstance(cond, dict) and cond and all(str(k).startswith("$") for k in cond):
            for op, arg in cond.items():
                out.append((key, op))
                if op == "$not" and isinstance(arg, dict):
                    out.extend((key, o) for o in arg)
        else:
            out.append((key, "$eq"))
    return out
