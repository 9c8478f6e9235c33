"""Test-only writer: a Chroma PersistentClient directory holding one collection."""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np

METRICS = ("cosine", "l2", "ip")


def build(
    root: pathlib.Path,
    ids: list[str],
    vectors: np.ndarray,
    texts: list[str] | None,
    metric: str = "cosine",
    *,
    collection: str = "docs",
    legacy_metadata: bool = False,
    metadatas: list[dict[str, Any]] | None = None,
    default_ef: bool = False,
    **kw: Any,
) -> str:
    """Write ``root/chroma`` with one collection of the given rows; returns its spec.

    ``metric`` is the Chroma space (cosine, l2, ip); set through the collection
    ``configuration`` or, with ``legacy_metadata=True``, the old ``hnsw:space`` metadata.
    ``default_ef=True`` records Chroma's default embedding function in the collection
    (it is never called: embeddings are given).
    """
    import chromadb
    from chromadb.config import Settings

    if metric not in METRICS:
        raise ValueError(f"chroma metric must be one of {METRICS}, got {metric!r}")
    path = pathlib.Path(root) / "chroma"
    client = chromadb.PersistentClient(
        path=str(path), settings=Settings(anonymized_telemetry=False)
    )
    try:
        ef: dict[str, Any] = {} if default_ef else {"embedding_function": None}
        if legacy_metadata:
            col = client.create_collection(collection, metadata={"hnsw:space": metric}, **ef)
        else:
            col = client.create_collection(
                collection, configuration={"hnsw": {"space": metric}}, **ef
            )
        vecs = np.asarray(vectors, dtype=np.float32)
        step = max(1, min(5000, client.get_max_batch_size()))
        for s in range(0, len(ids), step):
            e = s + step
            col.add(
                ids=ids[s:e],
                embeddings=vecs[s:e],
                documents=texts[s:e] if texts is not None else None,
                metadatas=metadatas[s:e] if metadatas is not None else None,
            )
    finally:
        client.close()
    return f"chroma:{path}?collection={collection}"
