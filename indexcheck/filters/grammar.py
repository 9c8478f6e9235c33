"""The portable metadata filter: parse a JSON object into a small typed tree.

A filter is the operator style LangChain and Chroma users already write::

    {"profile": "ckd"}                                  equality (short for $eq)
    {"year": {"$gte": 2020, "$lt": 2024}}               several operators on a field: AND
    {"$or": [{"profile": "ckd"}, {"year": {"$lt": 2000}}]}
    {"draft": {"$exists": false}}

Each break is a :class:`FilterError` naming the part: a field is an identifier or a dotted
path (``[A-Za-z_][A-Za-z0-9_]*`` segments); ``$eq``/``$ne`` take a string, number or boolean,
``$gt $gte $lt $lte`` a number only, ``$in``/``$nin`` a non-empty list of one kind, ``$exists``
a boolean, ``$and``/``$or`` a non-empty list; no null, NaN, infinity, nested values, duplicate
keys or empty object. An integral float (``2020.0``) is read as the int ``2020``.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeAlias

import numpy as np

from indexcheck.errors import FilterError

Scalar: TypeAlias = str | int | float | bool

MAX_DEPTH = 16
_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
_MAX_FIELD_LEN = 256


class Op(StrEnum):
    """A comparison on one field, spelled as in the JSON."""

    EQ = "$eq"
    NE = "$ne"
    GT = "$gt"
    GTE = "$gte"
    LT = "$lt"
    LTE = "$lte"
    IN = "$in"
    NIN = "$nin"
    EXISTS = "$exists"


RANGE_OPS = frozenset({Op.GT, Op.GTE, Op.LT, Op.LTE})
LIST_OPS = frozenset({Op.IN, Op.NIN})
_LOGICAL = ("$and", "$or")
_ALL_OPERATORS = [*(o.value for o in Op), *_LOGICAL]


@dataclass(frozen=True)
class Cond:
    """One comparison: ``field op value``; ``value`` is a tuple for $in/$nin, a bool for
    $exists, else a scalar."""

    field: str
    op: Op
    value: Scalar | tuple[Scalar, ...]


@dataclass(frozen=True)
class And:
    """Every item matches."""

    items: tuple[Node, ...]


@dataclass(frozen=True)
class Or:
    """At least one item matches."""

    items: tuple[Node, ...]


Node: TypeAlias = Cond | And | Or


def kind(value: Any) -> str:
    """'bool', 'number', 'string' or 'other' for a Python value (bool before int)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "other"


def _fail(where: str, what: str) -> FilterError:
    at = f" at {where}" if where else ""
    return FilterError(f"filter{at}: {what}")


def _json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise FilterError(f"filter: key '{key}' appears twice in one object; keep one")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise FilterError(f"filter: {name} is not a value a filter can compare; use a number")


