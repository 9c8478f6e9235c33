"""Exact truth under a filter: which metadata rows match, as a boolean numpy mask.

The side of a filtered check that needs no engine: the id selector for FAISS, Parquet and
JSONL stores, and the reference every engine's filtered search is held to. ``present`` means
the key is there and not null/None/NaN. ``$eq v``: present, the same kind as ``v`` (string,
number or boolean; a boolean is never a number) and equal, numbers by value (2020 ==
2020.0); ``$gt $gte $lt $lte``: present, a number, ordered so; ``$in``: ``$eq`` to one value;
``$exists``: present or not; ``$ne``/``$nin`` on a present field: not ``$eq``/not ``$in``.
On a missing field engines disagree, so it is a parameter, :class:`Missing`;
:data:`ENGINE_MISSING` says what each engine does (the table on docs/concepts/filters.md,
held by the engine tests), and ``missing=ENGINE_MISSING[scheme]`` gives that engine's truth.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any

import numpy as np

from indexcheck.errors import FilterError
from indexcheck.filters.grammar import LIST_OPS, And, Cond, Node, Op, kind

_MISSING, _BOOL, _NUMBER, _STRING, _OTHER = 0, 1, 2, 3, 4
_ORDER = {Op.GT: operator.gt, Op.GTE: operator.ge, Op.LT: operator.lt, Op.LTE: operator.le}
_KIND_CODE = {"bool": _BOOL, "number": _NUMBER, "string": _STRING}


class Missing(StrEnum):
    """What ``$ne`` / ``$nin`` do on a row that lacks the field."""

    EXCLUDE = "exclude"  # SQL NULL rules: no comparison on a missing field is true
    INCLUDE = "include"  # negation: "not equal" is true when there is nothing to equal


# What each engine does with $ne/$nin on a missing field, through the translations in
# this package. "upstash" is read from its documentation (operators "filter keys whose
# values ..."): not measurable here, so not verified.
ENGINE_MISSING: dict[str, Missing] = {
    "chroma": Missing.INCLUDE,
    "qdrant": Missing.INCLUDE,
    "llamaindex": Missing.INCLUDE,
    "redis": Missing.INCLUDE,
    "faiss": Missing.INCLUDE,
    "parquet": Missing.INCLUDE,
    "jsonl": Missing.INCLUDE,
    "pgvector": Missing.EXCLUDE,
    "milvus": Missing.EXCLUDE,
    "lancedb": Missing.EXCLUDE,
    "upstash": Missing.EXCLUDE,
    "sqlitevec": Missing.EXCLUDE,
    # Pinecone since 2024 (deepset-ai/haystack-core-integrations issue 590); held by the
    # emulator, which follows that report, not by a real engine
    "pinecone": Missing.EXCLUDE,
    "elasticsearch": Missing.INCLUDE,
    "opensearch": Missing.INCLUDE,
    # Weaviate's NotEqual is the complement of Equal in its inverted index; held by the
    # emulator, which follows that, not by a real engine
    "weaviate": Missing.INCLUDE,
    # turbopuffer documents NotEq and NotIn as the inverses of Eq and In; held by the
    # emulator, which follows those pages, not by a real engine
    "turbopuffer": Missing.INCLUDE,
    # MQL: $ne/$nin are negations; held by the emulator, which follows the MQL pages
    "mongodb": Missing.INCLUDE,
}


def _code(value: Any) -> int:
    if value is None or type(value).__name__ == "NAType":
        return _MISSING
    if isinstance(value, (bool, np.bool_)):
        return _BOOL
    if isinstance(value, (int, float, np.integer, np.floating)):
        return _MISSING if value != value else _NUMBER  # NaN is no value
    if isinstance(value, str):
        return _STRING
    return _OTHER


# exact types first: one dict lookup per value instead of an isinstance chain
_FAST_CODE = {str: _STRING, int: _NUMBER, float: _NUMBER, bool: _BOOL, type(None): _MISSING}


def _codes(values: np.ndarray) -> np.ndarray:
    """Kind code per value, (n,) int8."""
    fast = _FAST_CODE.get
    codes = np.fromiter((fast(type(v), -1) for v in values), dtype=np.int8, count=len(values))
    slow = np.flatnonzero(codes == -1)
    if slow.size:
        codes[slow] = [_code(v) for v in values[slow]]
    num = np.flatnonzero(codes == _NUMBER)
    if num.size:
        sub = values[num]
        codes[num[np.asarray(sub != sub, dtype=bool)]] = _MISSING  # NaN != NaN
    return codes


def value_at(row: Any, path: Sequence[str]) -> Any:
    """``row[a][b]`` for the path ``[a, b]`` through nested mappings (decoded JSON
    metadata); None where a step is missing."""
    value = row
    for seg in path:
        if not isinstance(value, Mapping) or seg not in value:
            return None
        value = value[seg]
    return value


class MetadataColumns:
    """The rows read once as columns: per field, the values and their kind codes, built on
    first use and kept, so many filters (one per distinct question filter) over the same
    rows pay for the Python-level read once. Pass it to :func:`evaluate` as ``rows``."""

    def __init__(self, rows: Any) -> None:
        self._rows = rows
        self._cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._numbers: dict[str, np.ndarray] = {}
        self._strings: dict[str, tuple[np.ndarray, dict[str, int]]] = {}
        self.n = _length(rows)

    def numbers(self, field: str) -> np.ndarray:
        """(n,) int64 or float64 of the field's numbers (0 elsewhere; mask with codes).
        Ints beyond int64, or ints beside floats past 2**53, compare as Python objects."""
        if field not in self._numbers:
            values, codes = self.get(field)
            if values.dtype != object:
                self._numbers[field] = values
            else:
                sel = codes == _NUMBER
                nums = values[sel].tolist()
                try:
                    arr = np.asarray(nums)
                    if arr.dtype == object or (
                        arr.dtype.kind == "f"
                        and any(abs(v) > 2**53 for v in nums if isinstance(v, int))
                    ):
                        raise OverflowError
                    out = np.zeros(self.n, dtype=arr.dtype if arr.size else np.int64)
                except OverflowError:
                    arr, out = np.asarray(nums, dtype=object), np.zeros(self.n, dtype=object)
                out[sel] = arr
                self._numbers[field] = out
        return self._numbers[field]

    def strings(self, field: str) -> tuple[np.ndarray, dict[str, int]]:
        """(n,) int64 ids of the field's strings (-1 elsewhere) and the id of each string."""
        if field not in self._strings:
            values, codes = self.get(field)
            sel = np.flatnonzero(codes == _STRING)
            lookup: dict[str, int] = {}
            ids = np.full(self.n, -1, dtype=np.int64)
            ids[sel] = [lookup.setdefault(v, len(lookup)) for v in values[sel]]
            self._strings[field] = (ids, lookup)
        return self._strings[field]

    def get(self, field: str) -> tuple[np.ndarray, np.ndarray]:
        if field not in self._cache:
            typed = _arrow_column(self._rows, field)
            if typed is None:
                values = _column(self._rows, field, self.n)
                typed = values, _codes(values)
            self._cache[field] = typed
        return self._cache[field]


