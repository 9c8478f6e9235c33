"""``st:NAME_OR_PATH``: any sentence-transformers model (optional extra ``st``).

Loads with ``local_files_only`` semantics when ``HF_HUB_OFFLINE=1`` is set; indexcheck
itself never downloads weights.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import MissingDependencyError, ModelNotInstalledError
from ..base import BaseEmbedder


class SentenceTransformerEmbedder(BaseEmbedder):
    """A sentence-transformers model; vectors as the model returns them (normalised
    when the model's pipeline normalises)."""

    batch_size = 64

    def __init__(self, name: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise MissingDependencyError(
                "the st: embedder", "st", "sentence-transformers"
            ) from None
        try:
            self._model = SentenceTransformer(name, device="cpu")
        except Exception as exc:  # the library raises OSError/ValueError/HF errors
            raise ModelNotInstalledError(
                f"cannot load sentence-transformers model '{name}': {exc}"
            ) from None
        self.model_id = f"st:{name}"
        dim = self._model.get_sentence_embedding_dimension()
        self.dimension = int(dim) if dim else 0

    def _embed_batch(self, texts: list[Any]) -> tuple[np.ndarray, int]:
        vecs = self._model.encode(list(texts), batch_size=len(texts), convert_to_numpy=True)
        tokenizer = getattr(self._model, "tokenizer", None)
        tokens = 0
        if tokenizer is not None:
            tokens = sum(len(ids) for ids in tokenizer(list(texts))["input_ids"])
        return np.asarray(vecs, dtype=np.float32), tokens
