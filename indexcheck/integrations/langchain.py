"""The import path ``indexcheck.integrations.langchain`` of the LangChain embedding class.

It lives in :mod:`indexcheck.embedders.frameworks.langchain` (it builds on the embedders);
this module only names it there and loads that module on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_names import lazy_names

if TYPE_CHECKING:
    from ..embedders.frameworks.langchain import IndexcheckEmbeddings, embeddings

__all__ = ["IndexcheckEmbeddings", "embeddings"]
_HOME = "indexcheck.embedders.frameworks.langchain"
__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(__all__, _HOME))
