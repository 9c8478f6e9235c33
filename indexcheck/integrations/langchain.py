"""The first import path of the LangChain embedding class: the names of
:mod:`indexcheck.embedders.frameworks.langchain` (where it lives, over the embedders),
loaded on first use."""

from typing import TYPE_CHECKING

from ..lazy_names import lazy_names

if TYPE_CHECKING:
    from ..embedders.frameworks.langchain import IndexcheckEmbeddings, embeddings

_HOME = "indexcheck.embedders.frameworks.langchain"
__all__ = ["IndexcheckEmbeddings", "embeddings"]
__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(__all__, _HOME))
