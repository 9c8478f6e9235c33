"""Number types of every command's options: floats that refuse NaN and infinities, seeds.

:func:`finite_floats` gives each float option of a command the :class:`FiniteFloat` type;
the group applies it to every command it holds."""

from __future__ import annotations

import math
from typing import Any

import click


class FiniteFloat(click.ParamType):
    """A float that is finite (no NaN, no infinities) and inside ``[min, max]``.

    ``click.FloatRange`` lets NaN through (every comparison with NaN is false), and a NaN
    threshold makes every verdict meaningless; this type refuses it at the edge.
    """

    name = "float"

    def __init__(
        self,
        min: float | None = None,  # noqa: A002 (click's own names)
        max: float | None = None,  # noqa: A002
        min_open: bool = False,
        max_open: bool = False,
    ) -> None:
        self.min, self.max = min, max
        self.min_open, self.max_open = min_open, max_open

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, bool):
            self.fail(f"{value!r} is not a number", param, ctx)
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        low = self.min is not None and (number <= self.min if self.min_open else number < self.min)
        high = self.max is not None and (number >= self.max if self.max_open else number > self.max)
        if low or high:
            self.fail(f"{value!r} is not in the range {self._range()}", param, ctx)
        return number

    def _range(self) -> str:
        parts = []
        if self.min is not None:
            parts.append(f"{'>' if self.min_open else '>='} {self.min:g}")
        if self.max is not None:
            parts.append(f"{'<' if self.max_open else '<='} {self.max:g}")
        return " and ".join(parts)

    def __repr__(self) -> str:
        return f"FiniteFloat({self.min!r}, {self.max!r})"


#: a seed numpy's default_rng and Python's random both take (an unsigned 32-bit value)
SEED = click.IntRange(0, 2**32 - 1)
#: a share or a rate, from 0 to 1
SHARE = click.FloatRange(0, 1)
#: a cosine similarity, from -1 to 1
COSINE = click.FloatRange(-1, 1)


def finite_floats(command: click.Command) -> None:
    """Give every float option of ``command`` the :class:`FiniteFloat` type, keeping its
    range: one place that keeps NaN and infinities out of every command."""
    for param in command.params:
        kind = param.type
        if isinstance(kind, click.FloatRange):
            low = None if kind.min is None else float(kind.min)
            high = None if kind.max is None else float(kind.max)
            param.type = FiniteFloat(low, high, kind.min_open, kind.max_open)
        elif kind is click.FLOAT:
            param.type = FiniteFloat()
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            finite_floats(sub)
