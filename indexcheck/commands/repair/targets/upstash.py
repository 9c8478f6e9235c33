"""A new namespace of an Upstash Vector index (``--out upstash:URL?namespace=NEW``, hosted:
only with ``--yes``). Upstash cannot rename a namespace, so the rows go straight into
``NEW`` (which must not exist), 1,000 an upsert, and the namespace is deleted when anything
fails; a repair killed by SIGKILL mid-write leaves ``NEW`` partly written (its check says
so). The text goes in ``data``, the metadata as it is; the token comes only from
``UPSTASH_VECTOR_REST_TOKEN`` (a read-write one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ....stores.hosted import api_key
from ....stores.targets import TargetSpec, UpstashNamespace
from .protocol import Batch, Source

TOKEN_ENV = "UPSTASH_VECTOR_REST_TOKEN"
UPSERT_ROWS = 1000


def client(url: str) -> Any:
    from upstash_vector import Index

    token = api_key(TOKEN_ENV, "export the index's read-write REST token")
    return Index(url=url, token=token, retries=0)


class UpstashWriter:
    """Writes namespace ``target.namespace``; see the module docstring."""

    def __init__(self, spec: TargetSpec, source: Source) -> None:
        self.target: UpstashNamespace = spec.names
        self._index: Any = None

    def open(self, folder: Path, dimension: int) -> None:
        self._index = client(self.target.url)

    def write(self, batch: Batch) -> None:
        rows = [
            {"id": cid, "vector": v.tolist(), "metadata": m, "data": t}
            for cid, v, t, m in batch.rows()
        ]
        for lo in range(0, len(rows), UPSERT_ROWS):
            self._index.upsert(rows[lo : lo + UPSERT_ROWS], namespace=self.target.namespace)

    def commit(self) -> None:
        self._index = None

    def abort(self) -> None:
        if self._index is not None and self.target.namespace in self._index.list_namespaces():
            self._index.delete_namespace(self.target.namespace)
        self._index = None

    def proof(self, out: Path) -> str:
        return f"upstash:{self.target.url}?namespace={self.target.namespace}"


__all__ = ["UpstashWriter", "client"]
