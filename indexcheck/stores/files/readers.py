"""Streamed readers of a vectors file for the ``parquet:`` and ``jsonl:`` stores.

Neither reader holds the file: :class:`ParquetReader` reads with ``iter_batches`` (columns
asked, one row group at a time), :class:`JsonlReader` line by line. Each offers three passes:
:meth:`survey` (validates ids and vectors, returns each id's key and locator, a row number or
a line's byte offset, for :class:`~indexcheck.stores.files.id_map.IdMap`, and the dimension),
:meth:`batches` (every row once, in file order, as :class:`VectorBatch`) and :meth:`take` (the
rows at sorted locators, reading only their row groups or lines).

A Parquet vector column with no null and one length comes back as a float32 matrix straight
from Arrow's buffers (a null element reads as NaN); any other goes through Python lists and
``pack_rows`` (a null element is refused).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import DataFileError, VectorTypeError
from ...inputs.files import c_path, loads_json
from ...inputs.limits import bounded_lines, record_limit
from ...inputs.rowfiles import arrow_errors
from ..base import VectorBatch, pack_rows
from .id_map import KeyedOffsets, column_id_keys, id_keys
from .vector_checks import check_vector_rows, check_vector_type, require_columns

#: rows decoded at once by the survey and by :meth:`take` (64 MB of 384-d float32 at most
#: with the ids: ``buffer_size`` keeps pyarrow from reading a whole column chunk at once)
READ_ROWS = 16384
READ_BUFFER = 1 << 20


def list_lengths(col: Any, null: int) -> np.ndarray:
    """The length of each list in an Arrow list array, ``null`` for a null list
    (``fill_null`` is skipped when there is none: it costs a copy of the block)."""
    import pyarrow.compute as pc

    n = pc.list_value_length(col)
    if n.null_count:
        n = n.fill_null(null)
    out: np.ndarray = n.to_numpy(zero_copy_only=False)
    return out


def _dimension(lengths: Counter[int]) -> int:
    return lengths.most_common(1)[0][0] if lengths else 0


def _count_lengths(lengths: Counter[int], values: np.ndarray) -> None:
    """Add ``values`` to ``lengths`` in order of first appearance (ties keep file order)."""
    if not values.size:
        return
    uniq, first, counts = np.unique(values, return_index=True, return_counts=True)
    for j in np.argsort(first, kind="stable"):
        lengths[int(uniq[j])] += int(counts[j])


class ParquetReader:
    def __init__(self, path: Path, id_col: str, vec_col: str, text_col: str) -> None:
        import pyarrow.parquet as pq

        self.path, self.id_col, self.vec_col = path, id_col, vec_col
        try:
            with c_path(path) as readable:  # a name that is not UTF-8 too
                self.pf = pq.ParquetFile(readable, buffer_size=READ_BUFFER, pre_buffer=False)
            schema = self.pf.schema_arrow
        except arrow_errors() as exc:  # pyarrow raises several types for bad files
            raise DataFileError(f"cannot read {path} as Parquet: {exc}") from None
        names = schema.names
        require_columns(path, names, id_col, vec_col)
        check_vector_type(path, vec_col, schema.field(vec_col).type)
        self.has_text = text_col in names
        self.has_meta = "metadata" in names
        self.columns = [id_col, vec_col]
        self.columns += [text_col] if self.has_text else []
        self.columns += ["metadata"] if self.has_meta else []
        md = self.pf.metadata
        sizes = [md.row_group(g).num_rows for g in range(md.num_row_groups)]
        self.starts = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
        self.fast = True
        #: where :meth:`take` left off: (group, first row, record batch, the read going on)
        self._cursor: Any = None

    def _groups(
        self,
        size: int,
        columns: list[str],
        groups: Any = None,
        threads: bool = True,
        private: bool = False,
    ) -> Iterator[tuple[int, Any]]:
        """(first row, record batch) of the row groups asked, in file order (``threads``:
        Arrow decodes the columns in parallel; ``private``: through a reader of its own,
        for callers reading several groups at once on their threads)."""
        pf = self.pf
        if private:
            import pyarrow.parquet as pq

            with c_path(self.path) as readable:
                pf = pq.ParquetFile(
                    readable, buffer_size=READ_BUFFER, pre_buffer=False, metadata=self.pf.metadata
                )
        for g in range(len(self.starts) - 1) if groups is None else groups:
            start = int(self.starts[g])
            try:
                for rb in pf.iter_batches(
                    batch_size=size, row_groups=[g], columns=columns, use_threads=threads
                ):
                    yield start, rb
                    start += rb.num_rows
            except (OSError, ValueError) as exc:  # ArrowInvalid/ArrowIOError are these
                raise DataFileError(f"cannot read {self.path} as Parquet: {exc}") from None

    def survey_ids(self) -> tuple[list[np.ndarray], list[np.ndarray], dict[str, Any] | None]:
        """The ids' keys and row numbers (the id column only), and the store's meta when the
        schema and statistics give it (a fixed-size list column without a null); else None:
        :meth:`vector_survey` learns it from the vectors."""
        keys: list[np.ndarray] = []
        locs: list[np.ndarray] = []
        for start, rb in self._groups(READ_ROWS, [self.id_col]):
            k = column_id_keys(rb.column(0))
            keys.append(k)
            locs.append(np.arange(start, start + len(k), dtype=np.int64))
        size = self._fixed_size_without_nulls()
        if size is None:
            return keys, locs, None
        count = int(self.starts[-1])
        self.fast = count > 0
        return keys, locs, {"dimension": size if count else 0, "fast": self.fast}

    def vector_survey(self) -> VectorSurvey:
        return VectorSurvey(self)

    def survey_vectors(self) -> dict[str, Any]:
        """The store's meta (dimension, fast) from one pass over the vector column."""
        seen = self.vector_survey()
        for start, rb in self._groups(READ_ROWS, [self.vec_col]):
            seen.add(rb.column(0), start)
        return seen.finish()

    def survey(self) -> tuple[list[np.ndarray], list[np.ndarray], dict[str, Any]]:
        keys, locs, meta = self.survey_ids()
        return keys, locs, meta if meta is not None else self.survey_vectors()

    def _fixed_size_without_nulls(self) -> int | None:
        """The list size of a fixed-size-list vector column whose every row group's
        statistics count no null (no null vector, no null element); else None."""
        import pyarrow as pa

        kind = self.pf.schema_arrow.field(self.vec_col).type
        if not pa.types.is_fixed_size_list(kind):
            return None
        md = self.pf.metadata
        leaves = [
            j
            for j in range(md.num_columns)
            if md.schema.column(j).path.split(".")[0] == self.vec_col
        ]
        if len(leaves) != 1:
            return None
        for g in range(md.num_row_groups):
            stats = md.row_group(g).column(leaves[0]).statistics
            if stats is None or not stats.has_null_count or stats.null_count != 0:
                return None
        return int(kind.list_size)

    def _convert(self, rb: Any, dimension: int, first: int) -> VectorBatch:
        ids = [str(x) for x in rb.column(0).to_pylist()]
        col = rb.column(1)
        n = len(ids)
        if self.fast:
            flat = col.flatten().to_numpy(zero_copy_only=False).astype(np.float32)
            vectors = flat.reshape(n, dimension)
            dims = np.full(n, dimension, dtype=np.int32)
        else:
            # as pack_rows: rows of another length (or null) are zero, with their length
            # (0 for null) in dims; the survey refused null elements in such a column
            import pyarrow as pa

            lengths = list_lengths(col, 0)
            dims = lengths.astype(np.int32)
            good = (lengths == dimension) & col.is_valid().to_numpy(zero_copy_only=False)
            vectors = np.zeros((n, dimension), dtype=np.float32)
            if good.any() and dimension:
                flat = col.filter(pa.array(good)).flatten().to_numpy(zero_copy_only=False)
                vectors[good] = flat.astype(np.float32).reshape(-1, dimension)
        j = 2
        texts = metadata = None
        if self.has_text:
            texts, j = rb.column(j).to_pylist(), j + 1
        if self.has_meta:
            metadata = rb.column(j).to_pylist()
        return VectorBatch(ids, vectors, dims, texts, metadata)

    def batches(self, size: int, dimension: int) -> Iterator[VectorBatch]:
        for start, rb in self._groups(size, self.columns):
            yield self._convert(rb, dimension, start)

    def find_ids(self, ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(which asked id, row number) of every row whose id key is an asked id's key,
        from one pass over the id column: the lookup of a few ids without the id map."""
        asked = id_keys(ids)
        order = np.argsort(asked, kind="stable")
        ranked = asked[order]
        which: list[np.ndarray] = []
        rows: list[np.ndarray] = []
        for start, rb in self._groups(READ_ROWS, [self.id_col]):
            k = column_id_keys(rb.column(0))
            lo = np.searchsorted(ranked, k, side="left")
            hi = np.searchsorted(ranked, k, side="right")
            for r in np.flatnonzero(hi > lo).tolist():  # rows holding an asked key (few)
                which.append(order[lo[r] : hi[r]])
                rows.append(np.full(hi[r] - lo[r], start + r, dtype=np.int64))
        if not which:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(which).astype(np.int64), np.concatenate(rows)

    def take_ids(self, rows: np.ndarray) -> list[list[str]]:
        """The ids at ``rows`` (sorted, unique row numbers), in that order (ids only)."""
        import pyarrow as pa

        groups = np.unique(np.searchsorted(self.starts, rows, side="right") - 1)
        out: list[list[str]] = []
        for start, rb in self._groups(READ_ROWS, [self.id_col], groups.tolist()):
            lo, hi = np.searchsorted(rows, [start, start + rb.num_rows])
            if hi > lo:
                got = rb.column(0).take(pa.array(rows[lo:hi] - start)).to_pylist()
                out.append([str(x) for x in got])
        return out

    def take(self, rows: np.ndarray, dimension: int) -> list[VectorBatch]:
        """The rows at ``rows`` (sorted, unique row numbers), in that order. A group is read
        up to its last asked row, and the read goes on from there when the next call asks
        for later rows of the same group (blocks of ids asked in file order, as the Ray
        workers do, decode each group once instead of once a block)."""
        import pyarrow as pa

        groups = np.unique(np.searchsorted(self.starts, rows, side="right") - 1)
        out: list[VectorBatch] = []
        for g in groups.tolist():
            lo_g, hi_g = np.searchsorted(rows, [self.starts[g], self.starts[g + 1]])
            want = rows[lo_g:hi_g]
            for start, rb in self._from_row(g, int(want[0])):
                lo, hi = np.searchsorted(want, [start, start + rb.num_rows])
                if hi > lo:
                    local = pa.array(want[lo:hi] - start)
                    out.append(self._convert(rb.take(local), dimension, start))
                if start + rb.num_rows > want[-1]:
                    break
        return out

    def _from_row(self, g: int, row: int) -> Iterator[tuple[int, Any]]:
        """(first row, record batch) of group ``g`` from the batch holding ``row`` on, going
        on with the read the last call left off when it had not passed ``row``."""
        cur = self._cursor
        if cur is None or cur[0] != g or cur[1] > row:
            start = int(self.starts[g])
            cur = (g, start, None, self._groups(READ_ROWS, self.columns, [g]))
        _g, start, rb, it = cur
        if rb is not None and start + rb.num_rows > row:
            yield start, rb
        for start, rb in it:
            self._cursor = (g, start, rb, it)
            if start + rb.num_rows > row:
                yield start, rb
        self._cursor = None


class VectorSurvey:
    """What a pass over a Parquet vector column learns: the lengths (the store dimension is
    the most common), whether a vector is null, and the first row holding a null element."""

    def __init__(self, reader: ParquetReader) -> None:
        self.reader = reader
        self.lengths: Counter[int] = Counter()
        self.nulls = False
        self.bad_row: VectorTypeError | None = None

    def add(self, col: Any, start: int) -> None:
        """Count the vector column ``col`` of the rows from ``start``."""
        self.nulls = self.nulls or col.null_count > 0
        n = list_lengths(col, -1)
        _count_lengths(self.lengths, n[n >= 0].astype(np.int64))
        if self.bad_row is None and col.flatten().null_count:
            r = self.reader
            try:
                check_vector_rows(r.path, r.vec_col, col.to_pylist(), "row", start + 1)
            except VectorTypeError as exc:
                self.bad_row = exc

    def finish(self) -> dict[str, Any]:
        """The meta; sets the reader's ``fast``. As the whole-file reader: a column with
        nulls or uneven lengths is read as rows, where a null element is refused; otherwise
        it is one matrix (a null element reads as NaN)."""
        fast = not self.nulls and len(self.lengths) <= 1 and bool(self.lengths)
        self.reader.fast = fast
        if self.bad_row is not None and not fast:
            raise self.bad_row
        return {"dimension": _dimension(self.lengths), "fast": fast}


class JsonlReader:
    """JSON Lines: the columns are the first line's keys, as before."""

    def __init__(self, path: Path, id_col: str, vec_col: str, text_col: str) -> None:
        self.path, self.id_col, self.vec_col, self.text_col = path, id_col, vec_col, text_col
        names: list[str] = []
        for _, _, row in self._lines():
            names = list(row)
            break
        require_columns(path, names, id_col, vec_col)
        self.has_text = text_col in names
        self.has_meta = "metadata" in names
        self.fast = False

    def _parse(self, line: bytes, lineno: int) -> dict[str, Any]:
        where = f"{self.path}:{lineno}"
        try:
            row = loads_json(line, where)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8"
            raise DataFileError(f"{where} is not JSON ({why})") from None
        if not isinstance(row, dict):
            raise DataFileError(f"{where} is not a JSON object; write one object per line")
        return row

    def _lines(self, start: int = 0) -> Iterator[tuple[int, int, dict[str, Any]]]:
        """(byte offset, line number, row) of every non-blank line from ``start``."""
        with self.path.open("rb") as f:
            f.seek(start)
            offset = start
            for lineno, line in bounded_lines(f, self.path.name):  # each line capped
                if line.strip():
                    yield offset, lineno, self._parse(line, lineno)
                offset += len(line)

    def survey(self) -> tuple[list[np.ndarray], list[np.ndarray], dict[str, Any]]:
        blocks = KeyedOffsets(READ_ROWS)
        lengths: Counter[int] = Counter()
        for offset, lineno, row in self._lines():
            vec = row.get(self.vec_col)
            check_vector_rows(self.path, self.vec_col, [vec], "line", lineno)
            if vec is not None:
                lengths[len(vec)] += 1
            if self.id_col not in row:
                raise DataFileError(
                    f"{self.path}:{lineno} has no '{self.id_col}'; every line needs the id "
                    "column the first line has"
                )
            blocks.add(str(row[self.id_col]), offset)
        keys, locs = blocks.done()
        return keys, locs, {"dimension": _dimension(lengths), "fast": False}

    def _batch(self, rows: list[dict[str, Any]], dimension: int) -> VectorBatch:
        vectors, dims = pack_rows([r.get(self.vec_col) for r in rows], dimension)
        return VectorBatch(
            [str(r[self.id_col]) for r in rows],
            vectors,
            dims,
            [r.get(self.text_col) for r in rows] if self.has_text else None,
            [r.get("metadata") or {} for r in rows] if self.has_meta else None,
        )

    def batches(self, size: int, dimension: int) -> Iterator[VectorBatch]:
        rows: list[dict[str, Any]] = []
        for _, _, row in self._lines():
            rows.append(row)
            if len(rows) >= size:
                yield self._batch(rows, dimension)
                rows = []
        if rows:
            yield self._batch(rows, dimension)

    def take_ids(self, offsets: np.ndarray) -> list[list[str]]:
        return [b.ids for b in self.take(offsets, 0)]

    def take(self, offsets: np.ndarray, dimension: int) -> list[VectorBatch]:
        """The lines at ``offsets`` (sorted, unique byte offsets), in that order."""
        rows: list[dict[str, Any]] = []
        with self.path.open("rb") as f:
            for off in offsets.tolist():
                f.seek(off)
                rows.append(self._parse(f.readline(record_limit() + 1), 0))
        return [self._batch(rows, dimension)] if rows else []
