"""Filtered search for the local stores (FAISS, Parquet/JSONL, LlamaIndex): an id
selector over the metadata read with the vectors.

The filter is checked against the fields the rows carry (an unknown one is exit 2 with a
did-you-mean), evaluated once to the positions that match (with the store's own rule for
``$ne``/``$nin`` on a missing field), and the search runs over those positions only: an
exact search over the selected rows, or, for a FAISS index, the index's own search
restricted by a ``faiss.IDSelectorBatch`` (``SearchParameters(sel=...)``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import FilterError
from ..filters import ENGINE_MISSING, Missing, check_fields, evaluate, metadata_fields
from .local import exact_knn, ids_of


def select(
    scheme: str, metadata: Sequence[Mapping[str, Any]] | None, node: Any, where: str
) -> np.ndarray:
    """Positions (int64) of the rows whose metadata matches ``node``."""
    if metadata is None:
        raise FilterError(
            f"{where} holds no metadata with its vectors, so it cannot be filtered; "
            "build it with metadata (a 'metadata' column, LangChain or LlamaIndex metadata)"
        )
    check_fields(node, metadata_fields(metadata))
    missing = ENGINE_MISSING.get(scheme, Missing.INCLUDE)
    return np.flatnonzero(evaluate(node, metadata, missing=missing)).astype(np.int64)


def exact_over(
    matrix: np.ndarray,
    ids: list[str],
    positions: np.ndarray,
    queries: np.ndarray,
    k: int,
    metric: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-k of ``queries`` among the rows at ``positions``: (D, ids)."""
    D, P = exact_knn(matrix[positions], queries, k, metric)
    mapped = np.where(P >= 0, positions[np.maximum(P, 0)], -1)
    return D, ids_of(mapped, ids)


def faiss_selected(
    index: Any, positions: np.ndarray, queries: np.ndarray, k: int, search: Mapping[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """The index's own search restricted to ``positions`` (float32 D, int64 positions)."""
    import faiss as faiss_module

    faiss: Any = faiss_module  # its stubs lack the selector search parameters

    sel = faiss.IDSelectorBatch(positions)
    kind = type(index).__name__
    if isinstance(index, faiss.IndexHNSW):
        params: Any = faiss.SearchParametersHNSW(sel=sel)
        if "efSearch" in search:
            params.efSearch = int(search["efSearch"])
        else:
            params.efSearch = int(index.hnsw.efSearch)
    elif isinstance(index, faiss.IndexIVF):
        params = faiss.SearchParametersIVF(sel=sel)
        params.nprobe = int(search.get("nprobe", index.nprobe))
    else:
        params = faiss.SearchParameters(sel=sel)
    try:
        D, P = index.search(queries, k, params=params)
    except RuntimeError as exc:
        raise FilterError(
            f"this faiss {kind} cannot search under an id selector ({exc}); "
            "filtered search needs a Flat, HNSW or IVF index"
        ) from None
    return D, P


def lance_fields(schema: Any, vector: str) -> tuple[list[str], str | None, dict[str, set[str]]]:
    """(top-level non-vector columns, the struct column named ``metadata`` if any, and
    per place ('' top level, else the struct) the integer fields)."""
    import pyarrow as pa

    top = [f.name for f in schema if f.name != vector]
    ints: dict[str, set[str]] = {"": {f.name for f in schema if pa.types.is_integer(f.type)}}
    struct = None
    if "metadata" in schema.names and pa.types.is_struct(schema.field("metadata").type):
        struct = "metadata"
        inner = schema.field("metadata").type
        ints[struct] = {
            inner.field(i).name
            for i in range(inner.num_fields)
            if pa.types.is_integer(inner.field(i).type)
        }
    return top, struct, ints


def lance_metadata(store: Any) -> dict[str, dict[str, Any]]:
    """Every row's non-vector columns by id, read once (the vectors are not read)."""
    cached = getattr(store, "_filter_metadata", None)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    cols = [n for n in store._tbl.schema.names if n != store._vcol]
    table = store._call(
        "read metadata", lambda: store._tbl.search().select(cols).limit(None).to_arrow()
    )
    ids = store._ids_of(table.column(store._idcol))
    out = dict(zip(ids, table.to_pylist(), strict=True))
    store._filter_metadata = out
    return out
