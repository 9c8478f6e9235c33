"""Test-only: the corpus and the embedding wrappers the framework-built indexes use.

The corpus is the first ``N_BASE`` fixture chunks with two repeated paragraphs inserted
(``REPEATS``): the second copy of a paragraph gets its own id, as a document that quotes
boilerplate does. Metadata per chunk: ``file`` and ``title`` (the heading line).

Three ways to turn texts into vectors, all over indexcheck's offline ``minilm`` model:

- ``correct``: every text embedded as it is;
- ``shifted``: a positional cache that embeds the de-duplicated texts and hands out the
  vectors by position (``shifted_vectors``): from the first repeat on, each chunk gets the
  next unique text's vector (+1), from the second repeat on the one after that (+2); the
  last positions, past the de-duplicated list, are embedded on their own;
- ``foreign``: a fixed random rotation of the model's space, standing for another model of
  the same dimension.

``LangChainEmbeddings`` and ``LlamaIndexEmbedding`` wrap one of these for the frameworks;
both take the whole batch at once so the positional cache sees the build order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_CHUNKS = ROOT / "fixtures" / "chunks.jsonl"
N_BASE = 48
# (insert before base position, copy of base position): the repeats land at corpus
# positions 14 and 31 and repeat the paragraphs at positions 3 and 9
REPEATS = ((14, 3), (30, 9))
MODES = ("correct", "shifted", "foreign")


@dataclass(frozen=True)
class FrameworkCorpus:
    """Chunks in build order, with metadata; ``repeat_of`` maps a repeat's position to the
    position of the first copy."""

    ids: list[str]
    texts: list[str]
    metadata: list[dict[str, str]]
    repeat_of: dict[int, int]


@lru_cache(maxsize=1)
def framework_corpus() -> FrameworkCorpus:
    rows = [json.loads(line) for line in FIXTURE_CHUNKS.read_text().splitlines() if line]
    base = rows[:N_BASE]
    ids: list[str] = []
    texts: list[str] = []
    meta: list[dict[str, str]] = []
    repeat_of: dict[int, int] = {}
    inserts = dict(REPEATS)
    for i, row in enumerate(base):
        if i in inserts:
            src = base[inserts[i]]
            ids.append(f"{src['id']}~again-{i}")
            texts.append(src["text"])
            meta.append({"file": src["file"], "title": src["text"].split("\n", 1)[0]})
        ids.append(row["id"])
        texts.append(row["text"])
        meta.append({"file": row["file"], "title": row["text"].split("\n", 1)[0]})
    first: dict[str, int] = {}
    for p, t in enumerate(texts):
        if t in first:
            repeat_of[p] = first[t]
        else:
            first[t] = p
    return FrameworkCorpus(ids, texts, meta, repeat_of)


@lru_cache(maxsize=1)
def _model() -> Any:
    from indexcheck.embedders import open_embedder

    return open_embedder("minilm")


@lru_cache(maxsize=1)
def _rotation(d: int) -> np.ndarray:
    rng = np.random.default_rng(1234)
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return q.astype(np.float32)


_MEMO: dict[str, np.ndarray] = {}


def embed_correct(texts: list[str]) -> np.ndarray:
    """float32 (n, 384), unit rows: minilm on each text (memoised per text: every build
    of the session embeds the same corpus)."""
    todo = [t for t in dict.fromkeys(texts) if t not in _MEMO]
    if todo:
        for t, v in zip(todo, _model().embed(todo), strict=True):
            _MEMO[t] = np.asarray(v, dtype=np.float32)
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    return np.stack([_MEMO[t] for t in texts])


def shifted_vectors(texts: list[str], embed: Any = embed_correct) -> np.ndarray:
    """The positional-cache bug: vectors of the de-duplicated texts, handed out by position.

    Position i gets the i-th unique text's vector; positions past the unique list are
    embedded on their own. float32 (n, d)."""
    seen: dict[str, int] = {}
    unique: list[str] = []
    for t in texts:
        if t not in seen:
            seen[t] = len(unique)
            unique.append(t)
    vecs = embed(unique)
    out = np.empty((len(texts), vecs.shape[1]), dtype=np.float32)
    for i, t in enumerate(texts):
        out[i] = vecs[i] if i < len(unique) else embed([t])[0]
    return out


def embed_foreign(texts: list[str]) -> np.ndarray:
    return embed_correct(texts) @ _rotation(384)


def vectors_for(mode: str, texts: list[str]) -> np.ndarray:
    if mode == "correct":
        return embed_correct(texts)
    if mode == "shifted":
        return shifted_vectors(texts)
    if mode == "foreign":
        return embed_foreign(texts)
    raise ValueError(f"mode must be one of {MODES}")


def langchain_embeddings(mode: str) -> Any:
    """A ``langchain_core.embeddings.Embeddings`` over ``vectors_for(mode, ...)``."""
    from langchain_core.embeddings import Embeddings

    class _Wrapped(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return vectors_for(mode, list(texts)).tolist()

        def embed_query(self, text: str) -> list[float]:
            return embed_correct([text])[0].tolist()

    return _Wrapped()


def llamaindex_embedding(mode: str) -> Any:
    """A LlamaIndex ``BaseEmbedding`` over ``vectors_for(mode, ...)``; one batch for all
    texts so the positional cache sees the whole build."""
    from llama_index.core.base.embeddings.base import BaseEmbedding

    class _Wrapped(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return embed_correct([query])[0].tolist()

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return vectors_for(mode, [text])[0].tolist()

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return vectors_for(mode, list(texts)).tolist()

    return _Wrapped(model_name=f"minilm-{mode}", embed_batch_size=2048)
