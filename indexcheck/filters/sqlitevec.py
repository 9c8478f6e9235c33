"""Portable filter -> SQLite ``WHERE`` fragments for the sqlite-vec store.

Two places a filter field can live, and two translations:

- a ``vec0`` metadata column or partition key: a constraint sqlite-vec applies inside its
  own KNN (``AND "year" >= ?``). Only a flat AND of ``$eq $ne $gt $gte $lt $lte $in`` is
  pushed there, ``$nin`` as an AND of ``!=``; sqlite-vec returns nothing for ``NOT IN``
  and k per partition for ``IN`` on a partition key (both held by the engine tests), so those
  are not sent, and ``$or``/``$exists`` (vec0 columns hold no NULL) are refused;
  a fraction compared with an integer column is sent as the integer bound that means
  the same (sqlite-vec truncates it), and ``$eq`` of a fraction there is refused;
- a JSON column (LangChain's ``metadata``, llm's ``metadata``): any filter, in SQL over
  ``json_type``/``json_extract``, type-strict like :func:`indexcheck.filters.evaluate`
  with SQL NULL rules (``$ne``/``$nin`` never match a row that lacks the field).

Values always travel as parameters; JSON paths are built from checked field names.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from indexcheck.errors import FilterError
from indexcheck.filters._common import SQL_OPS, cannot
from indexcheck.filters.grammar import RANGE_OPS, And, Cond, Node, Op, Or, fields_of, kind

STORE = "sqlitevec"
#: vec0 column type -> the value kind it holds
_COLUMN_KIND = {"text": "string", "integer": "number", "float": "number", "boolean": "bool"}


@dataclass
class SqliteFilter:
    """The translation: ``columns`` is an AND of vec0 constraints (``"col" op ?``) and
    ``json`` a boolean expression over the JSON column, each with its parameters."""

    columns: list[str] = field(default_factory=list)
    column_params: list[Any] = field(default_factory=list)
    json: str | None = None
    json_params: list[Any] = field(default_factory=list)


def quote_ident(name: str) -> str:
    """An SQLite identifier, double-quoted."""
    return '"' + name.replace('"', '""') + '"'


def _sql_value(value: Any) -> Any:
    return int(value) if isinstance(value, bool) else value


class _Json:
    def __init__(self, column: str) -> None:
        self.col = column
        self.params: list[Any] = []

    def _path(self, f: str) -> str:
        self.params.append("$." + f)
        return "?"

    def typ(self, f: str) -> str:
        return f"json_type({self.col}, {self._path(f)})"

    def val(self, f: str) -> str:
        return f"json_extract({self.col}, {self._path(f)})"

    def eq(self, f: str, v: Any) -> str:
        if isinstance(v, bool):
            return f"({self.typ(f)} = '{'true' if v else 'false'}')"
        want = "'text'" if isinstance(v, str) else "'integer', 'real'"
        t = self.typ(f)
        x = self.val(f)
        self.params.append(v)
        return f"({t} IN ({want}) AND {x} = ?)"

    def present(self, f: str) -> str:
        return f"(coalesce({self.typ(f)}, 'null') <> 'null')"

    def cond(self, c: Cond) -> str:
        if c.op is Op.EXISTS:
            return self.present(c.field) if c.value else f"(NOT {self.present(c.field)})"
        if c.op in RANGE_OPS:
            t, x = self.typ(c.field), self.val(c.field)
            self.params.append(c.value)
            return f"({t} IN ('integer', 'real') AND {x} {SQL_OPS[c.op]} ?)"
        values = c.value if isinstance(c.value, tuple) else (c.value,)
        if c.op in (Op.EQ, Op.IN):
            return "(" + " OR ".join(self.eq(c.field, v) for v in values) + ")"
        present = self.present(c.field)
        return f"({present} AND NOT (" + " OR ".join(self.eq(c.field, v) for v in values) + "))"

    def node(self, n: Node) -> str:
        if isinstance(n, Cond):
            return self.cond(n)
        joiner = " AND " if isinstance(n, And) else " OR "
        return "(" + joiner.join(self.node(i) for i in n.items) + ")"


def _column(c: Cond, ctype: str, partition: bool) -> tuple[list[str], list[Any]]:
    col = quote_ident(c.field)
    if c.op is Op.EXISTS:
        raise cannot(STORE, c, "vec0 metadata columns hold no NULL, so nothing is missing")
    values = c.value if isinstance(c.value, tuple) else (c.value,)
    want = _COLUMN_KIND.get(ctype, "other")
    for v in values:
        if kind(v) != want:
            raise cannot(
                STORE, c, f"'{c.field}' is a vec0 {ctype} column; compare it with a {want}"
            )
    if ctype.startswith("integer"):
        return _integer_column(c, col, partition)
    if c.op is Op.IN:
        if partition:
            raise cannot(STORE, c, "sqlite-vec returns k rows per partition for IN")
        return [f"{col} IN ({', '.join('?' * len(values))})"], [_sql_value(v) for v in values]
    if c.op is Op.NIN:  # NOT IN comes back empty from sqlite-vec 0.1.9
        return [f"{col} != ?" for _ in values], [_sql_value(v) for v in values]
    return [f"{col} {SQL_OPS[c.op]} ?"], [_sql_value(c.value)]


def _integer_column(c: Cond, col: str, partition: bool) -> tuple[list[str], list[Any]]:
    """An integer vec0 column: sqlite-vec truncates a fractional bound to an integer
    (``year < 2020.5`` reads as ``year < 2020``, ``= 2020.5`` matches 2020; held by the
    engine tests), so a fraction is turned into the integer bound that means the same."""
    values = c.value if isinstance(c.value, tuple) else (c.value,)
    whole = [int(v) for v in values if float(v).is_integer()]
    if c.op in RANGE_OPS:
        v = float(c.value)  # type: ignore[arg-type]
        if v.is_integer():
            return [f"{col} {SQL_OPS[c.op]} ?"], [int(v)]
        low = c.op in (Op.LT, Op.LTE)
        return [f"{col} {'<=' if low else '>='} ?"], [math.floor(v) if low else math.ceil(v)]
    if c.op in (Op.EQ, Op.IN):
        if not whole:
            raise cannot(STORE, c, "an integer vec0 column never equals a fraction, and "
                                   "sqlite-vec would compare the fraction truncated")  # fmt: skip
        if c.op is Op.IN and partition:
            raise cannot(STORE, c, "sqlite-vec returns k rows per partition for IN")
        if c.op is Op.IN:
            return [f"{col} IN ({', '.join('?' * len(whole))})"], whole
        return [f"{col} = ?"], whole
    # $ne / $nin: a fraction differs from every integer, so it constrains nothing
    return [f"{col} != ?" for _ in whole], whole


def to_sqlitevec(
    node: Node,
    *,
    columns: Mapping[str, str] | None = None,
    partition: frozenset[str] = frozenset(),
    json_column: str | None = None,
) -> SqliteFilter:
    """Split ``node`` into vec0 constraints (fields in ``columns``: name -> vec0 type) and
    one JSON expression over ``json_column`` (an SQL expression, already quoted)."""
    cols = dict(columns or {})
    items = node.items if isinstance(node, And) else (node,)
    out = SqliteFilter()
    rest: list[Node] = []
    for item in items:
        on_cols = [f for f in fields_of(item) if f in cols]
        if not on_cols:
            rest.append(item)
            continue
        if not isinstance(item, Cond):
            op = "$or" if isinstance(item, Or) else "$and"
            raise FilterError(
                f"the {STORE} store cannot express '{op}' over the vec0 column '{on_cols[0]}': "
                "sqlite-vec applies only an AND of comparisons inside its KNN; split the filter"
            )
        sql, params = _column(item, cols[item.field], item.field in partition)
        out.columns.extend(sql)
        out.column_params.extend(params)
    if rest:
        if json_column is None:
            first = fields_of(rest[0])
            raise cannot(
                STORE,
                None,
                f"field '{sorted(first)[0] if first else '?'}' is no vec0 metadata column and "
                "the index has no JSON metadata column; pass &metadata=COLUMN",
            )
        builder = _Json(json_column)
        out.json = builder.node(rest[0] if len(rest) == 1 else And(tuple(rest)))
        out.json_params = builder.params
    return out
