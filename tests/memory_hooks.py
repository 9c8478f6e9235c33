"""Embedders the memory tests pass to the CLI as ``py:tests.memory_hooks:NAME``."""

from __future__ import annotations

from indexcheck.testing import HashEmbedder

#: 128-d hash embedder: wide enough that holding the vectors shows in peak RSS
HASH128 = HashEmbedder(128)
