"""A new LanceDB table in a NEW folder: the source's vector, id and text column names (a
LanceDB source's, else ``vector``, ``id``, ``text``) and ``metadata`` as a JSON string,
added a batch at a time (each add is one LanceDB version)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .protocol import Batch, Source

#: a store's metric name -> LanceDB distance type
DISTANCES = {"cosine": "cosine", "ip": "dot", "dot": "dot", "l2": "l2", "euclid": "l2"}


class LanceDBWriter:
    """Writes table ``name`` into ``lancedb.connect(staging folder)``."""

    def __init__(self, name: str, source: Source) -> None:
        self.name = name
        d = source.details if source.kind == "lancedb" else {}
        self.vcol = str(d.get("vector_column") or "vector")
        self.idcol = str(d.get("id_column") or "id")
        self.textcol = str(d.get("text_column") or "text")
        self.metric = DISTANCES.get(source.metric.lower(), "l2")
        self._db: Any = None
        self._tbl: Any = None
        self._schema: Any = None
        self._d = 0

    def open(self, folder: Path, dimension: int) -> None:
        import lancedb
        import pyarrow as pa

        self._d = dimension
        self._db = lancedb.connect(str(folder))
        fields = [
            (self.idcol, pa.string()),
            (self.vcol, pa.list_(pa.float32(), dimension)),
            (self.textcol, pa.string()),
        ]
        if "metadata" not in (self.idcol, self.vcol, self.textcol):
            fields.append(("metadata", pa.string()))
        self._schema = pa.schema(fields)
        self._tbl = self._db.create_table(self.name, schema=self._schema)

    def write(self, batch: Batch) -> None:
        import pyarrow as pa

        flat = pa.array(np.ascontiguousarray(batch.vectors, np.float32).reshape(-1), pa.float32())
        cols: list[Any] = [
            pa.array(batch.ids, pa.string()),
            pa.FixedSizeListArray.from_arrays(flat, self._d),
            pa.array(batch.texts, pa.string()),
        ]
        if len(self._schema) == 4:
            drop = {self.idcol, self.vcol, self.textcol}
            metas = [{k: v for k, v in m.items() if k not in drop} for m in batch.metadata]
            cols.append(pa.array(Batch([], batch.vectors[:0], [], metas, []).metadata_json()))
        self._tbl.add(pa.Table.from_arrays(cols, schema=self._schema))

    def commit(self) -> None:
        self.abort()

    def abort(self) -> None:
        self._tbl = self._db = None

    def proof(self, out: Path) -> str:
        return (
            f"lancedb:{out}?table={self.name}&vector={self.vcol}&id={self.idcol}"
            f"&text={self.textcol}&metric={self.metric}"
        )


__all__ = ["LanceDBWriter"]
