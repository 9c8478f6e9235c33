"""Out-of-core pairing of two vector stores by content hash, for diff-index.

Each store is streamed once into a spill folder: a Parquet file of keys per row (``seq``
= position in the store's iteration order, ``id``, the text's xxh3-128 as ``h1``/``h2``,
a :class:`Flag`) and a raw float32 file of unit vectors in ``seq`` order. DuckDB joins the
keys (it spills to disk past its memory limit); vectors are read back block by block from
the raw files with explicit reads, so peak memory does not grow with the vectors. (A
``parquet:`` store is read from its Arrow buffers instead, and two of them are compared
without a spill of their vectors: see :mod:`indexcheck.commands.diff_index.arrow_spill` and
:mod:`indexcheck.commands.diff_index.band`.) The LSH keys of the old
vectors (:func:`lsh_keys`) are computed from the old spill only when some vector moved.

Texts are normalised before hashing (NFC, ``\\r\\n`` -> ``\\n``, outer whitespace stripped):
a reindex that only re-encodes line endings still pairs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ...errors import DataFileError, InputError
from ...inputs.corpus import Corpus
from ...inputs.text_keys import content_key, content_keys
from ...stores.base import VectorStore
from ...vectors import normalize_rows

T = TypeVar("T")
U = TypeVar("U")

SCAN_BATCH = 4096
LSH_TABLES = 4
LSH_BITS = 24
LSH_SEED = 20260


class Flag(IntEnum):
    """What the scan found about a stored row, before any pairing."""

    OK = 0
    MISSING = 1  # no vector for the id (stored length 0)
    DIMENSION = 2  # stored length differs from the reference dimension
    NON_FINITE = 3
    ZERO = 4
    ORPHAN = 5  # the id is not in the chunks file given for this side


def lsh_planes(dimension: int) -> np.ndarray:
    """float32 (d, LSH_TABLES * LSH_BITS) random hyperplanes, the same for both sides."""
    rng = np.random.default_rng(LSH_SEED)
    return rng.standard_normal((dimension, LSH_TABLES * LSH_BITS), dtype=np.float32)


def lsh_keys(unit: np.ndarray, planes: np.ndarray) -> np.ndarray:
    """int32 (n, LSH_TABLES) sign-bit keys of float32 unit vectors (n, d).

    Two vectors at cosine c share one table's key with probability (1 - acos(c)/pi)^24:
    0.71 at c = 0.999 and 0.97 at c = 0.99999, so four tables miss a true match at
    0.999 less than 1% of the time; every candidate is re-checked exactly.
    """
    bits = (unit @ planes) > 0
    # bit j of a table's key is its j-th plane: the key is the sum of 2**j over the planes
    # j the vector is above, a product with the powers of two (exact in float64; packbits
    # over 24-bit groups costs ten times the matrix product at small dimensions)
    weights = np.exp2(np.arange(LSH_BITS, dtype=np.float64))
    sums = bits.reshape(len(unit) * LSH_TABLES, LSH_BITS).astype(np.float64) @ weights
    out: np.ndarray = sums.astype(np.int32).reshape(len(unit), LSH_TABLES)
    return out


@dataclass
class Side:
    """One spilled store: where its keys and vectors are, and what the scan counted.
    ``vectors`` None: they were not spilled, the store is read again in order (the new
    side of two ``parquet:`` stores)."""

    name: str
    keys: Path
    vectors: Path | None
    dimension: int
    rows: int
    spec: str
    missing_chunks: list[str]


def _schema() -> Any:
    import pyarrow as pa

    fields = [
        ("seq", pa.int64()),
        ("id", pa.string()),
        ("h1", pa.uint64()),
        ("h2", pa.uint64()),
        ("flag", pa.uint8()),
    ]
    return pa.schema(fields)


def spill_store(
    store: VectorStore,
    name: str,
    folder: Path,
    corpus: Corpus | None,
    dimension: int,
    chunks_option: str,
    tick: Callable[[int], None] | None = None,
) -> Side:
    """Stream ``store`` into ``folder/{name}.keys.parquet`` and ``{name}.f32``.

    ``dimension`` is the reference length; rows of another length are flagged and
    their vectors zero-filled. With ``corpus``, texts come from it by id (ids it does not
    hold are ``ORPHAN``; its ids the store never yields are returned as missing);
    otherwise the store must hold the texts, else DataFileError naming ``chunks_option``.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    keys_path = folder / f"{name}.keys.parquet"
    vec_path = folder / f"{name}.f32"
    seen = np.zeros(len(corpus), dtype=bool) if corpus is not None else None
    seq = 0
    missing: list[str] = []
    cols: dict[str, Any]
    writer = pq.ParquetWriter(keys_path, _schema())
    try:
        with vec_path.open("wb") as vf:
            for batch in store.iter_vectors(SCAN_BATCH):
                n = len(batch.ids)
                h1 = np.zeros(n, dtype=np.uint64)
                h2 = np.zeros(n, dtype=np.uint64)
                flag = np.zeros(n, dtype=np.uint8)
                texts = batch.texts
                stored = corpus is None and texts is not None
                if stored and all(isinstance(t, str) for t in texts or ()):
                    h1, h2 = content_keys(texts)  # the store's texts, in one batch
                else:
                    for i, cid in enumerate(batch.ids):
                        text: str | None
                        if corpus is not None and seen is not None:
                            p = corpus.position.get(cid)
                            if p is None:
                                flag[i] = Flag.ORPHAN
                                continue
                            seen[p] = True
                            text = corpus.texts[p]
                        else:
                            text = batch.texts[i] if batch.texts is not None else None
                            if text is None:
                                raise DataFileError(
                                    f"{store.spec}: vector '{cid}' has no stored text; pass "
                                    f"{chunks_option} with the id and text of every chunk"
                                )
                        h1[i], h2[i] = content_key(text)
                vec, _ = _block_vectors(batch.vectors, batch.dims, dimension, flag)
                cols = {
                    "seq": pa.array(np.arange(seq, seq + n, dtype=np.int64)),
                    "id": pa.array(list(batch.ids), pa.string()),
                    "h1": pa.array(h1),
                    "h2": pa.array(h2),
                    "flag": pa.array(flag),
                }
                writer.write_table(pa.table(cols, schema=_schema()))
                vf.write(np.ascontiguousarray(vec, dtype=np.float32).tobytes())
                seq += n
                if tick is not None:
                    tick(n)
            # chunks the store never yielded join as rows without a vector (MISSING)
            if corpus is not None and seen is not None:
                missing = [corpus.ids[p] for p in np.flatnonzero(~seen)]
            for start in range(0, len(missing), SCAN_BATCH):
                part = missing[start : start + SCAN_BATCH]
                n = len(part)
                hk = [content_key(corpus.texts[corpus.position[c]]) for c in part]  # type: ignore[union-attr]
                cols = {
                    "seq": pa.array(np.arange(seq, seq + n, dtype=np.int64)),
                    "id": pa.array(part, pa.string()),
                    "h1": pa.array(np.array([h[0] for h in hk], dtype=np.uint64)),
                    "h2": pa.array(np.array([h[1] for h in hk], dtype=np.uint64)),
                    "flag": pa.array(np.full(n, Flag.MISSING, dtype=np.uint8)),
                }
                writer.write_table(pa.table(cols, schema=_schema()))
                vf.write(np.zeros((n, dimension), dtype=np.float32).tobytes())
                seq += n
    finally:
        writer.close()
    return Side(name, keys_path, vec_path, dimension, seq - len(missing), store.spec, missing)


