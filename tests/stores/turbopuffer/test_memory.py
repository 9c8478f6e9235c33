"""A full read of a turbopuffer namespace keeps one page, not the namespace: the Python
memory under indexcheck's frames still reachable at the last page (tracemalloc in a fresh
process scanning the emulator over loopback, after a collection) grows by at most
``ROW_BYTES`` a row from n to 4n rows. Without the collection the figure moves with the
collector's timing: the SDK's replies sit in reference cycles (httpx response <-> parsed
model) until the collector runs, about 2 MB more at 8,000 rows than at 2,000 here, and not
kept by the scan. A scan that kept every page it yields grew 2,405 bytes a row (5.88 -> 19.65
MB); this one 0 (3.59 MB at both)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.emulators.turbopuffer_emulator import Namespace, TurbopufferEmulator
from tests.stores.test_memory_paged import D, _env

pytest.importorskip("turbopuffer")

pytestmark = pytest.mark.slow

KEY = "tpuf_memory_key"
#: growth of the reachable memory at the last page, per added row (allocator noise only)
ROW_BYTES = 16

SCAN = r"""
import gc, json, os, sys, tracemalloc
import indexcheck
from indexcheck.stores import open_store
store = open_store(sys.argv[1])
count = store.info().count
pkg = os.path.dirname(indexcheck.__file__) + os.sep
tracemalloc.start(16)
rows = own = 0
for batch in store.iter_vectors(1000):
    rows += len(batch.ids)
    if rows == count:
        gc.collect()
        stats = tracemalloc.take_snapshot().statistics("traceback")
        own = sum(s.size for s in stats if any(f.filename.startswith(pkg) for f in s.traceback))
store.close()
print(json.dumps({"rows": rows, "own": own}))
"""


def test_a_full_read_keeps_one_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TURBOPUFFER_API_KEY", KEY)
    figures = []
    with TurbopufferEmulator(api_key=KEY) as emu:
        for n in (2_000, 8_000):
            ns = Namespace(metric="cosine_distance", dimension=D)
            vecs = np.random.default_rng(n).standard_normal((n, D), dtype=np.float32)
            for i in range(n):  # planted directly: writing 8,000 rows as JSON is slow
                ns.rows[f"c{i:06d}"] = {"vector": vecs[i], "text": f"chunk {i} " + "x" * 40}
            ns.types.update({"id": "string", "text": "string"})
            emu.namespaces[f"n{n}"] = ns
            spec = f"turbopuffer:n{n}?base_url={emu.base_url}"
            done = subprocess.run([sys.executable, "-c", SCAN, spec], capture_output=True,
                                  text=True, env=_env(), timeout=120)  # fmt: skip
            assert done.returncode == 0, done.stderr[-2000:]
            got = json.loads(done.stdout.strip().splitlines()[-1])
            assert got["rows"] == n
            figures.append(got["own"])
    per_row = (figures[1] - figures[0]) / 6_000
    print(f"turbopuffer: {figures[0] / 2**20:.2f} MB at 2000, {figures[1] / 2**20:.2f} MB at 8000")
    assert per_row <= ROW_BYTES, f"a scan's memory grew {per_row:.0f} bytes a row"
