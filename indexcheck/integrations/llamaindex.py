"""The import path ``indexcheck.integrations.llamaindex`` of the LlamaIndex embedding class.

It lives in :mod:`indexcheck.embedders.frameworks.llamaindex` (it builds on the embedders);
this module only names it there and loads that module on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_names import lazy_names

if TYPE_CHECKING:
    from ..embedders.frameworks.llamaindex import IndexcheckEmbedding, embedding

__all__ = ["IndexcheckEmbedding", "embedding"]
_HOME = "indexcheck.embedders.frameworks.llamaindex"
__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(__all__, _HOME))
