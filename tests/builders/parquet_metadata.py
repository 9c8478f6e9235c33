"""A Parquet index of texts with their hash-embedded vectors and per-row metadata."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from indexcheck.testing import HashEmbedder


def build(path: Path, texts: list[str], meta: list[dict[str, Any]]) -> Path:
    """``path`` holding ids c0.., HashEmbedder(32) vectors of ``texts``, and ``meta``."""
    vecs = np.asarray(HashEmbedder(32).embed(texts))
    pq.write_table(
        pa.table(
            {
                "id": [f"c{i}" for i in range(len(texts))],
                "vector": pa.array(vecs.tolist(), pa.list_(pa.float32())),
                "text": texts,
                "metadata": pa.array(meta),
            }
        ),
        path,
    )
    return path
