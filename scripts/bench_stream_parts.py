"""Pieces of ``bench_check_index.py --all``: a fast deterministic embedder, a Parquet store
read in batches (so the store itself does not hold the vectors), and the data writer.

    python scripts/bench_stream_parts.py build DIR N      # chunks.parquet + vectors.parquet
    python scripts/bench_stream_parts.py run DIR ENGINE   # one check, prints a JSON line
"""

from __future__ import annotations

import json
import resource
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import xxhash

D = 384
_TABLE = np.random.default_rng(0).standard_normal((1 << 16, D)).astype(np.float32)


class FastEmbedder:
    """Deterministic: a text's vector is the sum of two table rows picked by its xxh3-64."""

    model_id = "bench-fast:384"
    dimension = D

    def embed(self, texts: list[str]) -> np.ndarray:
        h = np.fromiter((xxhash.xxh3_64_intdigest(t.encode()) for t in texts), np.uint64)
        a = (h & np.uint64(0xFFFF)).astype(np.int64)
        b = ((h >> np.uint64(16)) & np.uint64(0xFFFF)).astype(np.int64)
        return _TABLE[a] + 0.7 * _TABLE[b]


fast = FastEmbedder()


class StreamingParquetStore:
    """Read-only: iterates vectors.parquet in batches; never loads the whole file."""

    has_exact = False

    def __init__(self, path: Path) -> None:
        from indexcheck.stores.base import StoreInfo

        self.path = path
        self.spec = f"bench-parquet:{path}"
        n = pq.ParquetFile(path).metadata.num_rows
        self._info = StoreInfo("bench", n, D, "cosine", "cos", True, False)

    def info(self):  # type: ignore[no-untyped-def]
        return self._info

    def iter_vectors(self, batch: int = 1000) -> Iterator:  # type: ignore[type-arg]
        from indexcheck.stores.base import VectorBatch

        # pre_buffer=False: with it, pyarrow keeps every row group it has read in memory
        pf = pq.ParquetFile(self.path, pre_buffer=False, buffer_size=1 << 20)
        for rb in pf.iter_batches(batch):
            ids = rb.column(0).to_pylist()
            flat = rb.column(1).values.to_numpy(zero_copy_only=False)
            vec = flat.reshape(len(ids), D).astype(np.float32)
            yield VectorBatch(ids, vec, np.full(len(ids), D, np.int32))

    def close(self) -> None:
        return None


def build(folder: Path, n: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    words = "library card renew loan hold fine account room event ebook printer wifi".split()
    rng = np.random.default_rng(1)
    cw = pq.ParquetWriter(
        folder / "chunks.parquet", pa.schema([("id", pa.string()), ("text", pa.string())])
    )
    vw = pq.ParquetWriter(
        folder / "vectors.parquet",
        pa.schema([("id", pa.string()), ("vector", pa.list_(pa.float32(), D))]),
    )
    for start in range(0, n, 50_000):
        stop = min(n, start + 50_000)
        ids = [f"c{i:08d}" for i in range(start, stop)]
        texts = [" ".join(rng.choice(words, size=10)) + f" (note {i})." for i in range(start, stop)]
        vec = fast.embed(texts)
        cw.write_table(pa.table({"id": ids, "text": texts}))
        arr = pa.FixedSizeListArray.from_arrays(pa.array(vec.ravel()), D)
        vw.write_table(pa.Table.from_arrays([pa.array(ids), arr], names=["id", "vector"]))
    cw.close()
    vw.close()


def run(folder: Path, engine_name: str) -> None:
    from indexcheck.chunk_stream import FileChunks
    from indexcheck.core.check_stream import check_all
    from indexcheck.embedders.cache import CachedEmbedder
    from indexcheck.embedders.python_hook import PythonHookEmbedder
    from indexcheck.engine import open_engine

    engine = open_engine(engine_name)
    emb = CachedEmbedder(PythonHookEmbedder("bench_stream_parts:fast"), None)
    t0 = time.perf_counter()
    r = check_all(
        StreamingParquetStore(folder / "vectors.parquet"),  # type: ignore[arg-type]
        emb,
        FileChunks(folder / "chunks.parquet"),
        rows_path=folder / f"rows-{engine_name}.parquet",
        engine=engine,
    )
    wall = time.perf_counter() - t0
    engine.close()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({
        "n": r.checked, "ok": r.ok, "counts": r.counts, "wall": wall,
        "embed_seconds": emb.stats.seconds, "peak_rss_mb": rss,
        "truncated": r.chunks_truncated,
    }))  # fmt: skip


if __name__ == "__main__":
    if sys.argv[1] == "build":
        build(Path(sys.argv[2]), int(sys.argv[3]))
    else:
        run(Path(sys.argv[2]), sys.argv[3])
