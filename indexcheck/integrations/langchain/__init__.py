"""LangChain: ``IndexcheckEmbeddings``, the embedding class to build an index with (made on
first use, so importing this package needs no LangChain), and the adapter from the
application to ``diagnose --system`` (:mod:`.system`)."""

from __future__ import annotations

from ..pair import made_on_first_use
from .embeddings import _class, embeddings

__getattr__ = made_on_first_use(__name__, "IndexcheckEmbeddings", _class)
__all__ = ["IndexcheckEmbeddings", "embeddings"]
