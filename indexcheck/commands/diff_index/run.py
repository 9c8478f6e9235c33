"""diff-index's manifest facts from the opened stores, for the api (and so the CLI): the
old index described (the manifest describes the new one as its store)."""

from __future__ import annotations

from typing import Any

from ...stores.base import VectorStore


def described(old: VectorStore) -> dict[str, Any]:
    """The old index for the manifest's ``old_store``: its spec, count and fingerprint."""
    return {"spec": old.spec, "count": old.info().count, "fingerprint": old.fingerprint()}


__all__ = ["described"]
