"""A new Qdrant local-mode collection in a NEW folder (``QdrantClient(path=...)``), in the
source's payload layout: LangChain's (``page_content`` + nested ``metadata``) when the
source was LangChain's, else ``text`` beside the metadata keys. Every point keeps its chunk
id in ``payload["chunk_id"]``; the point id is the chunk id when Qdrant accepts it (an
unsigned integer or a UUID), else a UUID5 of it."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from .protocol import Batch, ClientWriter, Source

#: a store's metric name -> Qdrant distance
DISTANCES = {"cosine": "Cosine", "ip": "Dot", "dot": "Dot", "l2": "Euclid", "euclid": "Euclid",
             "manhattan": "Manhattan", "l1": "Manhattan"}  # fmt: skip
ID_FIELD = "chunk_id"
UPSERT_ROWS = 1024


def point_id(cid: str) -> int | str:
    """The Qdrant point id for chunk id ``cid``."""
    if cid.isdigit() and str(int(cid)) == cid and int(cid) < 2**64:
        return int(cid)
    try:
        if str(uuid.UUID(cid)) == cid:
            return cid
    except ValueError:
        pass
    return str(uuid.uuid5(uuid.NAMESPACE_URL, cid))


class QdrantWriter(ClientWriter):
    """Writes collection ``name`` into a local-mode client at the staging folder."""

    def __init__(self, name: str, source: Source) -> None:
        self.name = name
        self.distance = DISTANCES.get(source.metric.lower(), "Cosine")
        self.langchain = source.kind == "qdrant" and source.details.get("layout") == "langchain"
        self._client: Any = None
        self._models: Any = None

    def open(self, folder: Path, dimension: int) -> None:
        from qdrant_client import QdrantClient, models

        self._models = models
        self._client = QdrantClient(path=str(folder))
        params = models.VectorParams(size=dimension, distance=models.Distance(self.distance))
        self._client.create_collection(self.name, vectors_config=params)

    def _payload(self, cid: str, text: str, meta: dict[str, Any]) -> dict[str, Any]:
        if self.langchain:
            return {"page_content": text, "metadata": meta, ID_FIELD: cid}
        return {**meta, "text": text, ID_FIELD: cid}

    def write(self, batch: Batch) -> None:
        m = self._models
        for lo in range(0, len(batch), UPSERT_ROWS):
            hi = lo + UPSERT_ROWS
            points = [
                m.PointStruct(
                    id=point_id(cid), vector=v.tolist(), payload=self._payload(cid, t, md)
                )
                for cid, v, t, md in zip(
                    batch.ids[lo:hi],
                    batch.vectors[lo:hi],
                    batch.texts[lo:hi],
                    batch.metadata[lo:hi],
                    strict=True,
                )  # fmt: skip
            ]
            self._client.upsert(self.name, points=points)

    def proof(self, out: Path) -> str:
        text = "page_content" if self.langchain else "text"
        return f"qdrant:{out}?collection={self.name}&id_field={ID_FIELD}&text_field={text}"


__all__ = ["QdrantWriter", "point_id"]
