"""Refusing a vectors file whose columns are missing or whose vectors are not numbers.

Shared by the streamed ``parquet:`` and ``jsonl:`` readers; every refusal is exit 2 and
names the column, the row or line, and what it holds, never the vector itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...errors import DataFileError, VectorTypeError

_KINDS = {str: "a string", bytes: "bytes", dict: "an object", bool: "a boolean"}


def _what(value: Any) -> str:
    return "null" if value is None else _KINDS.get(type(value), type(value).__name__)


def check_vector_type(path: Path, vec_col: str, kind: Any) -> None:
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


def check_vector_rows(
    path: Path, vec_col: str, rows: Sequence[Any], unit: str, first: int = 1
) -> None:
    """Refuse (exit 2) the first vector that is not a flat list of numbers, naming its line
    or row (``first`` is the number of ``rows[0]``) and what it holds; the vector itself is
    never shown (it may be huge)."""
    for n, row in enumerate(rows, first):
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


def require_columns(path: Path, names: Sequence[str], id_col: str, vec_col: str) -> None:
    if not names:
        raise DataFileError(f"{path} holds no vectors")
    for col, param in ((id_col, "id"), (vec_col, "vector")):
        if col not in names:
            raise DataFileError(
                f"no column '{col}' in {path.name} (columns: {', '.join(names)}); "
                f"pass ?{param}=NAME in the store spec"
            )
