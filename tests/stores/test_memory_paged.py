"""A full scan through the paged engine stores keeps one page, not the collection.

Each store's docstring states what a scan holds per row; these tests hold it to that, at
n and 4n rows of 64-d vectors, each scan (``iter_vectors(1000)`` to the end) in a fresh
process. Qdrant local mode and Milvus Lite keep the whole collection in the engine, and
chromadb's engine grows with it too, so a whole-process RSS ratio would measure the
engines, not indexcheck:

- Chroma and Qdrant (engines in this process): the Python memory allocated under
  indexcheck's own frames and still live at the last page (tracemalloc, from the end of
  opening), which counts the page, what the engine's reply left in it, and anything the
  scan keeps. Chroma's scan keeps its set of ids read (about 90 bytes a row): the growth
  from n to 4n must stay under ``CHROMA_ROW_BYTES`` a row. Qdrant keeps nothing a row.
- MongoDB: the wire-protocol emulator serves from the test process, so the scanning
  process's peak RSS is indexcheck's and pymongo's (tracemalloc cannot see it: pymongo
  decodes a batch more than 16 frames below indexcheck's); it must not grow by more than
  ``MONGODB_ROW_BYTES`` a row. Keeping every document read grew it 3,300 bytes a row
  (63 -> 110 MB from 5,000 to 20,000 rows; passing: 52 -> 51 MB).
- Milvus: the Lite server runs in its own process (the ``http://`` spec), so the scanning
  process's peak RSS is indexcheck's and pymilvus's; it must not grow by more than
  ``MILVUS_ROW_BYTES`` a row.

A scan that keeps every page it yields breaks each bound several times over: with each
``_scan`` appending every batch it yields to a list on the store, chroma grew 573 bytes a
row, qdrant 404 and milvus 747 (passing: about 92, 0 and under 100).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.commands.diff_index.test_memory import peak_rss_mb

pytestmark = pytest.mark.slow

D = 64
ROOT = Path(__file__).resolve().parents[2]
#: growth of the live Python memory at the last page, per added row: chroma's id set
CHROMA_ROW_BYTES = 160
#: the same for Qdrant, which keeps nothing a row (a margin for allocator noise)
QDRANT_ROW_BYTES = 16
#: growth of the scanning process's peak RSS per added row, Milvus server out of process
MILVUS_ROW_BYTES = 256
#: the same for MongoDB (emulator in the test process, a pymongo cursor holds one batch)
MONGODB_ROW_BYTES = 256

#: opens argv[1], scans it in pages of 1000; with argv[2] == "trace" it measures the Python
#: memory allocated under indexcheck's frames (tracemalloc from the end of opening) that is
#: live at the last page. Prints rows and that figure as JSON.
SCAN = r"""
import json, os, sys, tracemalloc
import indexcheck
from indexcheck.stores import StoreOptions, open_store
store = open_store(sys.argv[1], StoreOptions(trust_pickle=True))
count = store.info().count
pkg = os.path.dirname(indexcheck.__file__) + os.sep
trace = sys.argv[2] == "trace"
if trace:
    tracemalloc.start(16)
rows = own = 0
for batch in store.iter_vectors(1000):
    rows += len(batch.ids)
    if trace and rows == count:
        stats = tracemalloc.take_snapshot().statistics("traceback")
        own = sum(s.size for s in stats if any(f.filename.startswith(pkg) for f in s.traceback))
tracemalloc.stop()
store.close()
print(json.dumps({"rows": rows, "own": own}))
"""

#: serves the Milvus Lite data at argv[1] on a free loopback port, prints the port, and
#: stops when its stdin closes
LITE_SERVER = r"""
import sys
from milvus_lite.adapter.grpc.server import start_server_in_thread
server, db, port = start_server_in_thread(data_dir=sys.argv[1], host="127.0.0.1", port=0)
print(port, flush=True)
sys.stdin.read()
server.stop(grace=0)
db.close()
"""


def _env() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path}


def _rows(n: int) -> tuple[list[str], np.ndarray, list[str]]:
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((n, D), dtype=np.float32)
    texts = [f"chunk {i}: a paragraph about topic {i % 997} " + "x" * 40 for i in range(n)]
    return [str(i) for i in range(n)], vectors, texts


def _scan(spec: str, trace: bool) -> dict[str, float]:
    """The scan's figures; ``rss`` (MB) is read by a fresh wrapper process, since a child
    of this one would inherit this process's peak across ``exec``."""
    rss, done = peak_rss_mb([sys.executable, "-c", SCAN, spec, "trace" if trace else "-"], _env())
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    result["rss"] = rss
    return result


