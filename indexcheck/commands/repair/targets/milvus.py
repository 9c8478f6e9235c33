"""A new Milvus Lite collection in a NEW folder (``--out milvus:DIR?collection=C``): the
folder holds ``milvus.db``, Milvus Lite's own file, with a VARCHAR primary key ``pk`` (the
chunk id), ``vec`` (FLOAT_VECTOR, a FLAT index with the source's metric), ``text`` and
``metadata`` (JSON); the in-process Lite server is released before the folder is
published."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .protocol import Batch, Source

DB_FILE = "milvus.db"
#: a store's metric name -> Milvus metric type
METRICS = {"cosine": "COSINE", "ip": "IP", "dot": "IP", "l2": "L2"}
#: VARCHAR lengths Milvus requires to be declared
MAX_ID, MAX_TEXT = 512, 65535
INSERT_ROWS = 2048


class MilvusWriter:
    """Writes collection ``name`` into ``folder/milvus.db``."""

    def __init__(self, name: str, source: Source) -> None:
        self.name = name
        self.metric = METRICS.get(source.metric.lower(), "COSINE")
        self._client: Any = None
        self._path = ""

    def open(self, folder: Path, dimension: int) -> None:
        from pymilvus import DataType, MilvusClient

        self._path = str(folder / DB_FILE)
        self._client = MilvusClient(self._path)
        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=MAX_ID)
        schema.add_field("vec", DataType.FLOAT_VECTOR, dim=dimension)
        schema.add_field("text", DataType.VARCHAR, max_length=MAX_TEXT)
        schema.add_field("metadata", DataType.JSON)
        params = self._client.prepare_index_params()
        params.add_index("vec", index_type="FLAT", metric_type=self.metric)
        self._client.create_collection(self.name, schema=schema, index_params=params)

    def write(self, batch: Batch) -> None:
        rows = [
            {"pk": cid, "vec": v.tolist(), "text": t, "metadata": m}
            for cid, v, t, m in batch.rows()
        ]
        for lo in range(0, len(rows), INSERT_ROWS):
            self._client.insert(self.name, rows[lo : lo + INSERT_ROWS])

    def commit(self) -> None:
        self._client.flush(self.name)
        self.abort()

    def abort(self) -> None:
        if self._client is None:
            return
        from milvus_lite.server_manager import server_manager_instance

        self._client.close()
        self._client = None
        server_manager_instance.release_server(self._path)

    def proof(self, out: Path) -> str:
        return f"milvus:{out / DB_FILE}?collection={self.name}&id=pk&vector=vec&text=text"


__all__ = ["MilvusWriter"]
