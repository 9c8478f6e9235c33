"""A new Chroma collection in a NEW persist folder (never the source's): documents are the
texts and metadatas the source's metadata, the layout LangChain's and LlamaIndex's Chroma
stores read; the collection's space is the source's (or its metric's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .protocol import Batch, ClientWriter, Source

#: a store's metric name -> Chroma space
SPACES = {"cosine": "cosine", "ip": "ip", "dot": "ip", "l2": "l2", "euclid": "l2"}
#: rows sent to Chroma at once (below its max batch size)
ADD_ROWS = 2048


def _scalar(v: Any) -> Any:
    return v if isinstance(v, str | int | float | bool) else json.dumps(v, default=str)


class ChromaWriter(ClientWriter):
    """Writes collection ``name`` into a PersistentClient at the staging folder."""

    def __init__(self, name: str, source: Source) -> None:
        self.name = name
        self.space = SPACES.get(source.metric.lower(), "l2")
        self._client: Any = None
        self._col: Any = None

    def open(self, folder: Path, dimension: int) -> None:
        import chromadb

        self._client = chromadb.PersistentClient(path=str(folder))
        self._col = self._client.create_collection(
            self.name, configuration={"hnsw": {"space": self.space}}, embedding_function=None
        )

    def write(self, batch: Batch) -> None:
        metas = [{k: _scalar(v) for k, v in m.items() if v is not None} for m in batch.metadata]
        for lo in range(0, len(batch), ADD_ROWS):
            hi = lo + ADD_ROWS
            self._col.add(
                ids=batch.ids[lo:hi],
                embeddings=batch.vectors[lo:hi],
                documents=batch.texts[lo:hi],
                metadatas=[m or None for m in metas[lo:hi]],
            )

    def proof(self, out: Path) -> str:
        return f"chroma:{out}?collection={self.name}"


__all__ = ["ChromaWriter"]
