"""diff-index's spill of stores that yield Arrow batches (``parquet:``), on the buffers.

:func:`spill` writes what :func:`.hash_join.spill_store` writes (the keys Parquet file and
the raw float32 file of unit vectors, same schema and flags) from undecoded Arrow batches:
text keys are xxh3-128 over the string buffer (:func:`indexcheck.inputs.text_keys.content_keys`),
lengths come from the list offsets, flags and unit vectors are computed per block in numpy,
and the file is decoded in a thread a few blocks ahead (:func:`.hash_join.prefetch`). No
Python code runs per row. Two such stores without chunks files are not spilled at all
(:mod:`.band`); :func:`spill_pair` spills the old side and writes only the new side's keys,
whose vectors :func:`new_blocks` reads once after the join. The old vectors are written at the
first one's length until the store's dimension is known (its most common length); another
dimension at the end, or what only the row reader handles (a null element, ids not strings or
integers, no text column), falls back to ``spill_store`` (:class:`Fallback` from
:func:`new_blocks`), which gives the same answer.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import DataFileError
from ...inputs.corpus import Corpus
from ...inputs.text_keys import content_keys
from ...stores.base import VectorStore
from ...stores.files.readers import list_lengths
from ...vectors import normalize_rows
from .hash_join import Flag, Side, _schema, prefetch, spill_store

#: rows per Arrow block (6 MB of 384-d float32; Arrow's reader holds about six blocks
#: while decoding, so larger blocks cost memory and save no time)
ROWS = 4096


def store_dimension(store: VectorStore) -> int:
    """The store's dimension (from ``info``, else its first vectors; 0 when empty)."""
    d = store.info().dimension
    if d:
        return d
    for batch in store.iter_vectors(16):
        return int(batch.vectors.shape[1])
    return 0


def row_count(store: VectorStore) -> int:
    """The rows a store holds, without a pass over the vectors where it can say so."""
    if getattr(store, "arrow_ready", False):
        return int(store.count)  # type: ignore[attr-defined]
    return store.info().count


class Fallback(Exception):
    """The new side's vectors hold what only the row-by-row reader handles: spill it with
    ``spill_store`` and compare again."""


def spill(
    store: VectorStore,
    name: str,
    folder: Path,
    corpus: Corpus | None,
    dimension: int | None,
    chunks_option: str,
    tick: Callable[[int], None] | None = None,
) -> Side:
    """``spill_store``, on Arrow buffers when the store offers them and ``corpus`` is None.

    ``dimension`` is the reference length (None: the store's own)."""
    if corpus is None and getattr(store, "arrow_ready", False):
        guessed = dimension is None and store.known_dimension is None  # type: ignore[attr-defined]
        side = _spill_arrow(store, name, folder, dimension, tick)
        if side is None and guessed and store.known_dimension is not None:  # type: ignore[attr-defined]
            # the pass learned another dimension than its first vector's: again at that one
            side = _spill_arrow(store, name, folder, dimension, tick)
        if side is not None:
            return side
    d = store_dimension(store) if dimension is None else dimension
    return spill_store(store, name, folder, corpus, d, chunks_option, tick)


def spill_pair(
    old: VectorStore,
    new: VectorStore,
    folder: Path,
    chunks_old: Corpus | None,
    chunks_new: Corpus | None,
) -> tuple[Side, Side]:
    """Both sides' spills; the new side's reference length is the old side's dimension.

    When the new store offers Arrow batches (and no chunks file is given for it), only its
    keys are written, in a thread beside the old side's spill: its ``Side`` has no vectors
    file and :func:`new_blocks` reads them after the join."""
    side_new = None
    streamed = getattr(new, "arrow_ready", False) and chunks_new is None
    if streamed:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1) as pool:
            fn = pool.submit(_keys_arrow, new, "new", folder)
            side_old = spill(old, "old", folder, chunks_old, None, "--chunks-old")
            side_new = fn.result()
    else:
        side_old = spill(old, "old", folder, chunks_old, None, "--chunks-old")
    if side_new is None:
        d = side_old.dimension
        side_new = spill(new, "new", folder, chunks_new, d, "--chunks-new")
    else:
        side_new.dimension = side_old.dimension
    return side_old, side_new


def respill_new(new: VectorStore, folder: Path, dimension: int) -> Side:
    """The new side spilled by ``spill_store`` (after :class:`Fallback`)."""
    return spill_store(new, "new", folder, None, dimension, "--chunks-new")


