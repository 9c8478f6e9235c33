"""Test-only writer for Milvus Lite collections (pymilvus + milvus-lite, in-process)."""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np

METRICS = {"cosine": "COSINE", "ip": "IP", "dot": "IP", "l2": "L2"}


def build(
    root: pathlib.Path,
    ids: list[str],
    vectors: np.ndarray,
    texts: list[str] | None,
    metric: str = "cosine",
    *,
    collection: str = "docs",
    index: str | None = "FLAT",
    index_params: dict[str, Any] | None = None,
    pk: str = "varchar",
    extra: dict[str, list[Any]] | None = None,
    db_file: str = "milvus.db",
    flush_every: int | None = None,
) -> str:
    """Write ``root/<db_file>`` holding one collection of exactly these rows; return its spec.

    ``metric``: cosine | ip (dot) | l2. ``index``: a Milvus index type (FLAT, IVF_FLAT,
    HNSW, AUTOINDEX...) or None for no index (Lite then brute-forces with COSINE).
    ``pk``: ``varchar`` (ids stored as given) or ``int`` (ids must be decimal strings).
    ``extra``: more INT64/VARCHAR scalar columns {name: values}. ``flush_every`` inserts
    and flushes in chunks, leaving several segments. The in-process Lite server is
    stopped afterwards, so the data is on disk and the folder lock is free.
    """
    from milvus_lite.server_manager import server_manager_instance
    from pymilvus import DataType, MilvusClient

    path = root / db_file
    root.mkdir(parents=True, exist_ok=True)
    client = MilvusClient(str(path))
    try:
        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        if pk == "int":
            schema.add_field("pk", DataType.INT64, is_primary=True)
        else:
            schema.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=512)
        schema.add_field("vec", DataType.FLOAT_VECTOR, dim=int(vectors.shape[1]))
        if texts is not None:
            schema.add_field("text", DataType.VARCHAR, max_length=4096)
        for name, values in (extra or {}).items():
            if isinstance(values[0], int):
                schema.add_field(name, DataType.INT64)
            else:
                schema.add_field(name, DataType.VARCHAR, max_length=512)
        params = None
        if index is not None:
            params = client.prepare_index_params()
            params.add_index(
                "vec", index_type=index, metric_type=METRICS[metric], params=index_params or {}
            )
        client.create_collection(collection, schema=schema, index_params=params)
        rows = []
        for i, vid in enumerate(ids):
            row: dict[str, Any] = {
                "pk": int(vid) if pk == "int" else vid,
                "vec": vectors[i].astype(np.float32).tolist(),
            }
            if texts is not None:
                row["text"] = texts[i]
            for name, values in (extra or {}).items():
                row[name] = values[i]
            rows.append(row)
        step = flush_every or len(rows)
        for start in range(0, len(rows), step):
            client.insert(collection, rows[start : start + step])
            if flush_every:
                client.flush(collection)
    finally:
        client.close()
        server_manager_instance.release_server(str(path))
    return f"milvus:{path}?collection={collection}"
