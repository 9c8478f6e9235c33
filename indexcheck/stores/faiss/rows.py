"""What a FAISS folder holds per row besides the index: ids and texts, and flat vectors.

- :class:`ListedIds`: ids (and texts) held in memory, from LangChain's pickle (unpickled
  whole) or an ``IndexIDMap``'s labels;
- :class:`StreamedIds`: ``ids.json`` read element by element (:mod:`.json_list`), with an
  id -> row map and row -> byte offset array on disk (:class:`.id_map.IdMap`, cached by the
  id file's xxh3-128): 24 bytes a row on disk, nothing held;
- :class:`FileIds`: the same for ``ids.parquet`` (``id``, optional ``text``; by row group)
  and ``ids.jsonl`` (one ``ids.json`` entry a line); 16 bytes a row on disk (24 for JSONL);
- :class:`FlatRows`: a flat index's float32 rows (the file's last ``n * d * 4`` bytes) read
  with ``pread``, so a scan holds one block and no page of the file stays mapped.

Where one id names several rows, the last row is found (as a dict built in row order would),
and every row still scans.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from ...errors import DataFileError
from ...inputs.files import c_path, loads_json
from ...inputs.limits import bounded_lines, record_limit
from ...inputs.rowfiles import arrow_errors
from ..files.id_map import IdMap, KeyedOffsets, arrow_id_keys, id_keys
from .ids_files import ids_json_entry
from .json_list import iter_entries, read_entry

ROWS = 16384
#: the other id files a faiss folder may hold instead of ids.json
IDS_FILES = ("ids.parquet", "ids.jsonl")


class ListedIds:
    def __init__(self, ids: list[str], texts: list[str | None] | None) -> None:
        self.ids, self.texts = ids, texts
        self.count = len(ids)
        self.has_text = texts is not None
        self._pos = {v: i for i, v in enumerate(ids)}

    def rows_of(self, ids: Sequence[str]) -> np.ndarray:
        return np.asarray([self._pos.get(i, -1) for i in ids], dtype=np.int64)

    def blocks(self, size: int) -> Iterator[tuple[list[str], list[str | None] | None]]:
        for start in range(0, self.count, size):
            stop = min(start + size, self.count)
            yield self.ids[start:stop], (self.texts[start:stop] if self.texts else None)

    def at(self, rows: np.ndarray) -> tuple[list[str], list[str | None] | None]:
        ids = [self.ids[int(r)] for r in rows]
        return ids, ([self.texts[int(r)] for r in rows] if self.texts is not None else None)


class StreamedIds:
    #: what the cached map is keyed by, beside the file's fingerprint
    kind = "faiss-ids.json"

    def __init__(self, path: Path) -> None:
        self.path = path
        h = xxhash.xxh3_128()
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 22), b""):
                h.update(block)
        self.fingerprint = h.hexdigest()
        self._open()
        found = IdMap.load(self.fingerprint, self.kind)
        if found is None:
            built = self._survey()
            built.save(self.fingerprint, self.kind)
            found = IdMap.load(self.fingerprint, self.kind) or built
            found.from_cache = False
            del built
        self._map = found
        self.from_cache = found.from_cache
        self.count = int(found.keys.shape[0])
        self.has_text = bool(found.meta["objects"])
        self._offsets = found.extra.get("offsets")

    def _open(self) -> None:
        """What a reader needs before the survey (nothing for ids.json)."""

    def _entries(self) -> Iterator[tuple[int, str, str | None, bool]]:
        """(byte offset, id, text, entries are objects) of every entry, in row order."""
        return iter_entries(self.path)

    def _survey(self) -> IdMap:
        blocks = KeyedOffsets(ROWS)
        objects = False
        for off, cid, _, kind in self._entries():
            objects = kind
            blocks.add(cid, off)
        keys, offsets = blocks.done()
        n = sum(len(k) for k in keys)
        rows = [np.arange(n, dtype=np.int64)]
        built = IdMap.build(keys, rows, {"objects": objects})
        built.extra = {"offsets": np.concatenate(offsets)}
        return built

    def rows_of(self, ids: Sequence[str]) -> np.ndarray:
        out = np.full(len(ids), -1, dtype=np.int64)
        which, rows = self._map.candidates(ids)
        if not rows.size:
            return out
        names, _ = self.at(rows)
        for w, r, name in zip(which.tolist(), rows.tolist(), names, strict=True):
            if name == ids[w] and r > out[w]:
                out[w] = r
        return out

    def blocks(self, size: int) -> Iterator[tuple[list[str], list[str | None] | None]]:
        ids: list[str] = []
        texts: list[str | None] = []
        for _, cid, text, _ in self._entries():
            ids.append(cid)
            texts.append(text)
            if len(ids) >= size:
                yield ids, (texts if self.has_text else None)
                ids, texts = [], []
        if ids:
            yield ids, (texts if self.has_text else None)

    def at(self, rows: np.ndarray) -> tuple[list[str], list[str | None] | None]:
        rows = np.asarray(rows, dtype=np.int64)
        order = np.argsort(rows, kind="stable")
        ids: list[str] = [""] * len(rows)
        texts: list[str | None] = [None] * len(rows)
        assert self._offsets is not None
        with self.path.open("rb") as f:
            for j in order.tolist():
                off = int(self._offsets[int(rows[j])])
                ids[j], texts[j] = read_entry(f, off, self.has_text, self.path)
        return ids, (texts if self.has_text else None)


class FileIds(StreamedIds):
    """``ids.parquet`` or ``ids.jsonl`` beside the index, streamed as ``ids.json`` is."""

    def __init__(self, path: Path) -> None:
        self.jsonl = path.suffix.lower() == ".jsonl"
        self.kind = "faiss-ids.jsonl" if self.jsonl else "faiss-ids.parquet"
        super().__init__(path)

    def _open(self) -> None:
        if self.jsonl:
            return
        import pyarrow.parquet as pq

        try:
            with c_path(self.path) as readable:  # a name that is not UTF-8 too
                self._pf = pq.ParquetFile(readable, buffer_size=1 << 20, pre_buffer=False)
            names = self._pf.schema_arrow.names
        except arrow_errors() as exc:  # pyarrow raises several types for bad files
            raise DataFileError(f"cannot read {self.path} as Parquet: {exc}") from None
        if "id" not in names:
            raise DataFileError(
                f"{self.path} has no 'id' column (columns: {', '.join(names)}); write the "
                "chunk id of each row, in order, to a column 'id' (and its text to 'text')"
            )
        self._cols = ["id", "text"] if "text" in names else ["id"]
        md = self._pf.metadata
        sizes = [md.row_group(g).num_rows for g in range(md.num_row_groups)]
        self._starts = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])

    def _entries(self) -> Iterator[tuple[int, str, str | None, bool]]:
        """(byte offset, id, text, entries are objects) of every non-blank line."""
        with self.path.open("rb") as f:
            offset, n, as_objects = 0, 0, False
            for _, line in bounded_lines(f, self.path.name):  # each line capped
                if line.strip():
                    raw = self._parse(line, n)
                    if n == 0:
                        as_objects = isinstance(raw, dict)
                    cid, text = _line_entry(raw, n, as_objects, self.path)
                    yield offset, cid, text, as_objects
                    n += 1
                offset += len(line)

    def _parse(self, line: bytes, n: int) -> object:
        try:
            return loads_json(line, f"{self.path} line {n + 1}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise DataFileError(
                f'{self.path} line {n + 1} is not JSON; write one id (or {{"id": ..., '
                '"text": ...}) per line'
            ) from None

    def _batches(
        self, columns: list[str], groups: Iterable[int] | None = None
    ) -> Iterator[tuple[int, Any]]:
        for g in range(len(self._starts) - 1) if groups is None else groups:
            start = int(self._starts[g])
            for rb in self._pf.iter_batches(batch_size=ROWS, row_groups=[g], columns=columns):
                yield start, rb
                start += rb.num_rows

    def _column_ids(self, col: Any, start: int) -> list[str]:
        if col.null_count:
            first = int(np.flatnonzero(~col.is_valid().to_numpy(zero_copy_only=False))[0])
            raise DataFileError(
                f"{self.path} row {start + first + 1} has no id; every row needs a non-empty id"
            )
        return [str(x) for x in col.to_pylist()]

    def _survey(self) -> IdMap:
        if self.jsonl:
            return super()._survey()
        keys: list[np.ndarray] = []
        for start, rb in self._batches(["id"]):
            k = arrow_id_keys(rb.column(0))
            keys.append(k if k is not None else id_keys(self._column_ids(rb.column(0), start)))
        n = int(self._starts[-1])
        return IdMap.build(keys, [np.arange(n, dtype=np.int64)], {"objects": "text" in self._cols})

    def blocks(self, size: int) -> Iterator[tuple[list[str], list[str | None] | None]]:
        if self.jsonl:
            yield from super().blocks(size)
            return
        ids: list[str] = []
        texts: list[str | None] = []
        for start, rb in self._batches(self._cols):
            ids += self._column_ids(rb.column(0), start)
            if self.has_text:
                texts += rb.column(1).to_pylist()
            while len(ids) >= size:
                yield ids[:size], (texts[:size] if self.has_text else None)
                ids, texts = ids[size:], texts[size:]
        if ids:
            yield ids, (texts if self.has_text else None)

    def at(self, rows: np.ndarray) -> tuple[list[str], list[str | None] | None]:
        rows = np.asarray(rows, dtype=np.int64)
        ids: list[str] = [""] * len(rows)
        texts: list[str | None] = [None] * len(rows)
        if self.jsonl:
            with self.path.open("rb") as f:
                for j, r in enumerate(rows.tolist()):
                    assert self._offsets is not None
                    f.seek(int(self._offsets[r]))
                    raw = self._parse(f.readline(record_limit() + 1), r)
                    ids[j], texts[j] = _line_entry(raw, r, self.has_text, self.path)
            return ids, (texts if self.has_text else None)
        import pyarrow as pa

        order = np.argsort(rows, kind="stable")
        want = rows[order]
        groups = np.unique(np.searchsorted(self._starts, want, side="right") - 1).tolist()
        for start, rb in self._batches(self._cols, groups):
            lo, hi = np.searchsorted(want, [start, start + rb.num_rows])
            if hi <= lo:
                continue
            part = rb.take(pa.array(want[lo:hi] - start))
            got_ids = self._column_ids(part.column(0), start)
            got_texts = part.column(1).to_pylist() if self.has_text else [None] * len(got_ids)
            for j, cid, text in zip(order[lo:hi].tolist(), got_ids, got_texts, strict=True):
                ids[j], texts[j] = cid, text
        return ids, (texts if self.has_text else None)


def _line_entry(raw: object, n: int, as_objects: bool, path: Path) -> tuple[str, str | None]:
    """An ``ids.jsonl`` line's id and text, refused as an ``ids.json`` entry would be."""
    try:
        return ids_json_entry(raw, n, as_objects, path)
    except DataFileError as exc:
        raise DataFileError(str(exc).replace(f"entry {n}", f"line {n + 1}", 1)) from None


