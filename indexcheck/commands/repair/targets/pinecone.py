"""A new namespace of a Pinecone index (``--out pinecone:INDEX?namespace=NEW``, with
``&host=`` for a local deployment; hosted: only with ``--yes``). Pinecone cannot rename a
namespace, so the rows go straight into ``NEW`` (which must not exist), 100 an upsert, and
the namespace is deleted when anything fails; a repair killed by SIGKILL mid-write leaves
``NEW`` partly written (its check says so). The text goes in ``metadata["text"]`` (where
LangChain's PineconeVectorStore reads it), beside the metadata (values Pinecone cannot
hold, such as nested objects, as JSON strings). The key comes only from
``PINECONE_API_KEY``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ....stores.hosted import api_key
from ....stores.targets import PineconeNamespace as Namespace
from ....stores.targets import TargetSpec
from .protocol import Batch, Source

KEY_ENV = "PINECONE_API_KEY"
TEXT_KEY = "text"
UPSERT_ROWS = 100


def index_client(t: Namespace) -> Any:
    """The SDK's data-plane client of ``t.index``."""
    from pinecone import Pinecone

    key = api_key(KEY_ENV, "export the API key of the index's project")
    pc = Pinecone(api_key=key, host=t.host)
    host = str(pc.describe_index(t.index).host)
    if "://" not in host:  # a local deployment names its host without a scheme
        host = f"{urlsplit(t.host).scheme if t.host else 'https'}://{host}"
    return pc.Index(host=host)


def namespaces(index: Any) -> set[str]:
    """The index's namespaces that hold vectors (``""`` for the default one)."""
    stats = index.describe_index_stats()
    found = stats.get("namespaces") if isinstance(stats, dict) else stats.namespaces
    return {"" if n == "__default__" else str(n) for n in (found or {})}


def _value(v: Any) -> Any:
    if isinstance(v, str | int | float | bool):
        return v
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return v
    return json.dumps(v, default=str)


class PineconeWriter:
    """Writes namespace ``target.namespace``; see the module docstring."""

    def __init__(self, spec: TargetSpec, source: Source) -> None:
        self.target: Namespace = spec.names
        self._index: Any = None

    def open(self, folder: Path, dimension: int) -> None:
        self._index = index_client(self.target)

    def write(self, batch: Batch) -> None:
        rows = [
            (cid, v.tolist(), {**{k: _value(x) for k, x in m.items() if x is not None},
                               TEXT_KEY: t})
            for cid, v, t, m in batch.rows()
        ]  # fmt: skip
        for lo in range(0, len(rows), UPSERT_ROWS):
            self._index.upsert(vectors=rows[lo : lo + UPSERT_ROWS], namespace=self.target.namespace)

    def commit(self) -> None:
        self._index = None

    def abort(self) -> None:
        if self._index is not None:
            self._index.delete(delete_all=True, namespace=self.target.namespace)
        self._index = None

    def proof(self, out: Path) -> str:
        host = f"&host={self.target.host}" if self.target.host else ""
        return f"pinecone:{self.target.index}?namespace={self.target.namespace}{host}"


__all__ = ["PineconeWriter", "index_client", "namespaces"]
