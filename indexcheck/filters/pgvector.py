"""Portable filter -> a parameterized PostgreSQL ``WHERE`` fragment.

Nothing from the filter is spliced into SQL text: values travel as query parameters
(``%s``), jsonb keys as ``sql.Literal`` (quoted by psycopg, and literal so an expression
index on ``cmetadata ->> 'k'`` can still match), plain columns as ``sql.Identifier``.

On the jsonb column (langchain-postgres ``cmetadata``, LlamaIndex ``metadata_``):

- ``$eq``/``$in`` use containment, ``col @> '{"k": v}'`` (type-strict, numbers by value,
  served by a GIN ``jsonb_path_ops`` index);
- ranges read the number under a ``CASE`` on ``jsonb_typeof`` so a row holding a string
  never reaches the ``::numeric`` cast (``AND`` gives no such order guarantee);
- ``$ne``/``$nin`` follow SQL NULL rules like langchain-postgres: a row without the key
  (or with JSON null) does not match. ``$exists`` treats JSON null as absent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from indexcheck.filters._common import need
from indexcheck.filters.grammar import LIST_OPS, RANGE_OPS, And, Cond, Node, Op, check_field_name

_SQL = {Op.EQ: "=", Op.NE: "<>", Op.GT: ">", Op.GTE: ">=", Op.LT: "<", Op.LTE: "<="}


def _sql() -> Any:
    return need("psycopg.sql", "the pgvector filter", "pgvector", "psycopg[binary]")


def _nested(path: list[str], value: Any) -> str:
    obj: Any = value
    for seg in reversed(path):
        obj = {seg: obj}
    return json.dumps(obj, ensure_ascii=False)


def _param(value: Any) -> Any:
    # floats as exact decimals: PostgreSQL rounds a float8 -> numeric cast to 15 digits
    return Decimal(repr(value)) if isinstance(value, float) else value


class _Builder:
    def __init__(self, sql: Any, column: str, columns: Mapping[str, str]) -> None:
        self.sql = sql
        self.col = sql.Identifier(*column.split("."))
        self.columns = {
            k: sql.Identifier(*check_field_name(v).split(".")) for k, v in columns.items()
        }
        self.params: list[Any] = []

    def p(self, value: Any, cast: str = "") -> Any:
        self.params.append(value)
        return self.sql.SQL("%s" + cast)

    def target(self, path: list[str], text: bool = False) -> Any:
        sql = self.sql
        out = self.col
        for i, seg in enumerate(path):
            arrow = "->>" if text and i == len(path) - 1 else "->"
            out = sql.SQL("{} {} {}").format(out, sql.SQL(arrow), sql.Literal(seg))
        return sql.SQL("({})").format(out)

    def json_cond(self, c: Cond) -> Any:
        sql = self.sql
        path = c.field.split(".")
        present = sql.SQL("coalesce(jsonb_typeof({}), 'null') <> 'null'").format(self.target(path))
        if c.op is Op.EXISTS:
            return present if c.value else sql.SQL("NOT {}").format(present)
        if c.op in RANGE_OPS:
            return sql.SQL(
                "(CASE WHEN jsonb_typeof({}) = 'number' THEN ({})::numeric {} {} END)"
            ).format(
                self.target(path),
                self.target(path, text=True),
                sql.SQL(_SQL[c.op]),
                self.p(_param(c.value), "::numeric"),
            )
        values = c.value if isinstance(c.value, tuple) else (c.value,)
        contains = sql.SQL(" OR ").join(
            sql.SQL("{} @> {}").format(self.col, self.p(_nested(path, v), "::jsonb"))
            for v in values
        )
        if c.op in (Op.EQ, Op.IN):
            return sql.SQL("({})").format(contains)
        return sql.SQL("({} AND NOT ({}))").format(present, contains)

    def column_cond(self, c: Cond, ident: Any) -> Any:
        sql = self.sql
        if c.op is Op.EXISTS:
            return sql.SQL("({} IS {}NULL)").format(ident, sql.SQL("NOT " if c.value else ""))
        if c.op in LIST_OPS:
            assert isinstance(c.value, tuple)
            any_ = sql.SQL("{} = ANY({})").format(ident, self.p([_param(v) for v in c.value]))
            return sql.SQL("({})" if c.op is Op.IN else "(NOT ({}))").format(any_)
        return sql.SQL("({} {} {})").format(ident, sql.SQL(_SQL[c.op]), self.p(_param(c.value)))

    def node(self, n: Node) -> Any:
        if isinstance(n, Cond):
            if n.field in self.columns:
                return self.column_cond(n, self.columns[n.field])
            return self.json_cond(n)
        joiner = self.sql.SQL(" AND " if isinstance(n, And) else " OR ")
        return self.sql.SQL("({})").format(joiner.join(self.node(i) for i in n.items))


def to_pgvector(
    node: Node, *, metadata_column: str = "cmetadata", columns: Mapping[str, str] | None = None
) -> tuple[Any, list[Any]]:
    """``(fragment, params)``: a ``psycopg.sql.Composed`` boolean expression with ``%s``
    placeholders and the values to pass with it, e.g.
    ``cur.execute(sql.SQL("SELECT id FROM t WHERE {}").format(fragment), params)``.

    ``metadata_column``: the jsonb column (``schema.table.column`` parts allowed);
    ``columns``: filter fields stored as plain columns, ``{field: column_name}``.
    """
    check_field_name(metadata_column)
    builder = _Builder(_sql(), metadata_column, columns or {})
    return builder.node(node), builder.params
