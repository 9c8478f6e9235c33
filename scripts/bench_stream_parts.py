"""Pieces of ``bench_check_index.py --all``: a fast deterministic embedder (passed to the
CLI as ``--embedder py:bench_stream_parts:fast``) and the data writers.

    python scripts/bench_stream_parts.py build DIR N   # chunks.parquet + vectors.parquet
    python scripts/bench_stream_parts.py faiss DIR     # DIR/faiss from vectors.parquet
    python scripts/bench_stream_parts.py lancedb DIR   # DIR/lancedb (table chunks), likewise
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import xxhash

D = int(os.environ.get("BENCH_DIM", "384"))  # 384: the default model's width
_TABLE = np.random.default_rng(0).standard_normal((1 << 16, D)).astype(np.float32)


class FastEmbedder:
    """Deterministic: a text's vector is the sum of two table rows picked by its xxh3-64."""

    model_id = f"bench-fast:{D}"
    dimension = D

    def embed(self, texts: list[str]) -> np.ndarray:
        h = np.fromiter((xxhash.xxh3_64_intdigest(t.encode()) for t in texts), np.uint64)
        a = (h & np.uint64(0xFFFF)).astype(np.int64)
        b = ((h >> np.uint64(16)) & np.uint64(0xFFFF)).astype(np.int64)
        return _TABLE[a] + 0.7 * _TABLE[b]


fast = FastEmbedder()


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


def build_faiss(folder: Path) -> None:
    """A flat inner-product index and ids.json of vectors.parquet (the build holds the
    vectors; the check under test does not)."""
    from indexcheck.stores.faiss.store import write_faiss_folder

    table = pq.read_table(folder / "vectors.parquet")
    width = getattr(table.schema.field("vector").type, "list_size", 0)  # the file's own width
    if width < 1:  # a variable-size list column (as indexcheck embed writes): the first row's
        width = len(table.column("vector")[0])
    vec = table.column("vector").combine_chunks().flatten().to_numpy().reshape(-1, width)
    write_faiss_folder(folder / "faiss", table.column("id").to_pylist(), vec)


def build_lancedb(folder: Path) -> None:
    import lancedb

    db = lancedb.connect(str(folder / "lancedb"))
    pf = pq.ParquetFile(folder / "vectors.parquet")
    tbl = None
    for rb in pf.iter_batches(50_000):
        t = pa.Table.from_batches([rb])
        if tbl is None:
            tbl = db.create_table("chunks", data=t)
        else:
            tbl.add(t)


if __name__ == "__main__":
    if sys.argv[1] == "build":
        build(Path(sys.argv[2]), int(sys.argv[3]))
    elif sys.argv[1] == "faiss":
        build_faiss(Path(sys.argv[2]))
    else:
        build_lancedb(Path(sys.argv[2]))
