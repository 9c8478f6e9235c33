"""Where indexcheck keeps its caches (probed scales, ground-truth vectors)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$INDEXCHECK_CACHE_DIR``, else ``$XDG_CACHE_HOME/indexcheck``, else
    ``~/.cache/indexcheck``."""
    root = os.environ.get("INDEXCHECK_CACHE_DIR")
    if root:
        return Path(root).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(xdg).expanduser() / "indexcheck"
