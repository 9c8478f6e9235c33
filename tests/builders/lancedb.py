"""Test-only writer: a local LanceDB directory holding one table, optionally indexed."""

from __future__ import annotations

import pathlib
from typing import Any
from urllib.parse import urlencode

import numpy as np

METRICS = ("cosine", "l2", "dot")


def build(
    root: pathlib.Path,
    ids: list[str],
    vectors: np.ndarray,
    texts: list[str] | None,
    metric: str = "cosine",
    *,
    table: str = "chunks",
    index: str | None = None,
    vector: str = "vector",
    id_column: str = "id",
    text_column: str = "text",
    **index_kw: Any,
) -> str:
    """Write ``root/lancedb`` with table ``table`` (id string, vector fixed-size float32
    list, text) and return its spec.

    ``index`` is None (flat only), "IVF_PQ" or "IVF_HNSW_SQ", built with ``metric`` (l2,
    cosine, dot) and ``index_kw`` (e.g. num_partitions, num_sub_vectors). Without an
    index the spec carries ``&metric=`` since nothing in the table records it.
    """
    import lancedb
    import pyarrow as pa

    if metric not in METRICS:
        raise ValueError(f"lancedb metric must be one of {METRICS}, got {metric!r}")
    vecs = np.ascontiguousarray(vectors, dtype=np.float32)
    n, d = vecs.shape
    columns: dict[str, Any] = {
        id_column: pa.array(ids, type=pa.string()),
        vector: pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), d),
    }
    if texts is not None:
        columns[text_column] = pa.array(texts, type=pa.string())
    path = pathlib.Path(root) / "lancedb"
    db = lancedb.connect(str(path))
    tbl = db.create_table(table, pa.table(columns))
    if index is not None:
        from lancedb.index import HnswSq, IvfPq

        if index == "IVF_PQ":
            config: Any = IvfPq(distance_type=metric, **index_kw)
        elif index == "IVF_HNSW_SQ":
            config = HnswSq(distance_type=metric, **index_kw)
        else:
            raise ValueError(f"unsupported index {index!r}")
        tbl.create_index(vector, config=config)
    params = {"table": table}
    if vector != "vector":
        params["vector"] = vector
    if id_column != "id":
        params["id"] = id_column
    if text_column != "text":
        params["text"] = text_column
    if index is None:
        params["metric"] = metric
    return f"lancedb:{path}?{urlencode(params)}"