def _block_vectors(
    vectors: np.ndarray, dims: np.ndarray, dimension: int, flag: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Unit float32 (n, dimension) rows with bad rows zeroed; sets flags in place."""
    n = len(dims)
    dims = np.asarray(dims, dtype=np.int32)
    out = np.zeros((n, dimension), dtype=np.float32)
    if vectors.ndim == 2 and vectors.shape[1] == dimension:
        out[:] = vectors
    ok = flag == Flag.OK
    missing = ok & (dims == 0)
    wrong = ok & ~missing & ((dims != dimension) | (vectors.shape[1] != dimension))
    flag[missing] = Flag.MISSING
    flag[wrong] = Flag.DIMENSION
    out[missing | wrong] = 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(out).all(axis=1)
    bad = (flag == Flag.OK) & ~finite
    flag[bad] = Flag.NON_FINITE
    out[~finite] = 0.0
    zero = (flag == Flag.OK) & ~out.any(axis=1)
    flag[zero] = Flag.ZERO
    with np.errstate(over="ignore", invalid="ignore"):
        unit = normalize_rows(out)
    return unit, dims


class VectorFile:
    """Random access to a spilled float32 (rows, d) file by explicit reads (``preadv`` of
    each run of consecutive rows), so that nothing but the block asked for is resident: a
    memory map would count the kernel's read-around of every random row as ours."""

    def __init__(self, path: Path, dimension: int) -> None:
        self.dimension = dimension
        self._fd = os.open(path, os.O_RDONLY)

    def gather(self, seqs: np.ndarray) -> np.ndarray:
        """float32 (len(seqs), d) copy of the rows at ``seqs`` (any order, repeats allowed)."""
        seqs = np.asarray(seqs, dtype=np.int64)
        d = self.dimension
        if seqs.size == 0 or d == 0:
            return np.zeros((seqs.size, d), dtype=np.float32)
        steps = np.diff(seqs)
        if not (steps > 0).all():
            uniq, inverse = np.unique(seqs, return_inverse=True)
            steps = np.diff(uniq)
        else:  # already sorted and unique (rows paired in order): no copy to reorder
            uniq, inverse = seqs, None
        buf = np.empty((uniq.size, d), dtype=np.float32)
        raw = buf.data.cast("B")
        row = 4 * d
        breaks = np.flatnonzero(steps != 1) + 1
        starts = np.concatenate([[0], breaks])
        ends = np.concatenate([breaks, [uniq.size]])
        for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
            want, offset = (b - a) * row, int(uniq[a]) * row
            got = os.preadv(self._fd, [raw[a * row : b * row]], offset)
            if got != want:
                raise OSError(f"short read in the spill file at row {uniq[a]}")
        if inverse is None:
            return buf
        out: np.ndarray = buf[inverse.reshape(-1)]
        return out

    def close(self) -> None:
        os.close(self._fd)


def sql_str(value: object) -> str:
    """A SQL string literal (paths may hold quotes)."""
    return "'" + str(value).replace("'", "''") + "'"


def check_memory_limit(value: str) -> None:
    """Refuse a DuckDB memory limit that is not a size such as ``256MB`` or ``2GiB``."""
    if not re.fullmatch(r"\d+(\.\d+)?\s*(KB|MB|GB|KiB|MiB|GiB)", value.strip(), re.IGNORECASE):
        raise InputError(f"--memory-limit {value!r} is not a size; write it like 256MB or 2GB")


def connect(folder: Path, memory_limit: str = "256MB", threads: int | None = None) -> Any:
    """A DuckDB connection that spills to ``folder`` past ``memory_limit``."""
    import duckdb

    check_memory_limit(memory_limit)
    con = duckdb.connect()
    con.execute(f"SET memory_limit={sql_str(memory_limit.strip())}")
    con.execute(f"SET temp_directory={sql_str(folder / 'duckdb.tmp')}")
    con.execute(f"SET threads={int(threads or min(4, os.cpu_count() or 1))}")
    con.execute("SET preserve_insertion_order=false")
    return con


def prefetch(items: Iterable[T], depth: int = 3) -> Generator[T, None, None]:
    """``items`` produced in a thread, ``depth`` ahead of the consumer (Arrow's decoding and
    numpy release the GIL, so a decode runs beside the work on the block before it). An
    error in the producer is raised in the consumer; a consumer that stops early stops the
    producer at its next item."""
    import queue
    import threading

    q: queue.Queue[tuple[int, Any]] = queue.Queue(depth)
    stop = threading.Event()

    def put(item: tuple[int, Any]) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            for item in items:
                if not put((0, item)):
                    return
            put((1, None))
        except BaseException as exc:  # handed to the consumer
            put((2, exc))

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    try:
        while True:
            kind, item = q.get()
            if kind == 1:
                return
            if kind == 2:
                raise item
            yield item
    finally:
        stop.set()
        worker.join()


def ordered_map(fn: Callable[[T], U], items: Iterable[T], workers: int = 2) -> Iterator[U]:
    """``map(fn, items)`` on ``workers`` threads, in order, at most ``2 * workers`` ahead."""
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(workers) as pool:
        pending: deque[Any] = deque()
        for item in items:
            pending.append(pool.submit(fn, item))
            if len(pending) >= 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def batches(con: Any, sql: str, size: int = 16384) -> Iterator[dict[str, np.ndarray]]:
    """Stream a query's rows as dicts of numpy columns (strings as object arrays)."""
    reader = con.sql(sql).to_arrow_reader(size)
    for rb in reader:
        cols: dict[str, np.ndarray] = {}
        for name, col in zip(rb.schema.names, rb.columns, strict=True):
            cols[name] = col.to_numpy(zero_copy_only=False)
        yield cols
