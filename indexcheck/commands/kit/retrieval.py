"""Retrieval as an application does it: embed questions, ask the store for ``fetch`` results.

Scores stay on the backend's own scale; callers compare them through the direction
(``higher_is_better``) that the score-scale probe measured.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...embedders import for_queries
from ...embedders.base import Embedder
from ...errors import DimensionMismatchError
from ...inputs.corpus import Corpus
from ...inputs.questions import Question
from ...stores.base import VectorStore

DEFAULT_REFUSAL_PATTERN = r"(^|[#/_:-])(refusal|topic-not-covered)"


@dataclass
class Retrieved:
    """``D`` float32 (q, fetch) backend scores (NaN where missing), ``I`` object (q, fetch)
    ids (None where missing), ``vectors`` float32 (q, d) the embedded questions."""

    D: np.ndarray
    I: np.ndarray
    vectors: np.ndarray

    def rank_of(self, row: int, ids: Sequence[str]) -> int | None:
        """0-based rank of the first of ``ids`` in row ``row``, or None."""
        wanted = set(ids)
        for r, cid in enumerate(self.I[row]):
            if cid in wanted:
                return r
        return None


def retrieve(
    store: VectorStore, embedder: Embedder, questions: Sequence[Question], fetch: int
) -> Retrieved:
    """Embed the questions and query the store for ``fetch`` results each (one batch)."""
    info = store.info()
    if info.dimension and info.dimension != embedder.dimension:
        raise DimensionMismatchError(
            f"the store holds {info.dimension}-d vectors but {embedder.model_id} gives "
            f"{embedder.dimension}-d; pass the --embedder the index was built with"
        )
    vectors = for_queries(embedder).embed([q.question for q in questions])
    D, I = store.query(vectors, fetch)
    return Retrieved(np.asarray(D, dtype=np.float32), I, vectors)


def marked_refusals(corpus: Corpus | None) -> list[str]:
    """Chunk ids whose ``refusal`` column (in the chunks file) is truthy."""
    if corpus is None or corpus.metadata is None:
        return []
    return [
        cid
        for cid, meta in zip(corpus.ids, corpus.metadata, strict=True)
        if str(meta.get("refusal", "")).strip().lower() in ("1", "true", "yes")
    ]


def refusal_ids(
    candidates: Sequence[str], pattern: str | None, marked: Sequence[str] = ()
) -> set[str]:
    """Chunk ids that are refusal ("topic not covered") chunks: matched by ``pattern`` or
    marked (e.g. a ``refusal: true`` column in the chunks file)."""
    found = set(marked)
    if pattern:
        rx = re.compile(pattern)
        found.update(c for c in candidates if rx.search(c))
    return found
