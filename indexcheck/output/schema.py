"""The version of indexcheck's ``--json`` layout, written first in every JSON result.

It changes (1 -> 2) only when a key is removed, renamed or changes meaning; added keys keep
it. A reader checks ``schema_version`` before it relies on a key.
"""

from __future__ import annotations

from typing import Any

SCHEMA_VERSION = 1


def versioned(payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with ``schema_version`` as its first key (kept when it has one)."""
    if "schema_version" in payload:
        return payload
    return {"schema_version": SCHEMA_VERSION, **payload}


__all__ = ["SCHEMA_VERSION", "versioned"]
