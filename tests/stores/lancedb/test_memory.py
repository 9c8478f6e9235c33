"""Peak memory of ``check-index --all`` through ``lancedb:`` does not grow with the rows.

The same check at n and 4n rows, each in its own process (``peak_rss_mb`` of
``test_memory_streamed``); the peak at 4n must stay within 1.3 x the peak at n. Sizes sit
above check-index's ``JSON_ROWS_LIMIT`` so neither run keeps its rows for the JSON. A
reader that lets LanceDB's scan read ahead of the check holds most of the table: one
``to_batches`` reader over the whole table went from 345 MB at 110,000 rows to 548 MB
at 440,000 (1.59x); reading in pages, 284 -> 321 MB (1.13x).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from indexcheck.commands.check_index.stream.check import JSON_ROWS_LIMIT
from indexcheck.testing import HashEmbedder
from tests.commands.diff_index.test_memory import RATIO, peak_rss_mb

pytestmark = pytest.mark.slow

N = 110_000
D = 128
EMBEDDER = "py:tests.memory_hooks:HASH128"


def _write(root: Path, n: int) -> str:
    """A LanceDB table of n rows whose vectors are ``HASH128`` of their texts, written in
    blocks (several fragments), and its spec."""
    import lancedb
    import pyarrow as pa

    emb = HashEmbedder(D)
    db = lancedb.connect(str(root / "lancedb"))
    table = None
    for start in range(0, n, 50_000):
        rows = range(start, min(n, start + 50_000))
        texts = [f"chunk {i}: a paragraph about topic {i % 997} " + "x" * 40 for i in rows]
        vecs = emb.embed(texts)
        block = pa.table(
            {
                "id": pa.array([f"chunk-{i}" for i in rows], pa.string()),
                "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), D),
                "text": pa.array(texts, pa.string()),
            }
        )
        if table is None:
            table = db.create_table("chunks", block)
        else:
            table.add(block)
    return f"lancedb:{root / 'lancedb'}?table=chunks&metric=cosine"


def _check_rss(folder: Path, n: int) -> float:
    folder.mkdir(parents=True)
    spec = _write(folder, n)
    exe = Path(sys.executable).with_name("indexcheck")
    root = Path(__file__).resolve().parents[3]
    env = {
        **os.environ,
        "INDEXCHECK_CACHE_DIR": str(folder / "cache"),
        "PYTHONPATH": os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p),
    }
    out = folder / "check.json"
    args = ["check-index", "--all", "--store", spec, "--embedder", EMBEDDER, "--json", str(out)]
    rss, done = peak_rss_mb([str(exe), *args], env)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(out.read_text())
    assert result["checked"] == n, {k: v for k, v in result.items() if k != "chunks"}
    shutil.rmtree(folder)
    return rss


def test_check_all_through_lancedb_memory_does_not_grow_with_the_rows(tmp_path: Path) -> None:
    assert N > JSON_ROWS_LIMIT  # neither run keeps every row for the JSON
    small = _check_rss(tmp_path / "n", N)
    large = _check_rss(tmp_path / "4n", 4 * N)
    print(f"lancedb: {small:.0f} MB at {N}, {large:.0f} MB at {4 * N}")
    assert large / small <= RATIO, (
        f"lancedb: peak RSS {small:.0f} MB at {N} rows, {large:.0f} MB at {4 * N} "
        f"({large / small:.2f}x, more than {RATIO}x)"
    )


def test_hook_embeds_like_the_table() -> None:
    """The CLI's embedder is the one that wrote the vectors (so every row checks ok)."""
    from tests.memory_hooks import HASH128

    texts = ["a", "b c"]
    assert np.array_equal(HASH128.embed(texts), HashEmbedder(D).embed(texts))
