"""A LlamaIndex ``BaseEmbedding`` over any indexcheck embedder (default ``minilm``).

::

    from llama_index.core import VectorStoreIndex
    from indexcheck.integrations.llamaindex import IndexcheckEmbedding

    index = VectorStoreIndex(nodes, embed_model=IndexcheckEmbedding())   # or ("st:NAME")
    index.storage_context.persist("kb")
    # indexcheck check-index --store llamaindex:kb   (default embedder: minilm)

``llama-index-core`` is imported when this class is first used
(``pip install 'indexcheck[llamaindex]'``).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from ..pair import EmbedderSpec, Pair, _framework, made_on_first_use

if TYPE_CHECKING:
    IndexcheckEmbedding: type  # made on first use, by __getattr__ below


def _llama_index(module: str) -> Any:
    return _framework(module, __name__, "llamaindex", "llama-index-core")


@cache
def _class() -> type:
    base = _llama_index("llama_index.core.base.embeddings.base").BaseEmbedding
    private = _llama_index("llama_index.core.bridge.pydantic").PrivateAttr

    class IndexcheckEmbedding(base):  # type: ignore[misc, valid-type]
        """LlamaIndex ``BaseEmbedding``: texts with the spec's document side (its
        ``prefix``), queries with its query side (``query_prefix``)."""

        _pair: Any = private()

        def __init__(
            self, embedder: EmbedderSpec = None, embed_batch_size: int = 64, **kw: Any
        ) -> None:
            pair = Pair(embedder)
            kw.setdefault("model_name", pair.model_id)
            super().__init__(embed_batch_size=embed_batch_size, **kw)
            self._pair = pair

        @classmethod
        def class_name(cls) -> str:
            return "IndexcheckEmbedding"

        @property
        def model_id(self) -> str:
            """The indexcheck model id (pass its spec as ``--embedder`` to check)."""
            return str(self._pair.model_id)

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._pair.embed_query(query)  # type: ignore[no-any-return]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._pair.embed_documents([text])[0]  # type: ignore[no-any-return]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return self._pair.embed_documents(texts)  # type: ignore[no-any-return]

    IndexcheckEmbedding.__qualname__ = "IndexcheckEmbedding"
    return IndexcheckEmbedding


def embedding(embedder: EmbedderSpec = None, **kw: Any) -> Any:
    """An ``IndexcheckEmbedding`` for ``embedder`` (a spec, default ``minilm``, or an
    opened indexcheck embedder); ``kw`` go to ``BaseEmbedding`` (``embed_batch_size``)."""
    return _class()(embedder, **kw)


__getattr__ = made_on_first_use(__name__, "IndexcheckEmbedding", _class)
__all__ = ["IndexcheckEmbedding", "embedding"]
