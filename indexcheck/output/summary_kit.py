"""What every terminal summary shares: the row cap, the number format, the section shape."""

from __future__ import annotations

from typing import Any

from .model import Section

SHOWN_ROWS = 20


def _f4(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def summary(verdict: str | None = None, *blocks: Any) -> Section:
    """A terminal-only section of ``blocks``."""
    return Section("", verdict, list(blocks), report=False, terminal=True)
