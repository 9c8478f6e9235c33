"""The on-disk caches, all keyed by a store's fingerprint, and their ``.npy`` I/O.

- the vector cache: a remote store's vectors read once. ``ROOT/<sha256(fingerprint)[:32]>/``
  holds ``vectors.npy`` (header written with :mod:`numpy.lib.format`), ``ids.jsonl`` and
  ``meta.json``; local backends (files already in memory) are never cached;
- the probe's cache: one JSON file per (backend, metric, spec, fingerprint) holding the
  measured score scale (:func:`scale_cache_path`, :func:`write_json_atomic`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from numpy.lib import format as npformat

from ...errors import DataFileError
from ...output.cachedir import cache_root
from ...stores.base import VectorStore
from .exact import Block

ITER_BATCH = 1000
#: Backends whose vectors are already local files in memory: nothing to cache.
LOCAL_BACKENDS = frozenset({"faiss", "parquet", "memory"})


def store_blocks(store: VectorStore, dimension: int, batch: int) -> Iterator[Block]:
    """Blocks of usable stored vectors: right length and finite (others are skipped)."""
    for b in store.iter_vectors(batch):
        vecs = np.asarray(b.vectors, dtype=np.float32)
        keep = (np.asarray(b.dims) == dimension) & np.isfinite(vecs).all(axis=1)
        if keep.all():
            yield list(b.ids), vecs
        elif keep.any():
            yield [i for i, k in zip(b.ids, keep, strict=True) if k], vecs[keep]


def _npy_header(fh: BinaryIO, rows: int, dimension: int) -> None:
    """Write a version 1.0 ``.npy`` header for float32 (rows, dimension) at ``fh``'s position.

    numpy pads the header to a fixed multiple of 64 bytes, so the header written before the
    row count is known has the same length as the final one (the row count only grows
    digits inside the padding).
    """
    header = {"descr": "<f4", "fortran_order": False, "shape": (rows, dimension)}
    npformat.write_array_header_1_0(fh, header)


class VectorCache:
    """Stored vectors of one store on disk, keyed by its fingerprint.

    ``ROOT/<sha256(fingerprint)[:32]>/`` holds ``vectors.npy`` float32 (n, d),
    ``ids.jsonl`` (one JSON string per row, same order) and ``meta.json``. A cache is
    written to a temporary folder while the store is read and renamed into place only
    once complete; it is read back block by block.
    """

    def __init__(self, root: Path, fingerprint: str, dimension: int, spec: str) -> None:
        self.root = Path(root).expanduser()
        self.fingerprint = fingerprint
        self.dimension = dimension
        self.spec = spec
        self.path = self.root / hashlib.sha256(fingerprint.encode()).hexdigest()[:32]

    def complete(self) -> bool:
        meta = self.path / "meta.json"
        if not meta.is_file():
            return False
        try:
            data = json.loads(meta.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return False
        return bool(
            data.get("fingerprint") == self.fingerprint and data.get("dimension") == self.dimension
        )

    def blocks(self, rows: int) -> Iterator[Block]:
        """Cached (ids, float32 (m, d)) blocks of ``rows`` rows, in stored order."""
        with (self.path / "ids.jsonl").open(encoding="utf-8") as ids_file:
            for vecs in npy_blocks(self.path / "vectors.npy", rows):
                ids = [json.loads(ids_file.readline()) for _ in range(vecs.shape[0])]
                yield ids, vecs
                del ids, vecs  # not held while the next block is read

    def writing(self, blocks: Iterable[Block]) -> Iterator[Block]:
        """Pass ``blocks`` through, writing them; the cache appears only when all were read."""
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / f".{self.path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
        tmp.mkdir()
        done = False
        rows = 0
        try:
            with (
                (tmp / "vectors.npy").open("wb") as vf,
                (tmp / "ids.jsonl").open("w", encoding="utf-8") as idf,
            ):
                _npy_header(vf, 0, self.dimension)
                start = vf.tell()
                for ids, vecs in blocks:
                    vf.write(np.ascontiguousarray(vecs, dtype="<f4").tobytes())
                    idf.writelines(json.dumps(i) + "\n" for i in ids)
                    rows += len(ids)
                    yield ids, vecs
                    del ids, vecs
                vf.seek(0)
                _npy_header(vf, rows, self.dimension)
                if vf.tell() != start:  # cannot happen below 10**40 rows; never a bad file
                    raise OSError("npy header changed length; vector cache not written")
            meta = {
                "fingerprint": self.fingerprint,
                "spec": self.spec,
                "dimension": self.dimension,
                "rows": rows,
                "written_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
            (tmp / "meta.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
            try:
                tmp.rename(self.path)
                done = True
            except OSError:
                pass  # another run finished the same cache first
        finally:
            if not done:
                shutil.rmtree(tmp, ignore_errors=True)


def cache_for(store: VectorStore, dimension: int, cache_dir: Path | None) -> VectorCache | None:
    if cache_dir is None or store.info().backend in LOCAL_BACKENDS:
        return None
    return VectorCache(Path(cache_dir), store.fingerprint(), dimension, store.spec)


def vector_blocks(
    store: VectorStore, dimension: int, cache_dir: Path | None, rows: int
) -> Iterator[Block]:
    """Every usable stored vector once: from the cache when complete, else from the store
    (filling the cache when one is configured)."""
    cache = cache_for(store, dimension, cache_dir)
    if cache is not None and cache.complete():
        yield from cache.blocks(rows)
        return
    blocks = store_blocks(store, dimension, ITER_BATCH)
    yield from (blocks if cache is None else cache.writing(blocks))


# -- npy I/O -------------------------------------------------------------------------------


def npy_blocks(path: Path, rows: int) -> Iterator[np.ndarray]:
    """Read a 2-d ``.npy`` file as float32 blocks of ``rows`` rows with plain reads.

    No memory map: pages read stay in the OS cache, not in this process, so resident
    memory is one block whatever the file size.
    """
    from numpy.lib import format as npf

    try:
        with Path(path).open("rb") as f:
            major, _ = npf.read_magic(f)
            read_header = npf.read_array_header_1_0 if major == 1 else npf.read_array_header_2_0
            shape, fortran, dtype = read_header(f)
            if len(shape) != 2 or fortran or dtype.hasobject:
                raise DataFileError(
                    f"{path} must hold a C-ordered 2-d numeric array (n, d), got shape {shape}"
                )
            n, d = int(shape[0]), int(shape[1])
            for start in range(0, n, rows):
                m = min(rows, n - start)
                buf = np.empty((m, d), dtype=dtype)
                got = f.readinto(buf.data.cast("B"))
                if got != buf.nbytes:
                    raise DataFileError(f"{path} is truncated: expected {n} rows of {d} values")
                yield buf.astype(np.float32, copy=False)
                del buf  # released before the next block is allocated
    except (OSError, ValueError) as exc:
        raise DataFileError(f"cannot read {path}: {exc}") from None


# -- the probe's cache -------------------------------------------------------------------


def default_scale_dir() -> Path:
    """``<cache root>/scale`` (see :func:`indexcheck.output.cachedir.cache_root`)."""
    return cache_root() / "scale"


def scale_cache_path(store: VectorStore, cache_dir: Path | None = None) -> Path:
    """The probe's cache file of a store: keyed by backend, metric, spec and fingerprint (the
    same file read with another metric, e.g. parquet ``?metric=``, has another scale)."""
    info = store.info()
    key = f"{info.backend}\0{info.metric}\0{store.spec}\0{store.fingerprint()}"
    name = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
    return (cache_dir or default_scale_dir()) / f"{name}.json"


def read_json(path: Path) -> dict[str, Any] | None:
    """A cached JSON object, or None when absent or unreadable (then measure again)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_json_atomic(payload: dict[str, Any], path: Path) -> None:
    """Write ``payload`` atomically (a temporary file, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(payload, default=_plain), encoding="utf-8")
    os.replace(tmp, path)


def _plain(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
