"""Test-only writer for Upstash Vector: upserts rows into an emulated index via the real SDK.

``build(root, ids, vectors, texts, metric="cosine", emulator=None, namespace="",
text_in="data", params="")`` creates a fresh index in ``emulator`` (default: one shared
emulator started on first use, whose token is put in ``UPSTASH_VECTOR_REST_TOKEN``) and
returns ``upstash:<url>?...``. ``root`` is unused (nothing is written to disk). Texts go
in the ``data`` field (``text_in="data"``) or in ``metadata["text"]`` (``"metadata"``).
Metrics: cosine, l2/euclidean, ip/dot (or Upstash's own COSINE, EUCLIDEAN, DOT_PRODUCT).
"""

from __future__ import annotations

import atexit
import itertools
import os
import pathlib
from typing import Any
from urllib.parse import urlencode

import numpy as np
from upstash_vector import Index

from tests.emulators.upstash_emulator import UpstashEmulator

METRICS = {
    "cosine": "COSINE",
    "l2": "EUCLIDEAN",
    "euclidean": "EUCLIDEAN",
    "ip": "DOT_PRODUCT",
    "dot": "DOT_PRODUCT",
}
UPSERT_BATCH = 1000  # Upstash's recommended maximum per upsert request
TEST_PARAMS = "retries=2&retry_interval=0.001&timeout=5"

_names = itertools.count()
_shared: UpstashEmulator | None = None


def shared_emulator() -> UpstashEmulator:
    """One emulator for the whole test session; sets UPSTASH_VECTOR_REST_TOKEN to its token."""
    global _shared
    if _shared is None:
        _shared = UpstashEmulator(token="shared-emulator-token").start()
        atexit.register(_shared.stop)
    os.environ["UPSTASH_VECTOR_REST_TOKEN"] = _shared.token
    return _shared


def build(
    root: pathlib.Path,
    ids: list[str],
    vectors: np.ndarray,
    texts: list[str] | None,
    metric: str = "cosine",
    *,
    emulator: UpstashEmulator | None = None,
    namespace: str = "",
    text_in: str = "data",
    params: str = TEST_PARAMS,
    **kw: Any,
) -> str:
    """Upsert ``ids``/``vectors`` float32 (n, d)/``texts`` into a new index; return its spec."""
    emu = emulator or shared_emulator()
    similarity = METRICS.get(metric.lower(), metric.upper())
    vectors = np.asarray(vectors, dtype=np.float32)
    url = emu.add_index(f"idx{next(_names)}", vectors.shape[1], similarity)
    index = Index(url=url, token=emu.token, retries=0)
    rows: list[dict[str, Any]] = []
    for i, vid in enumerate(ids):
        row: dict[str, Any] = {"id": vid, "vector": vectors[i].tolist()}
        if texts is not None and text_in == "data":
            row["data"] = texts[i]
        elif texts is not None:
            row["metadata"] = {"text": texts[i], "position": i}
        rows.append(row)
    for start in range(0, len(rows), UPSERT_BATCH):
        index.upsert(rows[start : start + UPSERT_BATCH], namespace=namespace)
    query = "&".join(
        p for p in (params, urlencode({"namespace": namespace}) if namespace else "") if p
    )
    return f"upstash:{url}" + (f"?{query}" if query else "")
