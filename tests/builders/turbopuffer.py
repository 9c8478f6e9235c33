"""Test-only writers for turbopuffer namespaces in the loopback emulator.

``langchain(emu, ns, texts, metadatas, embeddings)`` builds through LangChain's
``TurbopufferVectorStore`` on its defaults (``cosine_distance``, uuid4 ids, text in the
``content`` attribute, metadata as top-level attributes) and returns the ids in build order.
``upsert(emu, ns, ids, vectors, metadatas, texts=None)`` writes through the SDK as its docs
show (``write(upsert_rows=[{"id", "vector", "text", ...}], distance_metric=...)``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import turbopuffer

from tests.emulators.turbopuffer_emulator import TurbopufferEmulator

FAST = "retries=2&retry_interval=0.001&timeout=5"


def spec(emu: TurbopufferEmulator, ns: str, extra: str = FAST) -> str:
    """``turbopuffer:NS?base_url=<the emulator>...``."""
    return f"turbopuffer:{ns}?base_url={emu.base_url}" + (f"&{extra}" if extra else "")


def client(emu: TurbopufferEmulator) -> Any:
    return turbopuffer.Turbopuffer(api_key=emu.api_key, base_url=emu.base_url)


def langchain(emu: TurbopufferEmulator, ns: str, texts: list[str],
              metadatas: list[dict[str, Any]] | None, embeddings: Any, *,
              metric: str = "cosine_distance") -> list[str]:  # fmt: skip
    from langchain_turbopuffer import TurbopufferVectorStore

    tp = client(emu)
    store = TurbopufferVectorStore(embedding=embeddings, namespace=tp.namespace(ns),
                                   distance_metric=metric)  # fmt: skip
    metas = [dict(m) for m in metadatas] if metadatas is not None else None
    ids = list(store.add_texts(texts, metadatas=metas))
    tp.close()
    return ids


def upsert(emu: TurbopufferEmulator, ns: str, ids: list[str], vectors: np.ndarray,
           metadatas: list[dict[str, Any]] | None = None, *, texts: list[str] | None = None,
           metric: str = "cosine_distance") -> None:  # fmt: skip
    tp = client(emu)
    rows = []
    for i, vid in enumerate(ids):
        row: dict[str, Any] = {"id": vid, "vector": vectors[i].tolist()}
        if texts is not None:
            row["text"] = texts[i]
        row.update((metadatas or [{}] * len(ids))[i])
        rows.append(row)
    for start in range(0, len(rows), 500):
        tp.namespace(ns).write(upsert_rows=rows[start : start + 500], distance_metric=metric)
    tp.close()
