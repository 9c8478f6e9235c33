"""The version of indexcheck's ``--json`` layout, written first in every JSON result.

It changes (1 -> 2) only when a key is removed, renamed or changes meaning; added keys keep
it. A reader checks ``schema_version`` before it relies on a key.
"""

from __future__ import annotations

from typing import Any

#: 2: every rank is 1-based (diagnose's exact_rank/ann_rank, sweep-threshold's
#: expected_rank, ci's per-question ranks were 0-based in 1)
SCHEMA_VERSION = 2


def versioned(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with ``schema_version`` as its first key (kept when it has one)."""
    if "schema_version" in payload:
        return payload
    return {"schema_version": SCHEMA_VERSION, **payload}


__all__ = ["SCHEMA_VERSION", "versioned"]
