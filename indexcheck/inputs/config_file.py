"""Where indexcheck's option defaults come from: ``indexcheck.toml``, or the
``[tool.indexcheck]`` table of ``pyproject.toml``; and the did-you-mean every config table
gives for a key it does not know.

Found in the working directory, ``indexcheck.toml`` first (as ruff prefers ``ruff.toml``);
``pyproject.toml`` counts only when it has a ``[tool.indexcheck]`` table. A path passed as
``--config`` is read as what its name says: ``pyproject.toml`` means its
``[tool.indexcheck]`` table, any other name the whole file.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .files import read_toml

CONFIG_FILE = "indexcheck.toml"
PYPROJECT = "pyproject.toml"


def did_you_mean(key: str, known: Iterable[str]) -> str:
    """``; did you mean NAME?`` for the closest known name, else ``; known keys: ...``."""
    names = sorted(set(known))
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else f"; known keys: {', '.join(names)}"


def _tool_table(path: Path) -> dict[str, Any] | None:
    tool = read_toml(path).get("tool")
    table = tool.get("indexcheck") if isinstance(tool, dict) else None
    return table if isinstance(table, dict) else None


def find_config(folder: Path | None = None) -> Path | None:
    """``indexcheck.toml`` in ``folder`` (default: the working directory), else its
    ``pyproject.toml`` when that has a ``[tool.indexcheck]`` table, else None."""
    base = folder or Path()
    own = base / CONFIG_FILE
    if own.is_file():
        return own
    pyproject = base / PYPROJECT
    if pyproject.is_file() and _tool_table(pyproject) is not None:
        return pyproject
    return None


def read_config(path: Path) -> dict[str, Any]:
    """The config tables in ``path``: the ``[tool.indexcheck]`` table of a ``pyproject.toml``
    (empty when it has none), the whole document of any other file. Reading errors are the
    caller's (``OSError``, ``tomllib.TOMLDecodeError``)."""
    if path.name == PYPROJECT:
        return _tool_table(path) or {}
    return read_toml(path)


__all__ = ["CONFIG_FILE", "PYPROJECT", "did_you_mean", "find_config", "read_config"]
