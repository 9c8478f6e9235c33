"""What one ``indexcheck ci`` run is given: the ``[ci]`` table (or its file), the baseline
and whether a baseline of another store may be compared; built once at the face."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..kit.settings import Settings
from .config import CiConfig


@dataclass(frozen=True)
class CiSettings(Settings):
    """The options of ``run_ci``, as :func:`indexcheck.run_ci` receives them."""

    #: the parsed ``[ci]`` table, or the path of the TOML file holding it
    config: CiConfig | str | Path
    #: an accepted earlier run: its parsed JSON (ci or diagnose), its path, or None
    baseline: dict[str, Any] | str | Path | None = None
    #: compare with a baseline measured on another store or embedder (reported)
    baseline_any_store: bool = False
