"""The Parquet file every repaired copy holds: ``vectors.parquet`` with ``id``, ``vector``
(fixed-size float32 lists), ``text``, ``metadata`` (a JSON object string) and ``text_hash``,
one row group per batch written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .protocol import Batch

PARQUET = "vectors.parquet"


class ParquetWriter:
    """Writes ``folder/vectors.parquet`` a batch at a time."""

    def __init__(self) -> None:
        self._w: Any = None
        self._schema: Any = None
        self._d = 0

    def open(self, folder: Path, dimension: int) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self._d = dimension
        self._schema = pa.schema(
            [
                ("id", pa.string()),
                ("vector", pa.list_(pa.float32(), dimension)),
                ("text", pa.string()),
                ("metadata", pa.string()),
                ("text_hash", pa.string()),
            ]
        )
        self._w = pq.ParquetWriter(folder / PARQUET, self._schema)

    def write(self, batch: Batch) -> None:
        import pyarrow as pa

        flat = pa.array(np.ascontiguousarray(batch.vectors, np.float32).reshape(-1), pa.float32())
        cols = [
            pa.array(batch.ids, pa.string()),
            pa.FixedSizeListArray.from_arrays(flat, self._d),
            pa.array(batch.texts, pa.string()),
            pa.array(batch.metadata_json(), pa.string()),
            pa.array(batch.hashes, pa.string()),
        ]
        self._w.write_table(pa.Table.from_arrays(cols, schema=self._schema))

    def commit(self) -> None:
        self._w.close()

    def abort(self) -> None:
        if self._w is not None:
            self._w.close()

    def proof(self, out: Path) -> str:
        """The spec check-index reads the published copy with."""
        return f"parquet:{out / PARQUET}"


__all__ = ["PARQUET", "ParquetWriter"]