def _arrow_column(rows: Any, field: str) -> tuple[np.ndarray, np.ndarray] | None:
    """A pyarrow string/number/bool column as a typed array and codes, with no Python
    loop; None for anything else (the generic path handles it)."""
    if not hasattr(rows, "num_rows") or field not in rows.column_names:
        return None
    import pyarrow.types as pt

    col = rows[field]
    typ = col.type
    if pt.is_integer(typ):
        code, values = _NUMBER, col.fill_null(0).to_numpy()
    elif pt.is_floating(typ):
        code, values = _NUMBER, col.fill_null(float("nan")).to_numpy()
    elif pt.is_boolean(typ):
        code, values = _BOOL, col.fill_null(False).to_numpy(zero_copy_only=False)
    elif pt.is_string(typ) or pt.is_large_string(typ):
        code, values = _STRING, col.to_numpy(zero_copy_only=False)
    else:
        return None
    codes = np.full(len(values), code, dtype=np.int8)
    codes[np.asarray(col.is_null().to_numpy(zero_copy_only=False), dtype=bool)] = _MISSING
    if pt.is_floating(typ):
        codes[np.isnan(values)] = _MISSING
    return np.asarray(values), codes


def _length(rows: Any) -> int:
    if hasattr(rows, "num_rows"):  # pyarrow Table / RecordBatch
        return int(rows.num_rows)
    if hasattr(rows, "columns") and hasattr(rows, "iloc"):  # pandas DataFrame
        return len(rows)
    if isinstance(rows, Mapping):
        lengths = {len(v) for v in rows.values()}
        if len(lengths) > 1:
            raise FilterError("metadata columns differ in length; pass equal-length columns")
        return lengths.pop() if lengths else 0
    return len(rows)


def _to_objects(seq: Any) -> np.ndarray:
    if hasattr(seq, "to_pylist"):
        seq = seq.to_pylist()
    elif hasattr(seq, "tolist"):
        seq = seq.tolist()
    out = np.empty(len(seq), dtype=object)
    out[:] = list(seq)
    return out


