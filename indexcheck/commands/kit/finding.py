"""A finding: what check-index and diff-index report besides their rows, one type for both."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Finding:
    """A fault (severity ``error``), a ``warning`` or an ``info`` list, with the chunks it
    concerns."""

    kind: str
    severity: str
    message: str
    chunk_ids: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