def _as_ids(col: Any) -> Any:
    """The id column as Arrow strings, as the row reader writes them (``str``), or None."""
    import pyarrow as pa

    if col.null_count:
        return None
    if pa.types.is_integer(col.type):
        return col.cast(pa.string())
    if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
        return col
    return None


#: rows a keys file's row group holds at least (blocks are gathered until then: thousands
#: of small row groups slow every later read of the file)
GROUP_ROWS = 65536


class _Writer:
    """A keys file written in row groups of at least GROUP_ROWS rows."""

    def __init__(self, path: Path) -> None:
        import pyarrow.parquet as pq

        self._out = pq.ParquetWriter(
            path, _schema(), compression="none", use_dictionary=False, write_statistics=False
        )
        self._held: list[Any] = []
        self._rows = 0

    def write_table(self, table: Any) -> None:
        self._held.append(table)
        self._rows += table.num_rows
        if self._rows >= GROUP_ROWS:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        if self._held:
            table = pa.concat_tables(self._held)
            self._out.write_table(table, row_group_size=table.num_rows)
        self._held, self._rows = [], 0

    def close(self) -> None:
        try:
            self._flush()
        finally:
            self._out.close()


def _writer(path: Path) -> _Writer:
    return _Writer(path)


def _key_columns(store: Any, rb: Any, seq: int, flag: np.ndarray) -> Any:
    """The keys table of a block (id, text columns first), or None when the row reader
    must do it (an id column of another type, no text column)."""
    import pyarrow as pa

    ids = _as_ids(rb.column(0))
    texts = rb.column(rb.num_columns - 1) if rb.num_columns > 1 else None
    if ids is None or texts is None or not pa.types.is_string(texts.type):
        return None
    if texts.null_count:
        first = int(np.flatnonzero(~texts.is_valid().to_numpy(False))[0])
        raise DataFileError(
            f"{store.spec}: vector '{ids[first].as_py()}' has no stored text; "
            "pass --chunks-old/--chunks-new with the id and text of every chunk"
        )
    h1, h2 = content_keys(texts)
    n = rb.num_rows
    cols = {
        "seq": pa.array(np.arange(seq, seq + n, dtype=np.int64)),
        "id": ids,
        "h1": pa.array(h1),
        "h2": pa.array(h2),
        "flag": pa.array(flag),
    }
    return pa.table(cols, schema=_schema())


def _keys_arrow(store: Any, name: str, folder: Path) -> Side | None:
    """The keys of every row (flag OK: the flags come with the vectors, from
    :func:`new_blocks`), from the id and text columns only; None as :func:`_spill_arrow`."""
    if not getattr(store, "stores_texts", False):
        return None
    keys_path = folder / f"{name}.keys.parquet"
    seq = 0
    writer = _writer(keys_path)
    try:
        for rb in prefetch(store.arrow_batches(ROWS, False, ("id", "text"))):
            table = _key_columns(store, rb, seq, np.zeros(rb.num_rows, dtype=np.uint8))
            if table is None:
                return None
            writer.write_table(table)
            seq += rb.num_rows
    finally:
        writer.close()
    if seq == 0:
        return None
    return Side(name, keys_path, None, 0, seq, store.spec, [])


def _spill_arrow(
    store: Any,
    name: str,
    folder: Path,
    dimension: int | None,
    tick: Callable[[int], None] | None,
) -> Side | None:
    """The spill, or None when this path cannot give ``spill_store``'s answer."""
    if not getattr(store, "stores_texts", False):
        return None
    d = dimension if dimension is not None else store.known_dimension
    keys_path, vec_path = folder / f"{name}.keys.parquet", folder / f"{name}.f32"
    seq = 0
    writer = _writer(keys_path)
    try:
        with vec_path.open("wb") as vf:
            for rb in prefetch(store.arrow_batches(ROWS, False)):
                n = rb.num_rows
                col = rb.column(1)
                dims = list_lengths(col, 0).astype(np.int32)
                if d is None:
                    present = np.flatnonzero(dims > 0)
                    if not present.size:
                        return None
                    d = int(dims[present[0]])  # until the store knows its dimension
                matrix = _matrix(col, dims, d)
                if matrix is None:
                    return None
                flag = np.zeros(n, dtype=np.uint8)
                unit = unit_rows(matrix, dims, d, flag)
                table = _key_columns(store, rb, seq, flag)
                if table is None:
                    return None
                writer.write_table(table)
                vf.write(unit.data)
                seq += n
                if tick is not None:
                    tick(n)
    finally:
        writer.close()
    if seq == 0 or (dimension is None and store.dimension != d):
        return None
    return Side(name, keys_path, vec_path, int(d or 0), seq, store.spec, [])


