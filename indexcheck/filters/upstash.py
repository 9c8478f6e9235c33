"""Portable filter -> Upstash Vector's filter string.

Upstash documents a SQL-like syntax: ``=  !=  <  <=  >  >=  GLOB  IN  NOT IN  CONTAINS
HAS FIELD  HAS NOT FIELD``, ``AND``/``OR`` and parentheses; keys are dotted paths;
string literals are in single or double quotes. The documentation gives no escape
inside a literal, so a value holding both quote characters, a backslash or a control
character is refused rather than sent in a form whose meaning is a guess.
"""

from __future__ import annotations

from indexcheck.errors import FilterError
from indexcheck.filters._common import SQL_OPS, cannot, scalar_literal
from indexcheck.filters.grammar import LIST_OPS, And, Cond, Node, Op


def quote(value: str) -> str:
    """A string literal Upstash reads back as ``value``, or FilterError."""
    if "\\" in value or any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise FilterError(
            f"the upstash store cannot quote {value!r}: its filter syntax documents no "
            "escape for a backslash or a control character"
        )
    if "'" not in value:
        return f"'{value}'"
    if '"' not in value:
        return f'"{value}"'
    raise FilterError(
        f"the upstash store cannot quote {value!r}: it holds both quote characters and "
        "Upstash documents no escape inside a literal"
    )


# words of the filter syntax: a key spelled like one cannot be told from the operator, and
# Upstash documents no quoting for keys
_KEYWORDS = frozenset(
    {"AND", "OR", "NOT", "IN", "GLOB", "CONTAINS", "HAS", "FIELD", "TRUE", "FALSE"}
)


def _key(c: Cond) -> str:
    clash = [seg for seg in c.field.split(".") if seg.upper() in _KEYWORDS]
    if clash:
        raise cannot(
            "upstash", c, f"'{clash[0]}' is a word of its filter syntax and keys cannot be quoted"
        )
    return c.field


def _cond(c: Cond) -> str:
    key = _key(c)
    if c.op is Op.EXISTS:
        return f"HAS FIELD {key}" if c.value else f"HAS NOT FIELD {key}"
    if c.op in LIST_OPS:
        assert isinstance(c.value, tuple)
        vals = ", ".join(scalar_literal(v, quote) for v in c.value)
        return f"{key} {'IN' if c.op is Op.IN else 'NOT IN'} ({vals})"
    return f"{key} {SQL_OPS[c.op]} {scalar_literal(c.value, quote)}"


def to_upstash(node: Node) -> str:
    """The ``filter`` string for ``Index.query(..., filter=...)``."""
    if isinstance(node, Cond):
        return _cond(node)
    joiner = " AND " if isinstance(node, And) else " OR "
    parts = [to_upstash(i) if isinstance(i, Cond) else f"({to_upstash(i)})" for i in node.items]
    return joiner.join(parts)
