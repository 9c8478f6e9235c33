"""Vectors in a file: ``parquet:PATH`` or ``jsonl:PATH``, streamed.

The scheme picks the reader, not the file name (``jsonl:x.json`` is JSON Lines; ``parquet:``
still reads a ``.jsonl``/``.ndjson`` name as JSON Lines). Columns ``id``, ``vector``, optional
``text`` and ``metadata``; ``?id=``, ``?vector=``, ``?text=`` rename them. Search is exact brute
force with ``?metric=cosine`` (score ``cos``, the default), ``ip`` (``dot``) or ``l2``
(``l2^2``). Vectors of uneven length are kept (check-index's ``dimension_mismatch``); the
store dimension is the most common length, learned from the schema when it can be, else on
the first pass over the vectors, and kept in the cached id map.

The file is never held: opening reads the ids once and writes an id -> row (or byte offset)
map to the cache folder keyed by the file's fingerprint (16 bytes a row on disk, about 24 in
memory while it is sorted); scans, searches and fetches hold one block of rows at a time.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from ...errors import DataFileError
from ..base import BaseStore, Fetched, StoreInfo, StoreSpec, VectorBatch, as_float32_matrix
from ..blocked_search import blocked_knn
from ..local import LOCAL_METRICS
from ..params import Choice, Str
from .id_map import IdMap, duplicate_ids, load_learned, save_learned
from .readers import JsonlReader, ParquetReader

#: rows scored at once by the streamed exact search
SEARCH_ROWS = 65536
#: ids the first lookup of a store opened without lookups finds by a pass over its id
#: column (any later lookup builds the id map: passes are not repeated)
SCAN_LOOKUP = 4096


class ParquetStore(BaseStore):
    """A vectors file read in blocks; read-only by construction."""

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
    #: one pass over the file per call, for any number of ids or queries
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
        kind = JsonlReader if jsonl else ParquetReader
        self._reader: ParquetReader | JsonlReader = kind(path, id_col, vec_col, text_col)
        self._fp: str | None = None
        self._columns = json.dumps(["jsonl" if jsonl else "parquet", id_col, vec_col, text_col])
        self._found: IdMap | None = IdMap.load(self.fingerprint(), self._columns)
        self.map_from_cache = self._found is not None
        lazy = not getattr(options, "lookups", True) and isinstance(self._reader, ParquetReader)
        #: False while the ids have not been surveyed (a store opened without lookups)
        self.ids_checked = self._found is not None or not lazy
        self._passed = False  # a lookup was answered by a pass over the id column
        if self._found is None and not lazy:
            self._found = self._built()
        if self._found is not None:
            self.count = int(self._found.keys.shape[0])
            self._meta = self._found.meta
        else:  # the row count and, for a fixed-size list column, the dimension: metadata
            reader = self._reader
            assert isinstance(reader, ParquetReader)
            self.count = int(reader.starts[-1])
            size = reader._fixed_size_without_nulls()
            fast = self.count > 0
            self._meta = load_learned(self.fingerprint(), self._columns) or {
                "dimension": None,
                "fast": None,
            }
            if size is not None:
                self._meta = {"dimension": size if self.count else 0, "fast": fast}
        if not self.count:
            raise DataFileError(f"{path} holds no vectors")
        if self._meta.get("dimension") is not None:
            self._reader.fast = bool(self._meta["fast"])

    def _built(self) -> IdMap:
        """The id map built from the ids (refusing repeated ones), saved to the cache and
        read back mapped: only the pages a lookup touches stay resident."""
        fp = self.fingerprint()
        built = self._build_map()
        if self._found is None and getattr(self, "_meta", None):
            built.meta.update({k: v for k, v in self._meta.items() if v is not None})
        built.save(fp, self._columns)
        found = IdMap.load(fp, self._columns) or built
        found.from_cache = False
        return found

    @property
    def _map(self) -> IdMap:
        """The id map, built on first use for a store opened without lookups."""
        if self._found is None:
            self._found = self._built()
            self._meta = self._found.meta
            self.ids_checked = True
        return self._found

    @property
    def dimension(self) -> int:
        """The most common vector length (the first call may read the vector column once,
        unless :meth:`arrow_batches` already did)."""
        if self._meta.get("dimension") is None:
            self._learned(self._reader.survey_vectors())  # type: ignore[union-attr]
        return int(self._meta["dimension"])

    @property
    def known_dimension(self) -> int | None:
        """The dimension if it is known without reading the vectors, else None."""
        d = self._meta.get("dimension")
        return None if d is None else int(d)

    def _learned(self, meta: dict[str, Any]) -> None:
        if self._found is not None:  # cached with the map; else kept until it is built
            self._found.update_meta(self.fingerprint(), self._columns, **meta)
            self._meta = self._found.meta
        else:  # no map to keep it with: on its own, for the next open
            self._meta = {**self._meta, **meta}
            save_learned(self.fingerprint(), self._columns, self._meta)
        self._reader.fast = bool(meta["fast"])

    @property
    def arrow_ready(self) -> bool:
        """True when :meth:`arrow_batches` can serve (a Parquet file, not JSON Lines)."""
        return isinstance(self._reader, ParquetReader)

    @property
    def stores_texts(self) -> bool:
        """True when the file has a text column."""
        return bool(self._reader.has_text)

    def arrow_batches(
        self,
        size: int,
        threads: bool = True,
        columns: Sequence[str] = ("id", "vector", "text"),
        group: int | None = None,
    ) -> Iterator[Any]:
        """Every row once, in file order, as Arrow record batches of ``columns`` (of ``id``,
        ``vector`` and ``text``, in that order; ``text`` only when the file has it),
        undecoded: for callers that work on Arrow buffers (diff-index). A pass that reads the
        vectors also learns the dimension on the way when it is not yet known, so that pass
        is not made twice. Parquet only (see :attr:`arrow_ready`); ``threads`` False decodes
        in the calling thread (for callers reading two files at once). ``group``: only the
        rows of that row group (of :attr:`arrow_groups`), for readers working on several
        groups at once; such a pass learns nothing."""
        reader = self._reader
        assert isinstance(reader, ParquetReader)
        names = dict(zip(("id", "vector", "text"), reader.columns[:3], strict=False))
        if not reader.has_text:
            names.pop("text", None)
        wanted = [names[c] for c in ("id", "vector", "text") if c in columns and c in names]
        at = wanted.index(reader.vec_col) if reader.vec_col in wanted else None
        known = self._meta.get("dimension") is not None or group is not None
        seen = reader.vector_survey() if at is not None and not known else None
        groups = None if group is None else [group]
        for start, rb in reader._groups(size, wanted, groups, threads, group is not None):
            if seen is not None:
                seen.add(rb.column(at), start)
            yield rb
        if seen is not None:
            self._learned(seen.finish())

    @property
    def arrow_groups(self) -> list[int]:
        """The first row of each row group, and the row count last (Parquet only)."""
        reader = self._reader
        assert isinstance(reader, ParquetReader)
        return [int(s) for s in reader.starts]

    def _build_map(self) -> IdMap:
        """The id map from the ids; for a Parquet file whose statistics do not give the
        dimension, the meta waits for the first pass over the vectors (``dimension``)."""
        reader = self._reader
        if isinstance(reader, ParquetReader):
            keys, locs, meta = reader.survey_ids()
        else:
            keys, locs, meta = reader.survey()
        built = IdMap.build(keys, locs, meta or {"dimension": None, "fast": None})
        pairs = built.shared_keys()
        if pairs.size:
            where = np.unique(pairs)
            names = [i for b in reader.take_ids(where) for i in b]
            name_at = dict(zip(where.tolist(), names, strict=True))
            if any(name_at[a] == name_at[b] for a, b in pairs.tolist()):
                raise duplicate_ids(self.path)
        return built

    def info(self) -> StoreInfo:
        _, score, hib = LOCAL_METRICS[self.metric]
        return StoreInfo(
            backend="parquet",
            count=self.count,
            dimension=self.dimension,
            metric=self.metric,
            score=score,
            higher_is_better=hib,
            approximate=False,
            details={"path": str(self.path)},
        )

    def fingerprint(self) -> str:
        """xxh3-128 of the file's bytes (read once per store)."""
        if self._fp is None:
            h = xxhash.xxh3_128()
            buf = bytearray(1 << 22)  # one buffer read into again and again: no fresh pages
            view = memoryview(buf)
            with self.path.open("rb", buffering=0) as f:
                while n := f.readinto(buf):
                    h.update(view[:n])
            self._fp = h.hexdigest()
        return self._fp

    def _fetch_batch(self, ids: list[str]) -> Fetched:
        n = len(ids)
        vectors = np.zeros((n, self.dimension), dtype=np.float32)
        dims = np.zeros(n, dtype=np.int32)
        found = np.zeros(n, dtype=bool)
        texts: list[Any] | None = [None] * n if self._reader.has_text else None
        if self._found is None and n <= SCAN_LOOKUP and not self._passed:
            self._passed = True  # the first few ids: one pass; any lookup after builds the map
            assert isinstance(self._reader, ParquetReader)  # lazy: a Parquet file
            which, locs = self._reader.find_ids(ids)
        else:
            which, locs = self._map.candidates(ids)
        if locs.size:
            uniq = np.unique(locs)
            parts = self._reader.take(uniq, self.dimension)
            got_ids = np.asarray([i for p in parts for i in p.ids], dtype=object)
            at = np.searchsorted(uniq, locs)
            hit = got_ids[at] == np.asarray(ids, dtype=object)[which]
            rows, src = which[hit], at[hit]
            if len(np.unique(rows)) < len(rows):  # found twice: the map would have refused it
                raise duplicate_ids(self.path)
            vectors[rows] = np.concatenate([p.vectors for p in parts])[src]
            dims[rows] = np.concatenate([p.dims for p in parts])[src]
            found[rows] = True
            if texts is not None:
                got_texts = [t for p in parts for t in (p.texts or [])]
                for r, j in zip(rows.tolist(), src.tolist(), strict=True):
                    texts[r] = got_texts[j]
        return Fetched(list(ids), vectors, found, dims, texts)

    def _scan(self, batch: int) -> Iterator[VectorBatch]:
        yield from self._reader.batches(batch, self.dimension)

    def _query_batch(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.exact_query(vectors, k)

    def _native_filter(self, node: Any) -> Any:
        """The positions (sorted int64) whose ``metadata`` matches: an id selector. The
        metadata is read in one streamed pass (one dict a row is held while it is judged)."""
        from ..local_filtering import select

        metadata: list[dict[str, Any]] | None = None
        if self._reader.has_meta:
            metadata = [m or {} for b in self._scan(SEARCH_ROWS) for m in (b.metadata or [])]
        return select(self.scheme, metadata, node, self.spec)

    def _filtered_query_batch(
        self, vectors: np.ndarray, k: int, native: Any
    ) -> tuple[np.ndarray, np.ndarray]:
        """Exact top-k over the selected positions only, streamed block by block."""
        xq = as_float32_matrix(vectors, self.dimension)
        positions = np.asarray(native, dtype=np.int64)

        def blocks() -> Iterator[tuple[np.ndarray, np.ndarray]]:
            start = 0
            for b in self._scan(SEARCH_ROWS):
                n = len(b.ids)
                lo, hi = np.searchsorted(positions, [start, start + n])
                rows = positions[lo:hi] - start
                if rows.size:
                    yield np.asarray(b.ids, dtype=object)[rows], b.vectors[rows]
                start += n

        return blocked_knn(blocks(), xq, k, self.metric)

    def exact_query(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact top-k over the file, SEARCH_ROWS rows at a time."""
        xq = as_float32_matrix(vectors, self.dimension)
        blocks = ((np.asarray(b.ids, dtype=object), b.vectors) for b in self._scan(SEARCH_ROWS))
        return blocked_knn(blocks, xq, k, self.metric)


class JsonlStore(ParquetStore):
    """``jsonl:PATH``: the same store, always read as JSON Lines whatever the file name."""

    scheme = "jsonl"
    jsonl = True


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
