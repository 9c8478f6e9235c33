"""The one validation of every command's settings: each number's type and range, declared
on its field (``field(default=..., metadata=AT_LEAST_1)``) and checked when the settings are
built at the face, before any file is read or request made.

A value of the wrong type, a NaN or infinity, or a number out of its range is bad input
(:class:`~indexcheck.errors.InputError`, exit 2) in one sentence naming the keyword. The
command line's option types declare the same ranges (a test holds them equal), so a Python
caller and a shell user are refused alike.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import sys
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import InputError


@dataclass(frozen=True)
class Bound:
    """An inclusive (or, with ``low_open``/``high_open``, exclusive) range; None is open."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def holds(self, x: float) -> bool:
        low = self.low is not None and (x <= self.low if self.low_open else x < self.low)
        high = self.high is not None and (x >= self.high if self.high_open else x > self.high)
        return not (low or high)

    def __str__(self) -> str:
        if None not in (self.low, self.high) and not (self.low_open or self.high_open):
            return f"between {self.low:g} and {self.high:g}"
        parts = []
        if self.low is not None:
            parts.append(f"{'above' if self.low_open else 'at least'} {self.low:g}")
        if self.high is not None:
            parts.append(f"{'below' if self.high_open else 'at most'} {self.high:g}")
        return " and ".join(parts)


def bound(
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> dict[str, Bound]:
    """A field's ``metadata`` declaring its range."""
    return {"bound": Bound(low, high, low_open, high_open)}


AT_LEAST_0 = bound(0)
AT_LEAST_1 = bound(1)
SEED = bound(0, 2**32 - 1)
COSINE = bound(-1, 1)
SHARE = bound(0, 1)
RETRIES = bound(0, 10)

_KINDS = {int: "an integer", float: "a number", bool: "True or False"}


class Settings:
    """A command's frozen settings dataclass: validated once, when it is built."""

    def __post_init__(self) -> None:
        validate(self)


@dataclass(frozen=True, kw_only=True)
class EmbeddingRun(Settings):
    """The settings every command embedding the chunks it reads shares (check-index,
    compare-ann, diff-index): where the work runs, the embedding cache, how the store and a
    chunks file are read. Keyword-only, so each command's own fields keep their order."""

    #: "local", "ray" (at ``ray_address``) or an engine; None: this process
    engine: Any = None
    ray_address: str | None = None
    #: a SQLite file caching embeddings
    cache: str | Path | None = None
    trust_pickle: bool = False
    #: the columns of a chunks file given as a path
    id_column: str = "id"
    text_column: str = "text"


def validate(settings: Any) -> None:
    """Refuse (InputError, exit 2) the first number or flag of ``settings`` whose value has
    the wrong type or lies outside its declared range; other fields are the command's."""
    names = vars(sys.modules[type(settings).__module__])
    for f in dataclasses.fields(settings):
        kinds = _scalar_kinds(f.type, names)
        if kinds is None:
            continue
        value = getattr(settings, f.name)
        if value is None and type(None) in kinds:
            continue
        problem = _type_problem(value, kinds)
        limit: Bound | None = f.metadata.get("bound")
        if problem is None and limit is not None and not limit.holds(value):
            problem = str(limit)
        if problem is not None:
            raise InputError(f"{f.name} must be {problem}, got {value!r}")


def _scalar_kinds(hint: Any, names: dict[str, Any]) -> set[type] | None:
    """The types of a field made only of int, float, bool and None; else None."""
    if isinstance(hint, str):
        try:
            hint = eval(hint, names)  # noqa: S307 (the module's own annotation)
        except NameError:  # a name imported only for type checking: not a scalar
            return None
    args = (
        typing.get_args(hint)
        if typing.get_origin(hint) in (types.UnionType, typing.Union)
        else (hint,)
    )
    kinds = set(args)
    return kinds if kinds and kinds <= {int, float, bool, type(None)} else None


def _type_problem(value: Any, kinds: set[type]) -> str | None:
    """What ``value`` should be instead, or None when it is one of ``kinds`` (a numpy
    integer counts as an integer, a numpy float as a number; a bool is neither)."""
    if isinstance(value, bool | np.bool_):
        return None if bool in kinds else _wanted(kinds)
    if int in kinds and isinstance(value, numbers.Integral):
        return None
    if float in kinds and isinstance(value, numbers.Real):
        return None if math.isfinite(value) else "a finite number"
    return _wanted(kinds)


def _wanted(kinds: set[type]) -> str:
    names = [_KINDS[k] for k in (float, int, bool) if k in kinds]
    if float in kinds and int in kinds:
        names.remove(_KINDS[int])
    return " or ".join(names) + (" or None" if type(None) in kinds else "")


__all__ = [
    "AT_LEAST_0",
    "AT_LEAST_1",
    "COSINE",
    "RETRIES",
    "SEED",
    "SHARE",
    "Bound",
    "Settings",
    "bound",
    "validate",
]
