"""LlamaIndex persist folders: ``llamaindex:PERSIST_DIR[?index_id=ID&text=embedded|stored]``.

Reads what ``index.storage_context.persist(DIR)`` wrote, through
:func:`indexcheck.inputs.formats.llamaindex.read_persist_dir`: a ``SimpleVectorStore`` or a
``FaissVectorStore``, plus ``docstore.json`` and ``index_store.json``. No pickle; LlamaIndex
itself is not imported.

Texts are what LlamaIndex embedded (``MetadataMode.EMBED``: the metadata header, a blank line,
the text), so check-index compares like with like; ``?text=stored`` gives the bare texts, to
see how far the header moves the vectors. Rows are in build order (``embedding_dict`` keeps
insertion order, faiss rows are added in order). Scores: SimpleVectorStore ``cos``; a faiss
store its index's metric (``l2^2`` or ``dot``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from ...inputs.formats.llamaindex import read_persist_dir
from ..base import BaseStore, Fetched, StoreInfo, StoreSpec, VectorBatch
from ..local import LOCAL_METRICS, exact_knn, ids_of
from ..local_filtering import exact_over, select
from ..params import Choice, Str


class LlamaIndexStore(BaseStore):
    """A LlamaIndex persist folder, read once into memory."""

    scheme = "llamaindex"
    params = {"index_id": Str(), "text": Choice("embedded", "stored")}
    fetch_batch = query_batch = 1 << 30
    has_exact = True
    ordered = True  # nodes in the order LlamaIndex added them

    def __init__(self, spec: StoreSpec, options: Any = None) -> None:
        super().__init__(spec, options)
        folder = Path(spec.location).expanduser()
        index_id = self.values.get("index_id") or None
        self.index = read_persist_dir(folder, index_id)
        self.folder = folder
        self.text_mode = str(self.values.get("text", "embedded"))
        chosen = self.index.embedded_texts if self.text_mode == "embedded" else self.index.texts
        self.texts: list[str | None] = list(chosen)
        self.ids = list(self.index.ids)
        self.vectors = np.ascontiguousarray(self.index.vectors, dtype=np.float32)
        self._pos = {cid: i for i, cid in enumerate(self.ids)}
        self.metric = self.index.metric

    def info(self) -> StoreInfo:
        _, score, higher = LOCAL_METRICS[self.metric]
        return StoreInfo(
            backend="llamaindex",
            count=len(self.ids),
            dimension=int(self.vectors.shape[1]) if self.vectors.ndim == 2 else 0,
            metric=self.metric,
            score=score,
            higher_is_better=higher,
            approximate=False,
            details={
                "layout": self.index.layout,
                "index_id": self.index.index_id,
                "texts": self.text_mode,
            },
        )

    def fingerprint(self) -> str:
        """xxh3-128 over the bytes of the vector store, docstore and index store files."""
        h = xxhash.xxh3_128()
        for path in self.index.files:
            with path.open("rb") as f:
                for block in iter(lambda: f.read(1 << 22), b""):
                    h.update(block)
        return h.hexdigest()

    def ref_doc_ids(self, ids: list[str]) -> dict[str, str]:
        """Chunk id -> the LlamaIndex document it came from, for the ids that have one."""
        refs = self.index.ref_doc_ids
        out = {}
        for cid in ids:
            j = self._pos.get(cid)
            if j is not None and j < len(refs) and refs[j] is not None:
                out[cid] = str(refs[j])
        return out

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        pos = np.asarray([self._pos.get(i, -1) for i in ids], dtype=np.int64)
        ok = pos >= 0
        d = self.vectors.shape[1] if self.vectors.ndim == 2 else 0
        vectors = np.zeros((len(ids), d), dtype=np.float32)
        vectors[ok] = self.vectors[pos[ok]]
        dims = np.where(ok, d, 0).astype(np.int32)
        texts = [self.texts[int(j)] if j >= 0 else None for j in pos]
        return Fetched(list(ids), vectors, ok, dims, texts)

    def _scan(self, batch: int) -> Iterator[VectorBatch]:
        d = self.vectors.shape[1] if self.vectors.ndim == 2 else 0
        for start in range(0, len(self.ids), batch):
            stop = min(start + batch, len(self.ids))
            yield VectorBatch(
                self.ids[start:stop],
                self.vectors[start:stop],
                np.full(stop - start, d, dtype=np.int32),
                self.texts[start:stop],
                self.index.metadata[start:stop],
            )

    def _search_dimension(self) -> int | None:
        return int(self.vectors.shape[1]) if self.vectors.ndim == 2 else None

    def _query_batch(self, xq: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self._exact_batch(xq, k)

    def _native_filter(self, node: Any) -> Any:
        """The positions whose node metadata matches (what LlamaIndex's
        ``MetadataFilters`` select in a SimpleVectorStore): an id selector."""
        return select(self.scheme, self.index.metadata, node, self.spec)

    def _filtered_query_batch(
        self, xq: np.ndarray, k: int, native: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        return exact_over(self.vectors, self.ids, native, xq, k, self.metric)

    def _exact_batch(self, xq: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        D, P = exact_knn(self.vectors, xq, k, self.metric)
        return D, ids_of(P, self.ids)
