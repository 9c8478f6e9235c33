"""A new FAISS folder in the source's layout: LangChain's ``save_local`` (``index.faiss``
+ ``index.pkl``, a pickle of (InMemoryDocstore, {row: id})) or indexcheck's (``index.faiss``
+ ``ids.json``). The flat index grows a batch at a time; the docstore or ids file, which
the layout writes whole, is held until ``commit``."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from ....errors import InputError
from .protocol import Batch


class FaissWriter:
    """``layout``: ``langchain`` or ``indexcheck``; ``metric``: ``ip`` or ``l2``."""

    def __init__(self, layout: str, metric: str) -> None:
        self.layout = layout
        self.metric = "ip" if metric in ("ip", "cosine", "dot") else "l2"
        self._index: Any = None
        self._folder = Path(".")
        self._docs: dict[str, Any] = {}
        self._rows: list[Any] = []

    def open(self, folder: Path, dimension: int) -> None:
        import faiss

        if self.layout == "langchain":
            try:
                import langchain_community.docstore.in_memory  # noqa: F401
                import langchain_core.documents  # noqa: F401
            except ImportError:
                raise InputError(
                    "writing a LangChain FAISS folder needs langchain-community, which "
                    "built the source; run: pip install langchain-community"
                ) from None
        self._folder = folder
        flat = faiss.IndexFlatIP if self.metric == "ip" else faiss.IndexFlatL2
        self._index = flat(dimension)

    def write(self, batch: Batch) -> None:
        self._index.add(np.ascontiguousarray(batch.vectors, np.float32))
        if self.layout == "langchain":
            from langchain_core.documents import Document

            for cid, t, m in zip(batch.ids, batch.texts, batch.metadata, strict=True):
                self._docs[cid] = Document(page_content=t, metadata=m, id=cid)
        else:
            self._rows += [
                {"id": i, "text": t} for i, t in zip(batch.ids, batch.texts, strict=True)
            ]

    def commit(self) -> None:
        import faiss

        faiss.write_index(self._index, str(self._folder / "index.faiss"))
        if self.layout == "langchain":
            from langchain_community.docstore.in_memory import InMemoryDocstore

            payload = (InMemoryDocstore(self._docs), dict(enumerate(self._docs)))
            with (self._folder / "index.pkl").open("wb") as f:
                pickle.dump(payload, f)
        else:
            text = json.dumps(self._rows, ensure_ascii=False)
            (self._folder / "ids.json").write_text(text, encoding="utf-8")

    def abort(self) -> None:
        self._index = None

    def proof(self, out: Path) -> str:
        return f"faiss:{out}"


__all__ = ["FaissWriter"]
