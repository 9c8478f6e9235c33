"""Test-only writers for Pinecone indexes in the loopback emulator.

``langchain(emu, name, texts, metadatas, embeddings, namespace=None)`` builds through
LangChain's ``PineconeVectorStore`` on its defaults (text in ``metadata["text"]``, uuid4
ids, async batches of 32), pointed at the emulator's index host; it returns the ids in build
order. ``upsert(emu, name, ids, vectors, metadatas, namespace="")`` writes given vectors
through the SDK. Both create the index when it does not exist yet.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pinecone import Pinecone

from tests.emulators.pinecone_emulator import PineconeEmulator

FAST = "retries=2&retry_interval=0.001&timeout=5"


def spec(emu: PineconeEmulator, name: str, namespace: str | None = None, extra: str = FAST) -> str:
    """``pinecone:NAME?host=<the emulator's control plane>...``."""
    ns = f"&namespace={namespace}" if namespace else ""
    return f"pinecone:{name}?host={emu.base_url}{ns}" + (f"&{extra}" if extra else "")


def _index(emu: PineconeEmulator, name: str, dim: int, metric: str, pod: bool) -> str:
    if name not in emu.indexes:
        emu.add_index(name, dim, metric, pod=pod)
    return emu.host(name)


def langchain(emu: PineconeEmulator, name: str, texts: list[str],
              metadatas: list[dict[str, Any]] | None, embeddings: Any, *,
              namespace: str | None = None, metric: str = "cosine",
              pod: bool = False) -> list[str]:  # fmt: skip
    from langchain_pinecone import PineconeVectorStore

    dim = len(embeddings.embed_query("dimension probe"))
    host = _index(emu, name, dim, metric, pod)
    store = PineconeVectorStore(embedding=embeddings, host=host, namespace=namespace,
                                pinecone_api_key=emu.api_key)  # fmt: skip
    metas = [dict(m) for m in metadatas] if metadatas is not None else None
    return list(store.add_texts(texts, metadatas=metas))


def upsert(emu: PineconeEmulator, name: str, ids: list[str], vectors: np.ndarray,
           metadatas: list[dict[str, Any]] | None = None, *, namespace: str = "",
           metric: str = "cosine", pod: bool = False) -> None:  # fmt: skip
    host = _index(emu, name, int(vectors.shape[1]), metric, pod)
    index = Pinecone(api_key=emu.api_key).Index(host=host)
    rows = [(vid, vectors[i].tolist(), (metadatas or [{}] * len(ids))[i])
            for i, vid in enumerate(ids)]  # fmt: skip
    for start in range(0, len(rows), 100):
        index.upsert(vectors=rows[start : start + 100], namespace=namespace)
    index.close()
