"""Strict reading of one TOML table of the ci config: typed keys, unknown keys named, and
declared limits (``metric op number``) parsed.

Every error is an InputError that names the file and the key (exit 2).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import InputError
from ...inputs.config_file import did_you_mean

OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "==": operator.eq,
}
_LIMIT_RX = re.compile(r"^\s*([A-Za-z_][\w.]*(?:@\d+)?)\s*(>=|<=|==|>|<)\s*(\S+)\s*$")

Resolver = Callable[[str], tuple[str, int | None, bool]]


@dataclass(frozen=True)
class Limit:
    """``metric op value`` as declared; ``name`` is the canonical metric, ``at`` a fetch
    depth (compare-ann ``metric@F``), ``exact`` reads diagnose's exact ranking."""

    text: str
    metric: str
    op: str
    value: float
    name: str
    at: int | None = None
    exact: bool = False


class TomlTable:
    """One TOML table under validation: typed reads, and unknown keys named on finish()."""

    def __init__(self, data: Mapping[str, Any], where: str, source: str) -> None:
        self.where, self.source = where, source
        self.raw: dict[str, tuple[str, Any]] = {}
        for key, value in data.items():
            norm = key.replace("-", "_")
            if norm in self.raw:
                raise self.error(key, f"is set twice (as '{self.raw[norm][0]}' and '{key}')")
            self.raw[norm] = (key, value)
        self.used: set[str] = set()

    def error(self, key: str, message: str) -> InputError:
        return InputError(f"{self.source}: {self.where}.{key} {message}")

    def _get(self, name: str) -> tuple[str, Any] | None:
        self.used.add(name)
        return self.raw.get(name)

    def _typed(self, name: str, default: Any, ok: Callable[[Any], bool], what: str) -> Any:
        got = self._get(name)
        if got is None:
            return default
        key, value = got
        if not ok(value):
            raise self.error(key, f"must be {what}, not {value!r}")
        return value

    def str_(self, name: str, default: str | None) -> str | None:
        value: str | None = self._typed(name, default, lambda v: isinstance(v, str), "a string")
        return value

    def required(self, name: str, what: str) -> str:
        """The string ``name``, which must be given: absent or empty, it is refused saying
        what it is (``what``)."""
        value = self.str_(name, None)
        if not value:
            raise self.error(name, f"is required: {what}")
        return value

    def bool_(self, name: str, default: bool | None) -> bool | None:
        value: bool | None = self._typed(name, default, lambda v: isinstance(v, bool), "true/false")
        return value

    def int_(self, name: str, default: int, lo: int | None = None) -> int:
        def ok(v: Any) -> bool:
            return isinstance(v, int) and not isinstance(v, bool) and (lo is None or v >= lo)

        what = "an integer" + ("" if lo is None else f" >= {lo}")
        value: int = self._typed(name, default, ok, what)
        return value

    def count_or_all(self, name: str, default: int | None, lo: int) -> int | None:
        """An integer >= ``lo``, or ``"all"`` (None); ``default`` when the key is absent."""
        got = self._get(name)
        if got is None:
            return default
        key, value = got
        if value == "all":
            return None
        if isinstance(value, int) and not isinstance(value, bool) and value >= lo:
            return value
        raise self.error(key, f'must be an integer >= {lo} or "all", not {value!r}')

    def float_(self, name: str, default: Any, lo: float, hi: float) -> Any:
        def ok(v: Any) -> bool:
            return isinstance(v, int | float) and not isinstance(v, bool) and lo <= v <= hi

        value = self._typed(name, default, ok, f"a number in [{lo:g}, {hi:g}]")
        return None if value is None else float(value)

    def ints(self, name: str, default: list[int]) -> list[int]:
        def ok(v: Any) -> bool:
            return (
                isinstance(v, list)
                and bool(v)
                and all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in v)
            )

        value: list[int] = self._typed(name, default, ok, "a non-empty list of integers >= 1")
        return sorted(set(value))

    def filter_(self, name: str) -> dict[str, Any] | None:
        """A portable metadata filter, as an inline table or its JSON text, checked
        (:func:`indexcheck.filters.parse_filter`) and returned as its canonical object."""
        from ...errors import FilterError
        from ...filters import parse_filter, to_obj

        got = self._get(name)
        if got is None:
            return None
        key, value = got
        if not isinstance(value, str | dict):
            raise self.error(key, f'must be a filter such as {{profile = "ckd"}}, not {value!r}')
        try:
            return to_obj(parse_filter(value))
        except FilterError as err:
            raise self.error(key, f"is not a valid filter: {err}") from None

    def table(self, name: str) -> TomlTable | None:
        got = self._get(name)
        if got is None:
            return None
        key, value = got
        if not isinstance(value, dict):
            raise self.error(key, "must be a table")
        return TomlTable(value, f"{self.where}.{key}", self.source)

    def key_of(self, name: str) -> str:
        return self.raw[name][0] if name in self.raw else name.replace("_", "-")

    def finish(self) -> None:
        unknown = [key for norm, (key, _) in self.raw.items() if norm not in self.used]
        if unknown:
            known = sorted(n.replace("_", "-") for n in self.used)
            hint = did_you_mean(unknown[0], known).removeprefix("; ")
            raise self.error(unknown[0], f"is not a known key; {hint}")


def parse_limits(
    t: TomlTable, resolve: Callable[[str], tuple[str, int | None, bool]]
) -> list[Limit]:
    got = t._get("limits")
    if got is None:
        return []
    key, value = got
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise t.error(key, 'must be a list of strings such as ["hit_at_4 >= 0.9"]')
    out = []
    for text in value:
        m = _LIMIT_RX.match(text)
        number = None
        if m:
            try:
                number = float(m.group(3))
            except ValueError:
                number = None
        if m is None or number is None or not math.isfinite(number):
            raise t.error(key, f"has '{text}'; write 'METRIC OP NUMBER', e.g. 'mrr >= 0.7'")
        try:
            name, at, exact = resolve(m.group(1))
        except InputError as exc:
            raise t.error(key, f"has '{text}': {exc}") from None
        out.append(Limit(text.strip(), m.group(1), m.group(2), number, name, at, exact))
    return out


def with_k(metric: str, k: int, names: Sequence[str]) -> str | None:
    """``hit_at_4`` -> ``hit_at_k`` when k == 4; names as given otherwise (None: unknown)."""
    if metric in names:
        return metric
    m = re.fullmatch(r"(\w+)_at_(\d+)", metric)
    if m and f"{m.group(1)}_at_k" in names:
        if int(m.group(2)) != k:
            raise InputError(f"{metric} asks for k={m.group(2)} but this check runs k={k}")
        return f"{m.group(1)}_at_k"
    return None


def default_limit(text: str, resolve: Callable[[str], tuple[str, int | None, bool]]) -> Limit:
    m = _LIMIT_RX.match(text)
    assert m is not None
    name, at, exact = resolve(m.group(1))
    return Limit(text, m.group(1), m.group(2), float(m.group(3)), name, at, exact)


__all__ = ["OPS", "Limit", "Resolver", "TomlTable", "default_limit", "parse_limits", "with_k"]