def parse_filter(source: str | Mapping[str, Any]) -> Node:
    """Parse a filter given as JSON text or as an already decoded object into its tree."""
    if isinstance(source, str):
        try:
            obj = json.loads(source, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
        except json.JSONDecodeError as err:
            raise FilterError(
                f"filter is not valid JSON ({err.msg} at character {err.pos}); "
                'write an object such as {"profile": "ckd"}'
            ) from None
    else:
        obj = source
    return _node(obj, "", 0)


def _node(obj: Any, where: str, depth: int) -> Node:
    if depth > MAX_DEPTH:
        raise _fail(where, f"nested deeper than {MAX_DEPTH} levels")
    if not isinstance(obj, Mapping):
        raise _fail(where, f'expected an object such as {{"profile": "ckd"}}, got {_json(obj)}')
    if not obj:
        raise _fail(where, "empty object; an empty filter matches every chunk, so leave it out")
    items: list[Node] = []
    for key, value in obj.items():
        if not isinstance(key, str):
            raise _fail(where, f"key {key!r} is not a string")
        here = f"{where}.{key}" if where else key
        if key in _LOGICAL:
            items.append(_logical(key, value, here, depth))
        elif key in _ALL_OPERATORS:
            raise _fail(here, f'\'{key}\' needs a field: write {{"field": {{"{key}": value}}}}')
        elif key.startswith("$"):
            raise _fail(here, _unknown(key))
        else:
            items.extend(_field(key, value, here))
    return items[0] if len(items) == 1 else And(tuple(items))


def _unknown(key: str) -> str:
    hint = difflib.get_close_matches(key, _ALL_OPERATORS, n=1)
    also = f" (did you mean '{hint[0]}'?)" if hint else ""
    return f"unknown operator '{key}'{also}; operators are {' '.join(_ALL_OPERATORS)}"


def _logical(key: str, value: Any, where: str, depth: int) -> Node:
    if not isinstance(value, list) or not value:
        raise _fail(where, f"'{key}' takes a non-empty list of filters, got {_json(value)}")
    items = tuple(_node(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value))
    return And(items) if key == "$and" else Or(items)


def check_field_name(name: str, where: str = "") -> str:
    """Return ``name`` if it is a plain identifier or dotted path, else raise."""
    if len(name) > _MAX_FIELD_LEN or not _FIELD.match(name):
        raise _fail(
            where or _json(name),
            f"field name {_json(name)} is not a plain identifier or dotted path "
            "(letters, digits, '_', segments joined by '.')",
        )
    return name


def _field(name: str, value: Any, where: str) -> list[Cond]:
    check_field_name(name, where)
    if isinstance(value, list):
        raise _fail(
            where,
            f'a list is not a value; to match any of them write {{"{name}": {{"$in": [...]}}}}',
        )
    if not isinstance(value, Mapping):
        return [_cond(name, Op.EQ, value, where)]
    if not value:
        raise _fail(where, 'empty operator object; write {"$eq": value} or leave it out')
    out = []
    for key, operand in value.items():
        here = f"{where}.{key}"
        if not isinstance(key, str) or not key.startswith("$"):
            raise _fail(
                here,
                "nested objects are not filter values; address nested metadata with a "
                f"dotted path such as '{name}.{key}'",
            )
        if key in _LOGICAL:
            raise _fail(here, f"'{key}' belongs at the top level, around whole filters")
        if key not in Op.__members__.values():
            raise _fail(here, _unknown(key))
        out.append(_cond(name, Op(key), operand, here))
    return out


def _plain(value: Any) -> Any:
    """A numpy scalar (from pandas or pyarrow) as the Python value it stands for."""
    if isinstance(value, np.generic) and not isinstance(value, np.str_):
        return value.item()
    return value


def _scalar(value: Any, where: str, allowed: tuple[str, ...]) -> Scalar:
    value = _plain(value)
    k = kind(value)
    if value is None:
        raise _fail(where, 'null is not a filter value; use {"$exists": false}')
    if k == "number" and not math.isfinite(value):
        raise _fail(where, f"{value} is not a value a filter can compare")
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        raise _fail(where, f"{value} is outside the 64-bit integers the engines store")
    if k not in allowed:
        raise _fail(
            where,
            f"{_json(value)} is a {_kind_word(k)}; this operator takes "
            + " or ".join(_kind_word(a) for a in allowed),
        )
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value  # type: ignore[no-any-return]


def _kind_word(k: str) -> str:
    return {"other": "list or object", "bool": "boolean"}.get(k, k)


def _cond(name: str, op: Op, operand: Any, where: str) -> Cond:
    if op in RANGE_OPS:
        return Cond(name, op, _scalar(operand, where, ("number",)))
    if op is Op.EXISTS:
        operand = _plain(operand)
        if not isinstance(operand, bool):
            raise _fail(where, f"'$exists' takes true or false, got {_json(operand)}")
        return Cond(name, op, operand)
    if op in LIST_OPS:
        if isinstance(operand, np.ndarray):
            operand = operand.tolist()
        if not isinstance(operand, list | tuple) or not operand:
            raise _fail(where, f"'{op}' takes a non-empty list, got {_json(operand)}")
        vals = tuple(
            _scalar(v, f"{where}[{i}]", ("string", "number", "bool")) for i, v in enumerate(operand)
        )
        kinds = {kind(v) for v in vals}
        if len(kinds) > 1:
            raise _fail(where, f"'{op}' mixes {' and '.join(sorted(kinds))}; use one kind")
        return Cond(name, op, vals)
    return Cond(name, op, _scalar(operand, where, ("string", "number", "bool")))


def iter_conds(node: Node) -> Iterator[Cond]:
    """Every comparison in the tree, depth first."""
    if isinstance(node, Cond):
        yield node
    else:
        for item in node.items:
            yield from iter_conds(item)


def fields_of(node: Node) -> list[str]:
    """The distinct fields a filter reads, in first-use order."""
    return list(dict.fromkeys(c.field for c in iter_conds(node)))


def to_obj(node: Node) -> dict[str, Any]:
    """The canonical JSON object: explicit operators, flattened and sorted $and/$or,
    $in/$nin values sorted and deduplicated."""
    return _normal(node)[1]


def canonical(node: Node) -> str:
    """One string per distinct filter (sorted keys, no spaces): for grouping and manifests."""
    return _normal(node)[0]


def _dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


#: a filter's canonical string, its canonical object, and (a logical one) its parts by string
Normal = tuple[str, dict[str, Any], dict[str, "Normal"]]


def _normal(node: Node) -> Normal:
    """:data:`Normal` of ``node``, bottom-up, each node once: a logical node's parts are its
    items' canonical forms, those of its own kind opened in place, repeats merged; one part
    left is that part (so a one-item $and holding an $or opens into the $or around it, as
    parsing the canonical form again does)."""
    if isinstance(node, Cond):
        value: Any = node.value
        if isinstance(value, tuple):
            value = sorted(set(value), key=lambda v: (kind(v), v))
        obj: dict[str, Any] = {node.field: {node.op.value: value}}
        return _dumps(obj), obj, {}
    key = "$and" if isinstance(node, And) else "$or"
    parts: dict[str, Normal] = {}
    for item in node.items:
        normal = _normal(item)
        text, obj, inner = normal
        if inner and key in obj:  # the same kind of node (a field never starts with $)
            for k, part in inner.items():
                parts.setdefault(k, part)
        else:
            parts.setdefault(text, normal)
    if len(parts) == 1:
        return next(iter(parts.values()))
    ordered = {k: parts[k] for k in sorted(parts)}
    obj = {key: [part[1] for part in ordered.values()]}
    return _dumps(obj), obj, ordered


def _shown(name: str, quote: str = "'") -> str:
    # a metadata key is data: one that is not a plain name is shown JSON-escaped, so a
    # newline or control character in it cannot break the one-line message
    return f"{quote}{name}{quote}" if _FIELD.match(name) else _json(name)


def check_fields(node: Node, known_fields: Iterable[str]) -> None:
    """Raise if the filter reads a field that no chunk has, naming the known fields and
    the closest match."""
    known = sorted(set(known_fields))
    for name in fields_of(node):
        if name in known:
            continue
        hint = difflib.get_close_matches(name, known, n=1)
        also = f" (did you mean {_shown(hint[0])}?)" if hint else ""
        shown = ", ".join(_shown(k, quote="") for k in known[:20])
        if len(known) > 20:
            shown += f", ... ({len(known)} in all)"
        raise FilterError(
            f"filter field '{name}' is in no chunk's metadata{also}; "
            f"known fields: {shown or 'none (the chunks carry no metadata)'}"
        )
