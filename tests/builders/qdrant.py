"""Test-only writer for Qdrant local-mode collections (qdrant-client ``path=`` storage)."""

from __future__ import annotations

import pathlib
import uuid
from typing import Any

import numpy as np

DISTANCES = {"cosine": "Cosine", "dot": "Dot", "ip": "Dot", "l2": "Euclid", "l1": "Manhattan"}


def build(
    root: pathlib.Path,
    ids: list[str],
    vectors: np.ndarray,
    texts: list[str] | None,
    metric: str = "cosine",
    *,
    collection: str = "docs",
    id_mode: str = "int",
    vector_name: str | None = None,
    extra_vectors: dict[str, int] | None = None,
    payload: list[dict[str, Any]] | None = None,
) -> str:
    """Write ``root/qdrant`` holding one collection of exactly these rows; return its spec.

    ``metric``: cosine | dot (ip) | l2 (Euclid) | l1 (Manhattan). Qdrant itself
    unit-normalises vectors of a Cosine collection when storing them.
    ``id_mode``: ``int`` (ids are decimal strings used as point ids), ``uuid`` (ids are
    UUID strings used as point ids) or ``payload`` (point ids 0..n-1, the id stored in
    ``payload["doc_id"]``; the spec gets ``&id_field=doc_id``).
    ``vector_name`` stores the vectors as a named vector (spec gets ``&vector=``);
    ``extra_vectors`` adds more named vectors {name: dim} filled with ones.
    """
    from qdrant_client import QdrantClient, models

    path = root / "qdrant"
    client = QdrantClient(path=str(path))
    try:
        dim = int(vectors.shape[1])
        params = models.VectorParams(size=dim, distance=models.Distance(DISTANCES[metric]))
        config: Any = params
        if vector_name is not None or extra_vectors:
            config = {vector_name or "": params}
            for name, d in (extra_vectors or {}).items():
                config[name] = models.VectorParams(size=d, distance=models.Distance.DOT)
        client.create_collection(collection, vectors_config=config)
        points = []
        for i, vid in enumerate(ids):
            body: dict[str, Any] = dict(payload[i]) if payload else {}
            if texts is not None:
                body["text"] = texts[i]
            if id_mode == "int":
                pid: int | str = int(vid)
            elif id_mode == "uuid":
                pid = str(uuid.UUID(vid))
            else:
                pid = i
                body["doc_id"] = vid
            vec: Any = vectors[i].astype(np.float32).tolist()
            if isinstance(config, dict):
                vec = {vector_name or "": vec}
                for name, d in (extra_vectors or {}).items():
                    vec[name] = [1.0] * d
            points.append(models.PointStruct(id=pid, vector=vec, payload=body))
        client.upsert(collection, points=points)
    finally:
        client.close()
    spec = f"qdrant:{path}?collection={collection}"
    if vector_name is not None:
        spec += f"&vector={vector_name}"
    if id_mode == "payload":
        spec += "&id_field=doc_id"
    return spec
