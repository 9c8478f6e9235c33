"""The vectors a sampled check-index holds: fresh embeddings by corpus position, stored
vectors by chunk id (fetched in batches), and the corpus read from the store's own texts
when no ``--chunks`` are given."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ....embedders.base import Embedder
from ....errors import DataFileError, DimensionMismatchError
from ....inputs.corpus import Corpus, corpus_from_pairs
from ....stores.base import VectorStore
from ....vectors import normalize_rows as _unit
from ...kit.fetching import fetch_batches

FETCH_BATCH = 256
ITER_BATCH = 1000


class FreshVectors:
    """Fresh embeddings by corpus position, embedding only what was not embedded yet."""

    def __init__(self, corpus: Corpus, embedder: Embedder) -> None:
        self.corpus = corpus
        self.embedder = embedder
        self.vectors: dict[int, np.ndarray] = {}
        self.extra = 0

    def ensure(self, positions: Sequence[int], extra: bool = False) -> None:
        todo = sorted({p for p in positions if p not in self.vectors})
        if not todo:
            return
        vecs = self.embedder.embed([self.corpus.texts[p] for p in todo])
        if vecs.shape[1] != self.embedder.dimension:
            raise DimensionMismatchError("the embedder returned vectors of another dimension")
        vecs = _unit(vecs)
        for p, v in zip(todo, vecs, strict=True):
            self.vectors[p] = v
        if extra:
            self.extra += len(todo)

    def matrix(self) -> tuple[list[int], np.ndarray]:
        pos = sorted(self.vectors)
        d = self.embedder.dimension
        if not pos:
            return pos, np.zeros((0, d), dtype=np.float32)
        return pos, np.stack([self.vectors[p] for p in pos]).astype(np.float32)


class StoredVectors:
    """Stored vectors by chunk id and their stored dimensions (0: the store has none)."""

    def __init__(
        self,
        store: VectorStore,
        corpus: Corpus,
        vectors: dict[str, np.ndarray] | None = None,
        dims: dict[str, int] | None = None,
    ) -> None:
        self.store = store
        self.corpus = corpus
        self.vectors: dict[str, np.ndarray] = vectors if vectors is not None else {}
        self.dims: dict[str, int] = dims if dims is not None else {}

    def fetch(self, positions: Sequence[int]) -> None:
        """Fetch the stored vectors of these corpus positions not fetched yet."""
        ids = self.corpus.ids
        want = [ids[p] for p in positions if ids[p] not in self.dims]
        for _, part, got in fetch_batches(self.store, want, FETCH_BATCH):
            for i, cid in enumerate(part):
                self.dims[cid] = int(got.dims[i]) if got.found[i] else 0
                if got.found[i]:
                    self.vectors[cid] = got.vectors[i]


def load_corpus_from_store(
    store: VectorStore,
) -> tuple[Corpus, dict[str, np.ndarray], dict[str, int]]:
    """(the corpus of the store's own texts, stored vectors by id, stored dimensions)."""
    ids: list[str] = []
    texts: list[str] = []
    vecs: dict[str, np.ndarray] = {}
    dims: dict[str, int] = {}
    metas: list[dict[str, Any]] = []
    for batch in store.iter_vectors(ITER_BATCH):
        metas.extend(batch.metadata or [{} for _ in batch.ids])
        if batch.texts is None:
            raise DataFileError(
                f"{store.spec} holds no chunk texts; pass --chunks with the id and text "
                "of every chunk"
            )
        for i, cid in enumerate(batch.ids):
            text = batch.texts[i]
            if text is None:
                raise DataFileError(
                    f"{store.spec}: vector '{cid}' has no stored text; pass --chunks"
                )
            ids.append(cid)
            texts.append(text)
            vecs[cid] = batch.vectors[i]
            dims[cid] = int(batch.dims[i])
    return corpus_from_pairs(ids, texts, store.spec, metas), vecs, dims
