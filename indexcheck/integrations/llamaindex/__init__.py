"""LlamaIndex: ``IndexcheckEmbedding``, the embedding class to build an index with (made on
first use, so importing this package needs no LlamaIndex), and the adapter from the
application to ``diagnose --system`` (:mod:`.system`)."""

from __future__ import annotations

from ..pair import made_on_first_use
from .embeddings import _class, embedding

__getattr__ = made_on_first_use(__name__, "IndexcheckEmbedding", _class)
__all__ = ["IndexcheckEmbedding", "embedding"]
