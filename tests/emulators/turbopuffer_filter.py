"""turbopuffer's filter language, for the emulator: validate and evaluate.

What turbopuffer.com/docs/query ("Filtering Parameters") documents: a condition is
``[attr, op, value]``; ``["And", [...]]``, ``["Or", [...]]`` and ``["Not", filter]`` combine
them. ``Eq`` is an exact match, and ``Eq null`` matches documents missing the attribute;
``NotEq`` is the inverse of ``Eq`` (``NotEq null``: documents that have it); ``In``/``NotIn``
(inverse of ``In``); ``Lt Lte Gt Gte`` numeric on numbers and lexicographic on strings;
``Glob``/``NotGlob``/``IGlob``/``NotIGlob`` (globset syntax, ``*``/``**``/``?``/``[...]``) on
strings. "Values must have the same type as the attribute's value": a value of another type
than the schema's is a :class:`FilterError` (turbopuffer answers 400). A row lacking the
attribute is null: it matches no comparison, and every inverse (``NotEq``, ``NotIn``,
``NotGlob``, ``Not``) matches it, since the docs define those as inverses.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Any

_ORDER = {"Lt": "__lt__", "Lte": "__le__", "Gt": "__gt__", "Gte": "__ge__"}
_INVERSE = {"NotEq": "Eq", "NotIn": "In", "NotGlob": "Glob", "NotIGlob": "IGlob"}
_OPS = {"Eq", "In", "Glob", "IGlob", *_ORDER, *_INVERSE}


class FilterError(ValueError):
    """The filter is not in turbopuffer's documented language (or mistyped for the schema)."""


def kind_of(value: Any) -> str:
    """The schema type family of a value: bool, number, string, other."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "string" if isinstance(value, str) else "other"


def schema_kind(schema_type: str) -> str:
    """The value family of a turbopuffer attribute type (``int``, ``float``, ``string``...)."""
    if schema_type in ("int", "uint", "float"):
        return "number"
    if schema_type in ("string", "uuid", "datetime"):
        return "string"
    return schema_type


def _typed(attr: str, value: Any, types: Mapping[str, str]) -> None:
    want = types.get(attr)
    if want is None or value is None:
        return
    if kind_of(value) != schema_kind(want):
        raise FilterError(f"filter value {value!r} does not match the type {want} of '{attr}'")


def _glob(pattern: str, value: Any, fold: bool) -> bool:
    if not isinstance(value, str):
        return False
    pat = pattern.replace("**", "*")
    return (
        fnmatch.fnmatchcase(value.lower(), pat.lower()) if fold else fnmatch.fnmatchcase(value, pat)
    )


def _equal(stored: Any, value: Any) -> bool:
    if kind_of(stored) != kind_of(value):
        return False
    return bool(stored == value)


def _cond(row: Mapping[str, Any], attr: str, op: str, value: Any, types: Mapping[str, str]) -> bool:
    if op in _INVERSE:
        return not _cond(row, attr, _INVERSE[op], value, types)
    stored = row.get(attr)
    if op == "Eq":
        _typed(attr, value, types)
        return stored is None if value is None else stored is not None and _equal(stored, value)
    if op == "In":
        if not isinstance(value, list):
            raise FilterError("In takes an array of values")
        for v in value:
            _typed(attr, v, types)
        return stored is not None and any(_equal(stored, v) for v in value)
    if op in ("Glob", "IGlob"):
        if not isinstance(value, str):
            raise FilterError(f"{op} takes a glob pattern string")
        return _glob(value, stored, op == "IGlob")
    _typed(attr, value, types)
    if kind_of(value) not in ("number", "string"):
        raise FilterError(f"{op} takes a number or a string")
    if stored is None or kind_of(stored) != kind_of(value):
        return False
    return bool(getattr(stored, _ORDER[op])(value))


def matches(flt: Any, row: Mapping[str, Any], types: Mapping[str, str]) -> bool:
    """Does ``row`` (attributes, ``id`` included) pass ``flt``? FilterError if malformed."""
    if not isinstance(flt, list) or len(flt) not in (2, 3):
        raise FilterError(f"a filter is [attr, op, value], [And|Or, [...]] or [Not, f]: {flt!r}")
    if len(flt) == 2:
        head, rest = flt
        if head in ("And", "Or"):
            if not isinstance(rest, list):
                raise FilterError(f"{head} takes an array of filters")
            hits = [matches(f, row, types) for f in rest]
            return all(hits) if head == "And" else any(hits)
        if head == "Not":
            return not matches(rest, row, types)
        raise FilterError(f"unknown filter combinator {head!r}")
    attr, op, value = flt
    if not isinstance(attr, str) or op not in _OPS:
        raise FilterError(f"unknown filter operator {op!r}")
    return _cond(row, attr, op, value, types)