def ids_beside(folder: Path) -> FileIds | None:
    """The ``ids.parquet`` or ``ids.jsonl`` of a faiss folder (in that order), if any."""
    for name in IDS_FILES:
        if (folder / name).is_file():
            return FileIds(folder / name)
    return None


class FlatRows:
    """float32 rows of a flat index, read from its file by position."""

    def __init__(self, path: Path, rows: int, d: int) -> None:
        self.rows, self.d = rows, d
        self.offset = path.stat().st_size - rows * d * 4
        self._fd = os.open(path, os.O_RDONLY)

    def read(self, start: int, stop: int) -> np.ndarray:
        size = (stop - start) * self.d * 4
        buf = os.pread(self._fd, size, self.offset + start * self.d * 4)
        if len(buf) != size:
            raise OSError("short read of a faiss index")
        return np.frombuffer(buf, dtype=np.float32).reshape(stop - start, self.d)

    def take(self, rows: np.ndarray) -> np.ndarray:
        """Rows at ``rows`` (any order, -1: a zero row), one read per run of neighbours."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.zeros((len(rows), self.d), dtype=np.float32)
        want = np.flatnonzero(rows >= 0)
        if not want.size:
            return out
        uniq, inverse = np.unique(rows[want], return_inverse=True)
        got = np.empty((uniq.size, self.d), dtype=np.float32)
        cuts = np.flatnonzero(np.diff(uniq) != 1) + 1
        for a, b in zip([0, *cuts.tolist()], [*cuts.tolist(), uniq.size], strict=True):
            got[a:b] = self.read(int(uniq[a]), int(uniq[b - 1]) + 1)
        out[want] = got[inverse.reshape(-1)]
        return out

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
