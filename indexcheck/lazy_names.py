"""Names a module offers from another module, loaded on first use (PEP 562).

``__getattr__, __dir__ = lazy_names(__name__, {"name": "indexcheck.module", ...})`` makes
``from this_module import name`` load ``indexcheck.module`` only then, and keeps the value
in the module for the next look-up: the import paths kept for users when a class or function
moved (:mod:`indexcheck.assertions`, :mod:`indexcheck.integrations.langchain`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_names(
    module: str, table: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``module`` for the names of ``table``."""

    def __getattr__(name: str) -> Any:
        home = table.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(import_module(home), name)
        setattr(sys.modules[module], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[module]), *table})

    return __getattr__, __dir__


__all__ = ["lazy_names"]
