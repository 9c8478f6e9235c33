"""The Upstash Vector metadata filter syntax, for the emulator: parse and evaluate.

Implements what Upstash documents (https://upstash.com/docs/vector/features/filtering):
``key = 'v'``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``key IN ('a', 'b')``, ``NOT IN``,
``HAS FIELD key``, ``HAS NOT FIELD key``, ``AND``/``OR`` (AND binds tighter) and
parentheses; string literals in single or double quotes (no escapes), numbers, and
``true``/``false``; keys are identifiers or dotted paths into nested metadata. Anything
else is refused with :class:`FilterSyntaxError` (the emulator answers 400), as Upstash
refuses a filter it cannot parse. Comparisons follow the documented wording, "filter keys
whose values ...": a row without the key never matches a comparison (``!=`` and ``NOT IN``
included); ``<``/``>`` compare numbers only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'[^']*'|\"[^\"]*\")|(?P<num>-?\d+(?:\.\d+)?)|(?P<op><=|>=|!=|=|<|>)"
    r"|(?P<paren>[(),])|(?P<word>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*))"
)
_WORDS = {"AND", "OR", "NOT", "IN", "HAS", "FIELD", "TRUE", "FALSE", "GLOB", "CONTAINS"}

Row = Mapping[str, Any]
Pred = Callable[[Row], bool]


class FilterSyntaxError(ValueError):
    """The filter string is not in the documented syntax."""


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise FilterSyntaxError(f"invalid filter near {text[pos : pos + 20]!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def _get(row: Row, key: str) -> Any:
    value: Any = row
    for seg in key.split("."):
        if not isinstance(value, Mapping) or seg not in value:
            return None
        value = value[seg]
    return value


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise FilterSyntaxError("the filter ends too early")
        self.i += 1
        return tok

    def word(self, w: str) -> bool:
        tok = self.peek()
        if tok is not None and tok[0] == "word" and tok[1].upper() == w:
            self.i += 1
            return True
        return False

    def parse(self) -> Pred:
        pred = self.ors()
        if self.peek() is not None:
            raise FilterSyntaxError(f"unexpected {self.peek()[1]!r} in the filter")  # type: ignore[index]
        return pred

    def ors(self) -> Pred:
        parts = [self.ands()]
        while self.word("OR"):
            parts.append(self.ands())
        return parts[0] if len(parts) == 1 else lambda r: any(p(r) for p in parts)

    def ands(self) -> Pred:
        parts = [self.atom()]
        while self.word("AND"):
            parts.append(self.atom())
        return parts[0] if len(parts) == 1 else lambda r: all(p(r) for p in parts)

    def literal(self) -> Any:
        kind, text = self.take()
        if kind == "str":
            return text[1:-1]
        if kind == "num":
            return float(text) if "." in text else int(text)
        if kind == "word" and text.upper() in ("TRUE", "FALSE"):
            return text.upper() == "TRUE"
        raise FilterSyntaxError(f"expected a value, got {text!r}")

    def key(self) -> str:
        kind, text = self.take()
        if kind != "word" or any(seg.upper() in _WORDS for seg in text.split(".")):
            raise FilterSyntaxError(f"expected a field name, got {text!r}")
        return text

    def atom(self) -> Pred:
        tok = self.peek()
        if tok == ("paren", "("):
            self.take()
            inner = self.ors()
            if self.take() != ("paren", ")"):
                raise FilterSyntaxError("a '(' is not closed")
            return inner
        if self.word("HAS"):
            negate = self.word("NOT")
            if not self.word("FIELD"):
                raise FilterSyntaxError("HAS must be followed by FIELD")
            key = self.key()
            return lambda r: (_get(r, key) is None) if negate else (_get(r, key) is not None)
        key = self.key()
        if self.word("NOT"):
            if not self.word("IN"):
                raise FilterSyntaxError("NOT must be followed by IN here")
            values = self.values()
            return lambda r: (
                (v := _get(r, key)) is not None and not any(_same(v, x) for x in values)
            )
        if self.word("IN"):
            values = self.values()
            return lambda r: (v := _get(r, key)) is not None and any(_same(v, x) for x in values)
        kind, op = self.take()
        if kind != "op":
            raise FilterSyntaxError(f"expected an operator after {key!r}, got {op!r}")
        target = self.literal()
        return _compare(key, op, target)

    def values(self) -> list[Any]:
        if self.take() != ("paren", "("):
            raise FilterSyntaxError("IN takes a parenthesised list")
        out = [self.literal()]
        while self.peek() == ("paren", ","):
            self.take()
            out.append(self.literal())
        if self.take() != ("paren", ")"):
            raise FilterSyntaxError("an IN list is not closed")
        return out


def _compare(key: str, op: str, target: Any) -> Pred:
    if op in ("=", "!="):
        want = op == "="
        return lambda r: (v := _get(r, key)) is not None and _same(v, target) == want
    if isinstance(target, bool) or not isinstance(target, int | float):
        raise FilterSyntaxError(f"'{op}' compares numbers, not {target!r}")
    cmp = {"<": float.__lt__, "<=": float.__le__, ">": float.__gt__, ">=": float.__ge__}[op]

    def pred(r: Row) -> bool:
        v = _get(r, key)
        ok = isinstance(v, int | float) and not isinstance(v, bool)
        return ok and cmp(float(v), float(target))

    return pred


def keep(text: str, ids: list[str], store: Mapping[str, Any]) -> list[str]:
    """The ids whose metadata matches the filter ``text``; FilterSyntaxError if malformed."""
    pred = _Parser(text).parse()
    return [i for i in ids if pred(store[i].get("metadata") or {})]
