"""``json.JSONEncoder(indent=..., ensure_ascii=..., default=...).iterencode``, piece for
piece the same text, at C speed for the rows a large result is made of.

With ``indent``, :mod:`json` always runs its pure-Python encoder, one generator frame per
value, which made writing a large diff's rows cost more than the diff. Here a
container whose items are all scalars (a result row: ids, statuses, cosines) is written as
one string, each scalar formatted as :mod:`json` formats it (``float.__repr__``, ``NaN``
and ``Infinity``, the C string encoder), and a list of such dicts (a result's rows) goes
through json's C encoder a slice of rows at a time (figures on docs/performance.md);
any other container is walked as :mod:`json` walks it. ``tests/test_json_pieces.py`` holds
the text to :func:`json.dumps`'s, byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any

_INF = float("inf")
#: the types written as one string in a container (subclasses, which may format
#: themselves otherwise, go the way json takes)
_SCALARS = frozenset({str, int, float, bool, type(None)})
#: items of a long container of scalars joined into one piece
SLICE = 1024
#: the most items a result row written by json's C encoder has (a longer dict is walked)
ROW_KEYS = 64


def _float(o: float) -> str:
    if o != o:
        return "NaN"
    if o == _INF:
        return "Infinity"
    if o == -_INF:
        return "-Infinity"
    return float.__repr__(o)


class _Pieces:
    def __init__(self, indent: int, ensure_ascii: bool, default: Callable[[Any], Any]) -> None:
        self.indent, self.default = indent, default
        self.quote = json.encoder.encode_basestring_ascii if ensure_ascii else (
            json.encoder.encode_basestring
        )  # fmt: skip
        self.seen: set[int] = set()
        self.ensure_ascii = ensure_ascii
        self._encoders: dict[str, json.JSONEncoder] = {}

    def _rows(self, rows: Any, inner: str, field: str) -> Iterator[str]:
        """``rows`` (see :func:`_flat_rows`) without the closing bracket, ``SLICE`` rows a
        piece, each slice written by json's C encoder with the fields' separator (``,`` and
        ``field``) and its row boundaries re-indented: a newline is never raw inside a JSON
        string, and no brace stands outside one in a row of scalars, so ``},FIELD{`` is only
        ever a boundary."""
        enc = self._encoders.get(field)
        if enc is None:
            enc = json.JSONEncoder(
                ensure_ascii=self.ensure_ascii, check_circular=False, separators=("," + field, ": ")
            )
            self._encoders[field] = enc
        boundary, joint = "}," + field + "{", inner + "}," + inner + "{" + field
        first = "["
        for at in range(0, len(rows), SLICE):
            text = enc.encode(rows[at : at + SLICE])  # [{...},FIELD{...}]
            yield first + inner + "{" + field + text[2:-2].replace(boundary, joint) + inner + "}"
            first = ","

    def scalar(self, o: Any) -> str | None:
        """The text of a scalar, None for anything else (the order of :mod:`json`)."""
        if isinstance(o, str):
            return self.quote(o)
        if o is None:
            return "null"
        if o is True:
            return "true"
        if o is False:
            return "false"
        if isinstance(o, int):
            return int.__repr__(o)
        if isinstance(o, float):
            return _float(o)
        return None

    def key(self, k: Any) -> str:
        if isinstance(k, str):
            return self.quote(k)
        if isinstance(k, float):
            return self.quote(_float(k))
        if k is True or k is False or k is None:
            return self.quote({True: "true", False: "false", None: "null"}[k])
        if isinstance(k, int):
            return self.quote(int.__repr__(k))
        raise TypeError(f"keys must be str, int, float, bool or None, not {type(k).__name__}")

    def encode(self, o: Any, level: int) -> Iterator[str]:
        text = self.scalar(o)
        if text is not None:
            yield text
        elif isinstance(o, list | tuple):
            yield from self.container(o, level, "[", "]", None)
        elif isinstance(o, dict):
            yield from self.container(o, level, "{", "}", o)
        else:
            mark = id(o)
            if mark in self.seen:
                raise ValueError("Circular reference detected")
            self.seen.add(mark)
            yield from self.encode(self.default(o), level)
            self.seen.discard(mark)

    def container(
        self, o: Any, level: int, start: str, end: str, mapping: dict[Any, Any] | None
    ) -> Iterator[str]:
        if not o:
            yield start + end
            return
        mark = id(o)
        if mark in self.seen:
            raise ValueError("Circular reference detected")
        self.seen.add(mark)
        inner = "\n" + " " * (self.indent * (level + 1))
        close = "\n" + " " * (self.indent * level) + end
        items = o.values() if mapping is not None else o
        if mapping is None and _flat_rows(o):  # result rows: a slice of them a C call
            yield from self._rows(o, inner, "\n" + " " * (self.indent * (level + 2)))
            yield close
        elif all(type(v) in _SCALARS for v in items):  # every item a plain scalar
            # a string a slice of items: one for a result row, bounded for a long list
            if mapping is not None:
                texts = (f"{self.key(k)}: {self.scalar(v)}" for k, v in mapping.items())
            else:
                texts = (self.scalar(v) or "" for v in o)  # never "": all are scalars
            first = start
            while part := list(islice(texts, SLICE)):
                yield first + inner + ("," + inner).join(part)
                first = ","
            yield close
        else:
            yield start
            pairs_ = mapping.items() if mapping is not None else ((None, v) for v in o)
            for i, (k, v) in enumerate(pairs_):
                yield ("," + inner) if i else inner
                if mapping is not None:
                    yield self.key(k) + ": "
                yield from self.encode(v, level + 1)
            yield close
        self.seen.discard(mark)


def _flat_rows(o: Any) -> bool:
    """True for a list (or tuple) of plain dicts, each of 1 to ``ROW_KEYS`` items, all None or
    a str, int or float, subclasses too (a status enum, numpy's float64): json's C encoder
    writes those as its Python encoder does, from their str, int or float value."""
    return all(
        type(r) is dict
        and 0 < len(r) <= ROW_KEYS
        and all(v is None or isinstance(v, str | int | float) for v in r.values())
        for r in o
    )


def iter_json(
    data: Any, *, indent: int, ensure_ascii: bool = True, default: Callable[[Any], Any]
) -> Iterator[str]:
    """The pieces of ``json.dumps(data, indent=indent, ensure_ascii=ensure_ascii,
    default=default)`` (joined, the same text)."""
    return _Pieces(indent, ensure_ascii, default).encode(data, 0)