def _growth(build, n: int, trace: bool, key: str) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(figure at n, figure at 4n) of a scan of a collection ``build(n)`` returns."""
    figures = []
    for size in (n, 4 * n):
        got = _scan(build(size), trace)
        assert got["rows"] == size
        figures.append(got[key])
    return figures[0], figures[1]


def _live_growth(name: str, build, n: int, bound: int, holds: str) -> None:  # type: ignore[no-untyped-def]
    """The live Python memory at a scan's last page grows by at most ``bound`` bytes a row
    from ``n`` to ``4n`` rows."""
    small, large = _growth(build, n, True, "own")
    per_row = (large - small) / (3 * n)
    print(f"{name}: {small / 2**20:.2f} MB at {n}, {large / 2**20:.2f} MB at {4 * n}")
    assert per_row <= bound, (
        f"{name}: a scan's live memory grew {per_row:.0f} bytes a row from {n} to {4 * n} "
        f"rows ({small / 2**20:.2f} -> {large / 2**20:.2f} MB); {holds}"
    )


def test_chroma_scan_keeps_one_page_and_an_id_set(tmp_path: Path) -> None:
    from tests.builders import chroma as builder

    def build(n: int) -> str:
        ids, vectors, texts = _rows(n)
        return builder.build(tmp_path / str(n), [f"chunk-{i}" for i in ids], vectors, texts)

    holds = f"the docstring allows the id set only (under {CHROMA_ROW_BYTES})"
    _live_growth("chroma", build, 4_000, CHROMA_ROW_BYTES, holds)


def test_qdrant_local_scan_keeps_one_page(tmp_path: Path) -> None:
    from tests.builders import qdrant as builder

    def build(n: int) -> str:
        ids, vectors, texts = _rows(n)
        return builder.build(tmp_path / str(n), ids, vectors, texts, metric="dot")

    _live_growth("qdrant", build, 3_000, QDRANT_ROW_BYTES, "it should hold one page")


def test_milvus_scan_process_does_not_grow_with_the_rows(tmp_path: Path) -> None:
    pytest.importorskip("milvus_lite")
    from tests.builders import milvus as builder

    servers: list[subprocess.Popen[str]] = []

    def build(n: int) -> str:
        ids, vectors, texts = _rows(n)
        path = builder.build(tmp_path / str(n), ids, vectors, texts, "l2").split("?")[0]
        server = subprocess.Popen(
            [sys.executable, "-c", LITE_SERVER, path.removeprefix("milvus:")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            env=_env(),
        )  # fmt: skip
        servers.append(server)
        assert server.stdout is not None
        port = int(server.stdout.readline())
        return f"milvus:http://127.0.0.1:{port}?collection=docs"

    n = 10_000
    try:
        small, large = _growth(build, n, False, "rss")
    finally:
        for server in servers:
            server.communicate(timeout=60)
    per_row = (large - small) * 2**20 / (3 * n)
    print(f"milvus: {small:.0f} MB at {n}, {large:.0f} MB at {4 * n}")
    assert per_row <= MILVUS_ROW_BYTES, (
        f"milvus: the scanning process's peak RSS grew {per_row:.0f} bytes a row from {n} "
        f"to {4 * n} rows ({small:.0f} -> {large:.0f} MB); it should hold one "
        "page"
    )


def test_mongodb_scan_keeps_one_batch() -> None:
    pytest.importorskip("pymongo")
    from tests.emulators.mongodb_emulator import Emulator

    emu = Emulator()
    definition = {"fields": [{"type": "vector", "path": "embedding", "numDimensions": D,
                              "similarity": "cosine"}]}  # fmt: skip

    def build(n: int) -> str:
        ids, vectors, texts = _rows(n)
        coll = emu.collection("rag", f"c{n}")
        coll.search_indexes["vector_index"] = {"name": "vector_index", "type": "vectorSearch",
                                               "latestDefinition": definition}  # fmt: skip
        for i, v, t in zip(ids, vectors.tolist(), texts, strict=True):
            coll.docs[i.encode()] = {"_id": i, "text": t, "embedding": v}
        return f"mongodb:{emu.url}?db=rag&collection=c{n}"

    n = 5_000
    try:
        small, large = _growth(build, n, False, "rss")
    finally:
        emu.stop()
    per_row = (large - small) * 2**20 / (3 * n)
    print(f"mongodb: {small:.0f} MB at {n}, {large:.0f} MB at {4 * n}")
    assert per_row <= MONGODB_ROW_BYTES, (
        f"mongodb: the scanning process's peak RSS grew {per_row:.0f} bytes a row from {n} "
        f"to {4 * n} rows ({small:.0f} -> {large:.0f} MB); it should hold one batch"
    )