def new_blocks(store: Any, d: int) -> Generator[tuple[int, np.ndarray, np.ndarray], None, None]:
    """(first seq, unit float32 (n, d) rows, flags) of the new store's blocks, in order,
    read from its vector column once (reference length ``d``, the old dimension), decoded
    and made unit in a thread ahead of the caller. Raises :class:`Fallback` on a block only
    the row reader handles."""
    yield from prefetch(unit_blocks(store, d))


def unit_blocks(
    store: Any, d: int, group: int | None = None
) -> Generator[tuple[int, np.ndarray, np.ndarray], None, None]:
    """(first seq, unit float32 (n, d) rows, flags) of the store's vector column (of one
    row group when ``group`` is given), in order, at reference length ``d``. Raises
    :class:`Fallback` on a block only the row reader handles (a null element)."""
    seq = 0 if group is None else store.arrow_groups[group]
    for rb in store.arrow_batches(ROWS, False, ("vector",), group):
        col = rb.column(0)
        dims = list_lengths(col, 0).astype(np.int32)
        matrix = _matrix(col, dims, d)
        if matrix is None:
            raise Fallback(store.spec)
        flag = np.zeros(rb.num_rows, dtype=np.uint8)
        yield seq, unit_rows(matrix, dims, d, flag), flag
        seq += rb.num_rows


def _matrix(col: Any, dims: np.ndarray, d: int) -> np.ndarray | None:
    """float32 (n, d): the rows of length ``d``, zero elsewhere; None on a null element."""
    import pyarrow as pa

    n = len(dims)
    if col.null_count == 0 and bool((dims == d).all()):
        flat = col.flatten()
        if flat.null_count:
            return None
        values = flat.to_numpy(zero_copy_only=False)
        return np.asarray(values, dtype=np.float32).reshape(n, d)
    out = np.zeros((n, d), dtype=np.float32)
    good = (dims == d) & col.is_valid().to_numpy(zero_copy_only=False)
    if good.any() and d:
        flat = col.filter(pa.array(good)).flatten()
        if flat.null_count:
            return None
        out[good] = np.asarray(flat.to_numpy(zero_copy_only=False), np.float32).reshape(-1, d)
    return out


def unit_rows(matrix: np.ndarray, dims: np.ndarray, d: int, flag: np.ndarray) -> np.ndarray:
    """Unit float32 rows of ``matrix`` (n, d), bad rows zero; sets ``flag`` as
    ``hash_join._block_vectors`` does (missing, dimension, non-finite, zero), on the block:
    the squared norms screen the rows, and only the screened ones are looked at again."""
    missing = dims == 0
    flag[missing] = Flag.MISSING
    flag[~missing & (dims != d)] = Flag.DIMENSION
    with np.errstate(invalid="ignore", over="ignore"):
        sq = np.einsum("ij,ij->i", matrix, matrix)
    bad = np.flatnonzero(~np.isfinite(sq))
    if bad.size:  # a NaN or inf element, or finite values whose squares overflow
        with np.errstate(invalid="ignore"):
            nonfinite = bad[~np.isfinite(matrix[bad]).all(axis=1)]
        flag[nonfinite[flag[nonfinite] == Flag.OK]] = Flag.NON_FINITE
    else:
        nonfinite = bad
    zero = np.flatnonzero(sq == 0)
    if zero.size:  # all zero, or so small that the squares underflow
        allzero = zero[~matrix[zero].any(axis=1)]
        flag[allzero[flag[allzero] == Flag.OK]] = Flag.ZERO
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        norms = np.sqrt(sq)
        inv = np.where(norms > 0, np.float32(1.0) / norms, np.float32(0.0)).astype(np.float32)
    inv[flag != Flag.OK] = 0.0
    inv[nonfinite] = 0.0
    with np.errstate(invalid="ignore"):
        unit = matrix * inv[:, None]
    if nonfinite.size:
        unit[nonfinite] = 0.0  # NaN * 0 is NaN
    # finite rows whose squares overflowed or underflowed keep their direction, as the row
    # reader's normalize_rows gives them (scaled by their largest component first)
    odd = np.flatnonzero((flag == Flag.OK) & ((~np.isfinite(sq)) | (sq == 0)))
    odd = odd[np.isin(odd, nonfinite, invert=True)]
    if odd.size:
        unit[odd] = normalize_rows(matrix[odd])
    return unit