def _column(rows: Any, field: str, n: int) -> np.ndarray:
    """The values of ``field`` (a dotted path) for every row, None where missing."""
    path = field.split(".")
    columnar = hasattr(rows, "num_rows") or hasattr(rows, "iloc") or isinstance(rows, Mapping)
    if not columnar:
        out = np.empty(n, dtype=object)
        try:
            if len(path) > 1:
                raise AttributeError
            out[:] = [r.get(field) for r in rows]
        except AttributeError:
            out[:] = [value_at(r, path) for r in rows]
        return out
    names = list(rows.column_names if hasattr(rows, "column_names") else rows.keys())
    if field in names:
        return _to_objects(rows[field])
    if path[0] in names and len(path) > 1:  # a struct/dict column holding nested metadata
        out = np.empty(n, dtype=object)
        out[:] = [value_at(v, path[1:]) for v in _to_objects(rows[path[0]])]
        return out
    return np.full(n, None, dtype=object)


def _equal(cols: MetadataColumns, field: str, target: Any) -> np.ndarray:
    values, codes = cols.get(field)
    code = _KIND_CODE[kind(target)]
    if code == _STRING:
        ids, lookup = cols.strings(field)
        return np.asarray(ids == lookup.get(target, -2), dtype=bool)
    if code == _NUMBER:
        same = np.asarray(cols.numbers(field) == target, dtype=bool)
        return np.asarray(np.logical_and(codes == _NUMBER, same), dtype=bool)
    mask = np.zeros(len(values), dtype=bool)
    sel = codes == code
    if sel.any():
        mask[sel] = np.asarray(values[sel] == target, dtype=bool)
    return mask


def _cond(cond: Cond, cols: MetadataColumns, missing: Missing) -> np.ndarray:
    _, codes = cols.get(cond.field)
    present = codes != _MISSING
    if cond.op is Op.EXISTS:
        return np.asarray(present if cond.value else ~present, dtype=bool)
    if cond.op in LIST_OPS:
        assert isinstance(cond.value, tuple)
        hit = np.zeros(cols.n, dtype=bool)
        for v in cond.value:
            hit |= _equal(cols, cond.field, v)
    elif cond.op in (Op.EQ, Op.NE):
        assert not isinstance(cond.value, tuple)
        hit = _equal(cols, cond.field, cond.value)
    else:
        order = np.asarray(_ORDER[cond.op](cols.numbers(cond.field), cond.value), dtype=bool)
        return np.asarray(np.logical_and(codes == _NUMBER, order), dtype=bool)
    if cond.op in (Op.EQ, Op.IN):
        return hit
    return ~hit if missing is Missing.INCLUDE else present & ~hit


def _walk(node: Node, cols: MetadataColumns, missing: Missing) -> np.ndarray:
    if isinstance(node, Cond):
        return _cond(node, cols, missing)
    masks = [_walk(item, cols, missing) for item in node.items]
    reduce = np.logical_and.reduce if isinstance(node, And) else np.logical_or.reduce
    return np.asarray(reduce(masks), dtype=bool)


def evaluate(
    node: Node, rows: Sequence[Mapping[str, Any]] | Any, *, missing: Missing | str = Missing.INCLUDE
) -> np.ndarray:
    """Boolean mask (n,) of the rows that match ``node``.

    ``rows``: a sequence of metadata dicts (nested dicts for dotted paths), a pyarrow
    Table, a pandas DataFrame, a mapping of equal-length columns, or a
    :class:`MetadataColumns` over any of those (reuse it across filters); a dotted field
    is a column of that full name or a path into a column of dicts/structs. Typed pyarrow
    columns are compared without a Python loop. ``missing`` sets
    what ``$ne``/``$nin`` do on a row without the field (see :data:`ENGINE_MISSING`).
    """
    cols = rows if isinstance(rows, MetadataColumns) else MetadataColumns(rows)
    if cols.n == 0:
        return np.zeros(0, dtype=bool)
    return np.asarray(_walk(node, cols, Missing(missing)), dtype=bool)


def metadata_fields(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every field (dotted paths into nested dicts) that at least one row has with a
    value that is not null: the ``known_fields`` for :func:`check_fields`."""
    seen: dict[str, None] = {}

    def walk(obj: Mapping[str, Any], prefix: str) -> None:
        for key, value in obj.items():
            name = f"{prefix}{key}"
            if isinstance(value, Mapping):
                walk(value, name + ".")
            elif _code(value) != _MISSING:
                seen.setdefault(name, None)

    for row in rows:
        if isinstance(row, Mapping):
            walk(row, "")
    return sorted(seen)
