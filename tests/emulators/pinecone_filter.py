"""Pinecone's metadata filter language, for the emulator: validate and evaluate.

What docs.pinecone.io/guides/search/filter-by-metadata documents: a JSON object of
``field: value`` (short for ``$eq``) or ``field: {op: value}`` with ``$eq $ne`` (string,
number, boolean), ``$gt $gte $lt $lte`` (number), ``$in $nin`` (a list of strings or
numbers), ``$exists`` (boolean), and ``$and``/``$or`` over lists of filters; several keys of
one object must all hold. Metadata is flat: values are strings, numbers (compared as
float64), booleans or lists of strings (``$eq`` on a list matches any element). A row that
lacks the field matches no comparison, ``$ne`` and ``$nin`` included (Pinecone's handling
since 2024: deepset-ai/haystack-core-integrations issue 590). Anything else is a
:class:`FilterError`, which the emulator answers with 400 as Pinecone does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_COMPARE = {"$gt": float.__gt__, "$gte": float.__ge__, "$lt": float.__lt__, "$lte": float.__le__}
_OPS = {"$eq", "$ne", "$in", "$nin", "$exists", *_COMPARE}


class FilterError(ValueError):
    """The filter is not in Pinecone's documented language."""


def _num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _equal(stored: Any, value: Any) -> bool:
    if isinstance(stored, list):
        return any(_equal(s, value) for s in stored)
    if isinstance(stored, bool) or isinstance(value, bool):
        return type(stored) is type(value) and stored == value
    if _num(stored) and _num(value):
        return float(stored) == float(value)
    return isinstance(stored, str) and isinstance(value, str) and stored == value


def _cond(meta: Mapping[str, Any], field: str, op: str, value: Any) -> bool:
    if op not in _OPS:
        raise FilterError(f"unknown operator '{op}'")
    if op == "$exists":
        if not isinstance(value, bool):
            raise FilterError("$exists takes a boolean")
        return (field in meta) is value
    if op in ("$in", "$nin"):
        if not isinstance(value, list) or not value or any(not (_num(v) or isinstance(v, str))
                                                            for v in value):  # fmt: skip
            raise FilterError(f"{op} takes a non-empty list of strings or numbers")
    elif op in _COMPARE:
        if not _num(value):
            raise FilterError(f"{op} takes a number")
    elif not (_num(value) or isinstance(value, str | bool)):
        raise FilterError(f"{op} takes a string, number or boolean")
    if field not in meta:
        return False
    stored = meta[field]
    if op == "$eq":
        return _equal(stored, value)
    if op == "$ne":
        return not _equal(stored, value)
    if op == "$in":
        return any(_equal(stored, v) for v in value)
    if op == "$nin":
        return not any(_equal(stored, v) for v in value)
    return _num(stored) and bool(_COMPARE[op](float(stored), float(value)))


def matches(flt: Any, meta: Mapping[str, Any] | None) -> bool:
    """Does a row with metadata ``meta`` pass filter ``flt``? FilterError if malformed."""
    if not isinstance(flt, dict) or not flt:
        raise FilterError("a filter is a non-empty JSON object")
    row = meta or {}
    for key, value in flt.items():
        if key in ("$and", "$or"):
            if not isinstance(value, list) or not value:
                raise FilterError(f"{key} takes a non-empty list of filters")
            hits = [matches(f, row) for f in value]
            if not (all(hits) if key == "$and" else any(hits)):
                return False
        elif key.startswith("$"):
            raise FilterError(f"unknown operator '{key}'")
        elif isinstance(value, dict):
            if not value:
                raise FilterError(f"no operator for field '{key}'")
            if not all(_cond(row, key, op, v) for op, v in value.items()):
                return False
        elif not _cond(row, key, "$eq", value):
            return False
    return True
