"""Vectors in a file: ``parquet:PATH`` or ``jsonl:PATH``.

The scheme picks the reader, not the file name: ``jsonl:x.json`` is read as JSON Lines.
(``parquet:`` still reads a ``.jsonl``/``.ndjson`` name as JSON Lines, as it always has.)

Columns: ``id``, ``vector`` (a list of floats), optional ``text`` and ``metadata``
(a struct/dict); ``?id=``, ``?vector=``, ``?text=`` rename them. The file is read
whole; search is exact brute force, with ``?metric=cosine`` (score ``cos``, the
default), ``ip`` (``dot``) or ``l2`` (``l2^2``). Vectors of uneven length are kept
and reported by check-index as ``dimension_mismatch``; the store dimension is the
most common length.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from ..errors import DataFileError, VectorTypeError
from ..inputfiles import loads_json
from ._local import LOCAL_METRICS, exact_knn, ids_of
from .base import (
    BaseStore,
    Fetched,
    StoreInfo,
    StoreSpec,
    VectorBatch,
    as_float32_matrix,
    pack_rows,
)
from .params import Choice, Str


def _read_columns(
    path: Path, id_col: str, vec_col: str, text_col: str, jsonl: bool
) -> tuple[list[str], list[Any] | np.ndarray, list[Any] | None, list[Any] | None]:
    """(ids, vectors, texts, metadata) from JSONL (``jsonl``) or Parquet.

    Parquet vectors of one length come back as a float32 (n, d) matrix without a trip
    through Python lists; JSONL and ragged columns come back as a list of rows.
    """
    if jsonl:
        rows = []
        with path.open(encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if line.strip():
                    try:
                        rows.append(loads_json(line, f"{path}:{lineno}"))
                    except json.JSONDecodeError as exc:
                        raise DataFileError(f"{path}:{lineno} is not JSON ({exc.msg})") from None
        names = list(rows[0]) if rows else []
        _require(path, names, id_col, vec_col)
        _check_vector_rows(path, vec_col, [r.get(vec_col) for r in rows], "line")
        return (
            [str(r[id_col]) for r in rows],
            [r.get(vec_col) for r in rows],
            [r.get(text_col) for r in rows] if text_col in names else None,
            [r.get("metadata") or {} for r in rows] if "metadata" in names else None,
        )
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises several types for bad files
        raise DataFileError(f"cannot read {path} as Parquet: {exc}") from None
    _require(path, table.column_names, id_col, vec_col)
    col = table.column(vec_col).combine_chunks()
    _check_vector_type(path, vec_col, col.type)
    vectors: list[Any] | np.ndarray
    if pa.types.is_fixed_size_list(col.type) and col.null_count == 0:
        flat = col.flatten().to_numpy(zero_copy_only=False).astype(np.float32)
        vectors = flat.reshape(len(col), col.type.list_size)
    elif pa.types.is_list(col.type) and col.null_count == 0 and len(col) > 0:
        lengths = np.diff(col.offsets.to_numpy())
        if (lengths == lengths[0]).all():
            flat = col.flatten().to_numpy(zero_copy_only=False).astype(np.float32)
            vectors = flat.reshape(len(col), int(lengths[0]))
        else:
            vectors = col.to_pylist()
    else:
        rows = col.to_pylist()
        _check_vector_rows(path, vec_col, rows, "row")
        vectors = rows
    names = table.column_names
    return (
        [str(x) for x in table.column(id_col).to_pylist()],
        vectors,
        table.column(text_col).to_pylist() if text_col in names else None,
        table.column("metadata").to_pylist() if "metadata" in names else None,
    )


_KINDS = {str: "a string", bytes: "bytes", dict: "an object", bool: "a boolean"}


def _what(value: Any) -> str:
    return "null" if value is None else _KINDS.get(type(value), type(value).__name__)


def _check_vector_type(path: Path, vec_col: str, kind: Any) -> None:
    """Refuse (exit 2) a Parquet vector column that is not a list of numbers (strings,
    bytes, nested lists, structs), naming its Arrow type; the values are never shown."""
    import pyarrow as pa

    is_list = pa.types.is_list(kind) or pa.types.is_large_list(kind)
    if is_list or pa.types.is_fixed_size_list(kind):
        inner = kind.value_type
        if pa.types.is_integer(inner) or pa.types.is_floating(inner) or pa.types.is_null(inner):
            return
        nested = pa.types.is_list(inner) or pa.types.is_large_list(inner)
        holds = f"nested lists ({kind})" if nested else f"lists of {inner}"
    else:
        holds = f"{kind} values"
    raise VectorTypeError(
        f"column '{vec_col}' of {path} holds {holds}, not lists of numbers; store each "
        "vector as a list of floats (pass ?vector=NAME if another column holds them)"
    )


def _check_vector_rows(path: Path, vec_col: str, rows: Sequence[Any], unit: str) -> None:
    """Refuse (exit 2) the first vector that is not a flat list of numbers, naming its line
    or row and what it holds; the vector itself is never shown (it may be huge)."""
    for n, row in enumerate(rows, 1):
        if row is None:
            continue
        if not isinstance(row, list):
            bad = f"holds {_what(row)}"
        else:
            odd = next(
                (x for x in row if isinstance(x, bool) or not isinstance(x, int | float)), None
            )
            if odd is None and all(isinstance(x, int | float) for x in row):
                continue
            bad = f"holds a list containing {_what(odd)}"
        raise VectorTypeError(
            f"{path} {unit} {n}: '{vec_col}' {bad}, not a list of numbers; store each "
            "vector as a flat list of floats"
        )


def _require(path: Path, names: Sequence[str], id_col: str, vec_col: str) -> None:
    if not names:
        raise DataFileError(f"{path} holds no vectors")
    for col, param in ((id_col, "id"), (vec_col, "vector")):
        if col not in names:
            raise DataFileError(
                f"no column '{col}' in {path.name} (columns: {', '.join(names)}); "
                f"pass ?{param}=NAME in the store spec"
            )


class ParquetStore(BaseStore):
    """An in-memory copy of a vectors file; read-only by construction."""

    ordered = True  # rows come back in the order they were added

    scheme = "parquet"
    params = {
        "metric": Choice(*LOCAL_METRICS),
        "id": Str(),
        "vector": Str(),
        "text": Str(),
    }
    has_exact = True
    approximate = False
    #: in memory: one call for any number of ids or queries
    fetch_batch = query_batch = 1 << 30
    #: the reader, from the scheme; None: Parquet, or JSON Lines for a .jsonl/.ndjson name
    jsonl: bool | None = None

    def __init__(self, spec: StoreSpec, options: Any = None) -> None:
        super().__init__(spec, options)
        path = Path(spec.location).expanduser()
        if not path.is_file():
            raise DataFileError(f"vectors file {path} does not exist; check --store")
        self.path = path
        self.spec = f"{self.scheme}:{path}"
        self.metric = str(self.values.get("metric", "cosine"))
        id_col, vec_col = self.values.get("id", "id"), self.values.get("vector", "vector")
        text_col = self.values.get("text", "text")
        jsonl = self.jsonl
        if jsonl is None:
            jsonl = path.suffix.lower() in (".jsonl", ".ndjson")
        self.ids, raw, self.texts, self.metadata = _read_columns(
            path, id_col, vec_col, text_col, jsonl
        )
        if not self.ids:
            raise DataFileError(f"{path} holds no vectors")
        if isinstance(raw, np.ndarray):
            self.dimension = int(raw.shape[1])
            self.vectors = np.ascontiguousarray(raw)
            self.dims = np.full(len(self.ids), self.dimension, dtype=np.int32)
        else:
            lengths = Counter(len(v) for v in raw if v is not None)
            self.dimension = lengths.most_common(1)[0][0] if lengths else 0
            self.vectors, self.dims = pack_rows(raw, self.dimension)
        self._pos = {v: i for i, v in enumerate(self.ids)}
        if len(self._pos) != len(self.ids):
            raise DataFileError(f"{path} has duplicate ids; each id must appear once")

    def info(self) -> StoreInfo:
        _, score, hib = LOCAL_METRICS[self.metric]
        return StoreInfo(
            backend="parquet",
            count=len(self.ids),
            dimension=self.dimension,
            metric=self.metric,
            score=score,
            higher_is_better=hib,
            approximate=False,
            details={"path": str(self.path)},
        )

    def fingerprint(self) -> str:
        """xxh3-128 of the file's bytes."""
        h = xxhash.xxh3_128()
        with self.path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 22), b""):
                h.update(block)
        return h.hexdigest()

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        pos = [self._pos.get(i, -1) for i in ids]
        p = np.asarray(pos, dtype=np.int64)
        ok = p >= 0
        vectors = np.zeros((len(ids), self.dimension), dtype=np.float32)
        dims = np.zeros(len(ids), dtype=np.int32)
        vectors[ok] = self.vectors[p[ok]]
        dims[ok] = self.dims[p[ok]]
        texts = None
        if self.texts is not None:
            texts = [self.texts[j] if j >= 0 else None for j in pos]
        return Fetched(list(ids), vectors, ok, dims, texts)

    def _scan(self, batch: int) -> Iterator[VectorBatch]:
        for start in range(0, len(self.ids), batch):
            stop = min(start + batch, len(self.ids))
            yield VectorBatch(
                self.ids[start:stop],
                self.vectors[start:stop],
                self.dims[start:stop],
                self.texts[start:stop] if self.texts is not None else None,
                self.metadata[start:stop] if self.metadata is not None else None,
            )

    def _query_batch(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.exact_query(vectors, k)

    def _native_filter(self, node: Any) -> Any:
        """The positions whose ``metadata`` matches: an id selector."""
        from ._filtering import select

        return select(self.scheme, self.metadata, node, self.spec)

    def _filtered_query_batch(
        self, vectors: np.ndarray, k: int, native: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        from ._filtering import exact_over

        xq = as_float32_matrix(vectors, self.dimension)
        return exact_over(self.vectors, self.ids, native, xq, k, self.metric)

    def exact_query(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        xq = as_float32_matrix(vectors, self.dimension)
        D, P = exact_knn(self.vectors, xq, k, self.metric)
        return D, ids_of(P, self.ids)


class JsonlStore(ParquetStore):
    """``jsonl:PATH``: the same store, always read as JSON Lines whatever the file name."""

    scheme = "jsonl"
    jsonl = True


#: the name this class had before the base class existed
FileStore = ParquetStore


def open_store(spec: StoreSpec, options: Any = None) -> ParquetStore:
    cls = JsonlStore if spec.scheme == "jsonl" else ParquetStore
    return cls.open(spec, options)


def write_vectors_file(
    path: Path,
    ids: Sequence[str],
    vectors: np.ndarray,
    texts: Sequence[str] | None = None,
) -> None:
    """Write a NEW vectors file (Parquet, or JSONL by extension); refuses to overwrite."""
    if path.exists():
        raise DataFileError(f"{path} already exists; choose another --out or remove it")
    path.parent.mkdir(parents=True, exist_ok=True)
    vecs = np.asarray(vectors, dtype=np.float32)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        with path.open("w", encoding="utf-8") as f:
            for i, cid in enumerate(ids):
                row: dict[str, Any] = {"id": cid, "vector": vecs[i].tolist()}
                if texts is not None:
                    row["text"] = texts[i]
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = vecs.shape[1]
    columns: dict[str, Any] = {
        "id": pa.array(list(ids), pa.string()),
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1), pa.float32()), d),
    }
    if texts is not None:
        columns["text"] = pa.array(list(texts), pa.string())
    pq.write_table(pa.table(columns), path)
