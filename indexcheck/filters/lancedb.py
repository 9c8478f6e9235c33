"""Portable filter -> a LanceDB SQL ``where`` string (DataFusion SQL).

Pass it as ``table.search(q).where(expr, prefilter=True)``: with ``prefilter=False``
LanceDB filters the top-k after the vector search and returns fewer than k rows.

Every path segment is backtick-quoted (`` `metadata`.`profile` `` for a struct column),
so a field named like a keyword (``order``) still works; string values are single-quoted
with ``'`` doubled (DataFusion has no backslash escapes); NUL is refused. SQL NULL rules:
``!=`` and ``NOT IN`` never match a null, and each says so itself (``x IS NOT NULL AND x !=
a``): DataFusion's simplifier folds ``x != a OR x NOT IN (b)`` into a contradiction's
negation, ``true``, which let nulls through. DataFusion will not compare an integer column
with a fractional literal, so fields listed in ``integer_fields`` are cast to DOUBLE
when the bound is fractional.
"""

from __future__ import annotations

from collections.abc import Collection

from indexcheck.errors import FilterError
from indexcheck.filters._common import SQL_OPS, scalar_literal
from indexcheck.filters.grammar import LIST_OPS, And, Cond, Node, Op, check_field_name


def quote(value: str) -> str:
    """A DataFusion string literal that reads back as ``value``."""
    if "\x00" in value:
        raise FilterError(f"the lancedb store cannot quote {value!r}: it holds a NUL character")
    return "'" + value.replace("'", "''") + "'"


def _target(field: str, struct: str | None) -> str:
    path = ([struct] if struct else []) + field.split(".")
    return ".".join(f"`{seg}`" for seg in path)


def _cond(c: Cond, struct: str | None, integer_fields: Collection[str]) -> str:
    t = _target(c.field, struct)
    if c.op is Op.EXISTS:
        return f"{t} IS NOT NULL" if c.value else f"{t} IS NULL"
    if c.op in LIST_OPS:
        assert isinstance(c.value, tuple)
        vals = ", ".join(scalar_literal(v, quote) for v in c.value)
        if c.field in integer_fields and any(isinstance(v, float) for v in c.value):
            t = f"CAST({t} AS DOUBLE)"
        if c.op is Op.IN:
            return f"{t} IN ({vals})"
        return f"({t} IS NOT NULL AND {t} NOT IN ({vals}))"
    if c.field in integer_fields and isinstance(c.value, float):
        t = f"CAST({t} AS DOUBLE)"
    out = f"{t} {SQL_OPS[c.op]} {scalar_literal(c.value, quote)}"
    return f"({t} IS NOT NULL AND {out})" if c.op is Op.NE else out


def to_lancedb(
    node: Node, *, struct: str | None = None, integer_fields: Collection[str] = ()
) -> str:
    """The ``where`` string; ``struct`` names a struct column holding the metadata."""
    if struct is not None:
        check_field_name(struct)
    if isinstance(node, Cond):
        return _cond(node, struct, integer_fields)
    joiner = " AND " if isinstance(node, And) else " OR "
    parts = (to_lancedb(i, struct=struct, integer_fields=integer_fields) for i in node.items)
    return "(" + joiner.join(parts) + ")"
