"""The first import path of the LlamaIndex embedding class: the names of
:mod:`indexcheck.embedders.frameworks.llamaindex` (where it lives, over the embedders),
loaded on first use."""

from typing import TYPE_CHECKING

from ..lazy_names import lazy_names

if TYPE_CHECKING:
    from ..embedders.frameworks.llamaindex import IndexcheckEmbedding, embedding

_HOME = "indexcheck.embedders.frameworks.llamaindex"
__all__ = ["IndexcheckEmbedding", "embedding"]
__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(__all__, _HOME))
