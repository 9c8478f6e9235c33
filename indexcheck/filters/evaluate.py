"""Exact truth under a filter: which metadata rows match, as a boolean numpy mask.

This is the side of a filtered check that needs no engine: the id selector for FAISS,
Parquet and JSONL stores, and the reference every engine's filtered search is held to.

What "match" means, field by field (``present`` = the key is there and its value is
not null/None/NaN):

- ``$eq v``: present, the same kind as ``v`` (string, number or boolean; a boolean is
  never a number) and equal; numbers compare by value (``2020 == 2020.0``);
- ``$gt $gte $lt $lte``: present, a number (not a boolean), and ordered so;
- ``$in``: ``$eq`` to one of the values;
- ``$exists true``: present; ``$exists false``: not present;
- ``$ne`` / ``$nin`` on a present field: not ``$eq`` / not ``$in`` (a value of another
  kind, or a list or object, is "not equal");
- ``$ne`` / ``$nin`` on a MISSING field is where engines disagree, so it is a parameter,
  :class:`Missing`. :data:`ENGINE_MISSING` says what each engine does (measured on the
  engines the tests run: Chroma, Qdrant local, LlamaIndex SimpleVectorStore and LangChain's
  FAISS filter match the row; PostgreSQL, Milvus and LanceDB follow SQL NULL rules and do
  not). Pass ``missing=ENGINE_MISSING[scheme]`` to get the truth that engine will return.
"""

from __future__ import annotations

import math
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
    "faiss": Missing.INCLUDE,
    "parquet": Missing.INCLUDE,
    "jsonl": Missing.INCLUDE,
    "pgvector": Missing.EXCLUDE,
    "milvus": Missing.EXCLUDE,
    "lancedb": Missing.EXCLUDE,
    "upstash": Missing.EXCLUDE,
}


def _code(value: Any) -> int:
    if value is None or type(value).__name__ == "NAType":
        return _MISSING
    if isinstance(value, bool | np.bool_):
        return _BOOL
    if isinstance(value, int | float | np.integer | np.floating):
        return _MISSING if isinstance(value, float | np.floating) and math.isnan(value) else _NUMBER
    if isinstance(value, str):
        return _STRING
    return _OTHER


def _lookup(row: Any, path: list[str]) -> Any:
    value = row
    for seg in path:
        if not isinstance(value, Mapping) or seg not in value:
            return None
        value = value[seg]
    return value


class _Columns:
    """One object array (None for missing) and its kind codes per field, built once."""

    def __init__(self, rows: Any) -> None:
        self._rows = rows
        self._cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.n = _length(rows)

    def get(self, field: str) -> tuple[np.ndarray, np.ndarray]:
        if field not in self._cache:
            values = _column(self._rows, field, self.n)
            codes = np.fromiter((_code(v) for v in values), dtype=np.int8, count=self.n)
            self._cache[field] = (values, codes)
        return self._cache[field]


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
        out[:] = [_lookup(r, path) for r in rows]
        return out
    names = list(rows.column_names if hasattr(rows, "column_names") else rows.keys())
    if field in names:
        return _to_objects(rows[field])
    if path[0] in names and len(path) > 1:  # a struct/dict column holding nested metadata
        out = np.empty(n, dtype=object)
        out[:] = [_lookup(v, path[1:]) for v in _to_objects(rows[path[0]])]
        return out
    return np.full(n, None, dtype=object)


def _equal(values: np.ndarray, codes: np.ndarray, target: Any) -> np.ndarray:
    mask = np.zeros(len(values), dtype=bool)
    sel = codes == _KIND_CODE[kind(target)]
    if sel.any():
        mask[sel] = np.asarray(values[sel] == target, dtype=bool)
    return mask


def _cond(cond: Cond, cols: _Columns, missing: Missing) -> np.ndarray:
    values, codes = cols.get(cond.field)
    present = codes != _MISSING
    if cond.op is Op.EXISTS:
        return np.asarray(present if cond.value else ~present, dtype=bool)
    if cond.op in LIST_OPS:
        assert isinstance(cond.value, tuple)
        hit = np.zeros(cols.n, dtype=bool)
        for v in cond.value:
            hit |= _equal(values, codes, v)
    elif cond.op in (Op.EQ, Op.NE):
        assert not isinstance(cond.value, tuple)
        hit = _equal(values, codes, cond.value)
    else:
        hit = np.zeros(cols.n, dtype=bool)
        sel = codes == _NUMBER
        if sel.any():
            hit[sel] = np.asarray(_ORDER[cond.op](values[sel], cond.value), dtype=bool)
        return hit
    if cond.op in (Op.EQ, Op.IN):
        return hit
    return ~hit if missing is Missing.INCLUDE else present & ~hit


def _walk(node: Node, cols: _Columns, missing: Missing) -> np.ndarray:
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
    Table, a pandas DataFrame, or a mapping of equal-length columns; a dotted field is a
    column of that full name or a path into a column of dicts/structs. ``missing`` sets
    what ``$ne``/``$nin`` do on a row without the field (see :data:`ENGINE_MISSING`).
    """
    cols = _Columns(rows)
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
