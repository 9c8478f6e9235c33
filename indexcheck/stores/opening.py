"""A store from a spec or as given, for the length of a ``with`` block.

What is opened here from a spec is closed when the block ends, also when it raises; a store
the caller opened is passed through and left open (the rule of every public function).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from . import StoreOptions, open_store
from .base import VectorStore


@contextmanager
def opened_store(store: str | VectorStore, trust_pickle: bool = False) -> Iterator[VectorStore]:
    """``store`` opened from its spec (``faiss:./index``) and closed at the end, or as given."""
    if not isinstance(store, str):
        yield store
        return
    opened = open_store(store, StoreOptions(trust_pickle=trust_pickle))
    try:
        yield opened
    finally:
        opened.close()


__all__ = ["opened_store"]
