"""A LangChain ``Embeddings`` over any indexcheck embedder (default ``minilm``).

::

    from langchain_community.vectorstores import FAISS
    from indexcheck.integrations.langchain import IndexcheckEmbeddings

    store = FAISS.from_documents(docs, IndexcheckEmbeddings())   # or ("st:NAME")
    store.save_local("kb")
    # indexcheck check-index --store faiss:kb --trust-pickle   (default embedder: minilm)

``langchain-core`` is imported when this class is first used
(``pip install 'indexcheck[langchain]'``).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from ..pair import EmbedderSpec, Pair, _framework, made_on_first_use

if TYPE_CHECKING:
    IndexcheckEmbeddings: type  # made on first use, by __getattr__ below


@cache
def _class() -> type:
    core = _framework("langchain_core.embeddings", __name__, "langchain", "langchain-core")
    base = core.Embeddings

    class IndexcheckEmbeddings(base):  # type: ignore[misc, valid-type]
        """LangChain ``Embeddings``: ``embed_documents`` with the spec's document side
        (its ``prefix``), ``embed_query`` with its query side (``query_prefix``)."""

        def __init__(self, embedder: EmbedderSpec = None) -> None:
            self._pair = Pair(embedder)

        @property
        def model_id(self) -> str:
            """The indexcheck model id (pass its spec as ``--embedder`` to check)."""
            return self._pair.model_id

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return self._pair.embed_documents(texts)

        def embed_query(self, text: str) -> list[float]:
            return self._pair.embed_query(text)

        def __repr__(self) -> str:
            return f"IndexcheckEmbeddings({self.model_id!r})"

    IndexcheckEmbeddings.__qualname__ = "IndexcheckEmbeddings"
    return IndexcheckEmbeddings


def embeddings(embedder: EmbedderSpec = None) -> Any:
    """An ``IndexcheckEmbeddings`` for ``embedder`` (a spec, default ``minilm``, or an
    opened indexcheck embedder)."""
    return _class()(embedder)


__getattr__ = made_on_first_use(__name__, "IndexcheckEmbeddings", _class)
__all__ = ["IndexcheckEmbeddings", "embeddings"]
