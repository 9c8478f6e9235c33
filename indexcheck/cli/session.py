"""Opening the inputs a command names: store, embedder (with its hash cache), chunks."""

from __future__ import annotations

from pathlib import Path

from ..corpus import Corpus, load_chunks
from ..embedders import open_embedder
from ..embedders.base import Embedder
from ..embedders.cache import CachedEmbedder, EmbeddingCache
from ..stores import StoreOptions, VectorStore, open_store


def open_store_from_cli(spec: str, trust_pickle: bool = False) -> VectorStore:
    return open_store(spec, StoreOptions(trust_pickle=trust_pickle))


def open_embedder_cached(spec: str | None, cache_path: Path | None) -> Embedder:
    """The embedder behind a hash-keyed cache: each distinct text is embedded once."""
    inner = open_embedder(spec)
    cache = EmbeddingCache(cache_path) if cache_path is not None else None
    return CachedEmbedder(inner, cache)


def open_corpus(path: Path | None, id_column: str, text_column: str) -> Corpus | None:
    return None if path is None else load_chunks(path, id_column, text_column)
