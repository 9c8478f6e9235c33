"""Portable filter -> a Milvus boolean ``expr`` (the ``filter=`` of query/search).

Fields live in a JSON field (``metadata["k"]["j"]``, the default), as dynamic fields
(``json_field=None``: ``k["j"]``), or as scalar columns (``columns``). Field names are
identifiers checked by the grammar, so they need no quoting; string values are written
as double-quoted literals escaping backslash, quote, newline, tab and carriage return;
any other control character is refused. Milvus Lite refuses ``in`` on a JSON path, so
``$in``/``$nin`` on JSON become ``or``/``and`` chains; on columns they stay ``in``.

Milvus's own rules (the engine tests hold them): ``!=`` and ``not (...)`` never match a row
without the key (SQL NULL rules), ``exists`` treats JSON null as absent, 2020 equals 2020.0, and
``true == 1`` (unlike the grammar's evaluation: do not compare a boolean field with a
number).
"""

from __future__ import annotations

from collections.abc import Collection

from indexcheck.errors import FilterError
from indexcheck.filters._common import SQL_OPS, cannot, scalar_literal
from indexcheck.filters.grammar import LIST_OPS, And, Cond, Node, Op, check_field_name

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}
_OPS = {**SQL_OPS, Op.EQ: "=="}


def quote(value: str) -> str:
    """A Milvus string literal that reads back as ``value``, or FilterError."""
    out = []
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 32 or ord(ch) == 127:
            raise FilterError(
                f"the milvus store cannot quote {value!r}: control character "
                f"U+{ord(ch):04X} has no escape in a Milvus expression"
            )
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


# words of the expression grammar: a bare name spelled like one (a column, or a dynamic
# field with json_field=None) would be read as the operator
_KEYWORDS = frozenset(
    {"and", "or", "not", "in", "like", "exists", "is", "null", "true", "false", "json_contains"}
)


def _bare(name: str, c: Cond) -> str:
    if name.lower() in _KEYWORDS:
        raise cannot("milvus", c, f"'{name}' is a word of its expression grammar; use a JSON field")
    return name


def _target(c: Cond, json_field: str | None, columns: Collection[str]) -> str:
    if c.field in columns:
        return _bare(c.field, c)
    head, *rest = c.field.split(".")
    keys = "".join(f'["{seg}"]' for seg in rest)  # identifiers: no quote to escape
    if json_field is None:
        return f"{_bare(head, c)}{keys}"
    return f'{json_field}["{head}"]{keys}'


def _cond(c: Cond, json_field: str | None, columns: Collection[str]) -> str:
    t = _target(c, json_field, columns)
    is_column = c.field in columns
    if c.op is Op.EXISTS:
        if is_column:
            return f"{t} is not null" if c.value else f"{t} is null"
        return f"exists {t}" if c.value else f"not exists {t}"
    if c.op in LIST_OPS:
        assert isinstance(c.value, tuple)
        lits = [scalar_literal(v, quote) for v in c.value]
        if is_column:
            return f"{t} {'in' if c.op is Op.IN else 'not in'} [{', '.join(lits)}]"
        if c.op is Op.IN:
            return "(" + " or ".join(f"{t} == {v}" for v in lits) + ")"
        return "(" + " and ".join(f"{t} != {v}" for v in lits) + ")"
    return f"{t} {_OPS[c.op]} {scalar_literal(c.value, quote)}"


def to_milvus(
    node: Node, *, json_field: str | None = "metadata", columns: Collection[str] = ()
) -> str:
    """The ``filter`` expression string for ``MilvusClient.query`` / ``search``."""
    if json_field is not None:
        check_field_name(json_field)
    for col in columns:
        check_field_name(col)
    if isinstance(node, Cond):
        return _cond(node, json_field, columns)
    joiner = " and " if isinstance(node, And) else " or "
    return (
        "("
        + joiner.join(to_milvus(i, json_field=json_field, columns=columns) for i in node.items)
        + ")"
    )
