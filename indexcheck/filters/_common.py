"""Small pieces the translators share: lazy SDK imports, number literals, errors."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import numpy as np

from indexcheck.errors import FilterError, MissingDependencyError
from indexcheck.filters.grammar import Cond, Op


def need(module: str, what: str, extra: str | None, package: str) -> ModuleType:
    """Import ``module`` or raise MissingDependencyError naming the pip command."""
    try:
        return importlib.import_module(module)
    except ImportError:
        err = MissingDependencyError(what, extra or package, package)
        if extra is None:  # no indexcheck extra carries it: name the package itself
            err.args = (f"{what} needs the '{package}' package; run: pip install {package}",)
        raise err from None


def cannot(store: str, cond: Cond | None, why: str) -> FilterError:
    """The error for a filter part a store cannot express, naming operator and store."""
    part = f"'{cond.op.value}' on '{cond.field}'" if cond is not None else "this filter"
    return FilterError(f"the {store} store cannot express {part}: {why}")


def number_literal(value: int | float) -> str:
    """A decimal literal without exponent that reads back as exactly ``value``."""
    if isinstance(value, int):
        return str(value)
    return np.format_float_positional(value, trim="-", unique=True)


def scalar_literal(value: Any, quote: Any) -> str:
    """``true``/``false``, a number literal, or ``quote(value)`` for a string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return number_literal(value)
    return str(quote(value))


SQL_OPS = {Op.EQ: "=", Op.NE: "!=", Op.GT: ">", Op.GTE: ">=", Op.LT: "<", Op.LTE: "<="}
