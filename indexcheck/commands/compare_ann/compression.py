"""Does the index compress the vectors, and are the vectors it gives back the ones added?

compare-ann's ground truth is exact search over the vectors a store gives back; when those
are decoded codes (a FAISS PQ/SQ/LSH index), the truth is itself compressed and the loss is
invisible. :func:`compression_of` says, per store: ``kind`` (the codec the search scores
with: ``none`` | ``pq`` | ``sq`` | ``binary`` | ``additive`` | ``unknown``), ``lossy`` (True,
False or None when the engine does not say), ``vectors_read_back`` (``original``, as every
engine but FAISS keeps them, ``compressed`` or ``unknown``), ``codec`` (one line) and
``source`` (``index type``, a details key of the store, or ``not said``). A store with a
``compression()`` method (FAISS) says it itself; for the others it is read from
``info().details``.
"""

from __future__ import annotations

from typing import Any

from ...stores.base import VectorStore

#: substrings of an engine's index type name -> codec kind (first match wins)
_TYPE_KINDS = (
    ("RABITQ", "binary"),
    ("BIN_", "binary"),
    ("PQ", "pq"),
    ("SQ", "sq"),
    ("SCANN", "pq"),
    ("DISKANN", "pq"),
    ("FLAT", "none"),
    ("HNSW", "none"),
)
_QDRANT = {
    "ScalarQuantization": "sq",
    "ProductQuantization": "pq",
    "BinaryQuantization": "binary",
}


def _kind_of_type(name: str) -> str:
    upper = name.upper()
    return next((kind for key, kind in _TYPE_KINDS if key in upper), "unknown")


def _entry(
    kind: str, codec: str, source: str, read_back: str = "original", lossy: bool | None = None
) -> dict[str, Any]:
    if lossy is None and kind != "unknown":
        lossy = kind != "none"
    return {
        "kind": kind,
        "lossy": lossy,
        "vectors_read_back": read_back,
        "codec": codec,
        "source": source,
    }


def unknown(backend: str) -> dict[str, Any]:
    return _entry(
        "unknown",
        f"{backend} does not say whether it compresses the vectors it searches",
        "not said",
        read_back="unknown",
    )


def compression_of(store: VectorStore) -> dict[str, Any]:
    """What the store's index keeps of the vectors (see the module docstring)."""
    own = getattr(store, "compression", None)
    if callable(own):
        return {**own(), "source": "index type"}
    info = store.info()
    details = info.details or {}
    backend = info.backend
    if backend == "parquet":
        return _entry("none", "the file's float vectors (exact search)", "backend")
    if backend == "chroma":
        return _entry("none", "HNSW over float32 vectors", "backend")
    if backend == "lancedb":
        index = details.get("index") or {}
        name = str(index.get("index_type") or "") if isinstance(index, dict) else ""
        if not name:
            return _entry("none", "no ANN index (exact scan of the table)", "details.index")
        return _entry(_kind_of_type(name), f"LanceDB index {name}", "details.index.index_type")
    if backend == "milvus":
        name = str(details.get("index_type") or "")
        if not name:
            return unknown(backend)
        return _entry(_kind_of_type(name), f"Milvus index {name}", "details.index_type")
    if backend == "qdrant":
        quant = details.get("quantization")
        if details.get("search", "").startswith("brute force") or quant is None:
            return _entry("none", "float32 vectors, no quantization", "details.quantization")
        kind = _QDRANT.get(str(quant), "unknown")
        return _entry(kind, f"Qdrant {quant}", "details.quantization")
    if backend == "pgvector":
        return _pgvector(details)
    if backend == "llamaindex" and details.get("layout") == "simple":
        return _entry("none", "SimpleVectorStore float vectors (exact search)", "details.layout")
    return unknown(backend)


def _pgvector(details: dict[str, Any]) -> dict[str, Any]:
    vtype = str(details.get("vector_type") or "vector")
    opclass = str(details.get("opclass") or "")
    if vtype.startswith("halfvec"):
        # the column itself holds half precision: what was embedded is not stored
        return _entry(
            "sq",
            "halfvec column: vectors stored at 16-bit precision",
            "details.vector_type",
            read_back="compressed",
        )
    if vtype.startswith("bit"):
        return _entry(
            "binary", "bit column: binary vectors", "details.vector_type", read_back="compressed"
        )
    if opclass.startswith("bit_"):
        return _entry("binary", f"index on binary codes ({opclass})", "details.opclass")
    if opclass.startswith("halfvec_"):
        return _entry("sq", f"index on halfvec codes ({opclass})", "details.opclass")
    index_type = details.get("index_type")
    return _entry("none", f"{index_type or 'no'} index over float32 vectors", "details.index_type")


__all__ = ["compression_of", "unknown"]
