"""Peak memory through the CLI does not grow with the rows: the same diff-index at n and 4n.

Each run is ``indexcheck diff-index`` in its own process, started by a fresh wrapper that
reads the child's peak RSS from ``getrusage(RUSAGE_CHILDREN)``; its peak RSS at 4n must stay
within 1.3 x the peak at n, for each streamed store (``parquet:``,
``jsonl:``, ``faiss:``). A store that holds the file fails this: the whole-file ``parquet:``
reader went from 377 MB at 40k rows to 554 MB at 160k (1.47x), the in-memory ``faiss:``
reader from 340 to 557 MB (1.64x, under /usr/bin/time).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.slow

N = 40_000
#: rows at n per store: JSON Lines is written and parsed in Python, so it runs smaller
SIZES = {"parquet": N, "jsonl": 10_000, "faiss": N}
D = 64
RATIO = 1.3


def _rows(n: int, seed: int) -> tuple[list[str], list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, D), dtype=np.float32)
    ids = [f"chunk-{i}" for i in range(n)]
    texts = [f"chunk {i}: a paragraph about topic {i % 997} " + "x" * 40 for i in range(n)]
    return ids, texts, v


def _write(kind: str, folder: Path, n: int) -> tuple[str, str]:
    """(old spec, new spec) of a pair of n rows whose new side moved 20 vectors."""
    ids, texts, v = _rows(n, 0)
    new = v.copy()
    new[100:120] = np.random.default_rng(1).standard_normal((20, D), dtype=np.float32)
    specs = []
    for name, vecs in (("old", v), ("new", new)):
        if kind == "parquet":
            path = folder / f"{name}.parquet"
            flat = pa.array(vecs.reshape(-1), pa.float32())
            table = pa.table(
                {"id": ids, "text": texts, "vector": pa.FixedSizeListArray.from_arrays(flat, D)}
            )
            pq.write_table(table, path, row_group_size=8192)
            specs.append(f"parquet:{path}")
        elif kind == "jsonl":
            path = folder / f"{name}.jsonl"
            with path.open("w", encoding="utf-8") as f:
                for i, t, row in zip(ids, texts, np.round(vecs, 5).tolist(), strict=True):
                    f.write(json.dumps({"id": i, "text": t, "vector": row}) + "\n")
            specs.append(f"jsonl:{path}")
        else:
            from indexcheck.stores.faiss.store import write_faiss_folder

            write_faiss_folder(folder / name, ids, vecs, texts)
            specs.append(f"faiss:{folder / name}")
    return specs[0], specs[1]


#: runs argv[1:] as its only child and prints the child's exit code and peak RSS (KiB)
WRAPPER = (
    "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]).returncode; "
    "print(r, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)"
)


def peak_rss_mb(args: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    """Peak RSS (MB) of ``args`` run as the only child of a fresh process, and the run."""
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, *args], capture_output=True, text=True, env=env,
        timeout=300,
    )  # fmt: skip
    m = re.search(r"(-?\d+) (\d+)\s*$", done.stderr)
    assert m, done.stderr[-2000:]
    done.returncode = int(m.group(1))
    return int(m.group(2)) / 1024, done


def _diff_rss(kind: str, folder: Path, n: int) -> float:
    folder.mkdir(parents=True, exist_ok=True)
    old, new = _write(kind, folder, n)
    exe = Path(sys.executable).with_name("indexcheck")
    env = {**os.environ, "INDEXCHECK_CACHE_DIR": str(folder / "cache")}
    out = folder / "diff.json"
    rss, done = peak_rss_mb(
        [str(exe), "diff-index", "--old", old, "--new", new, "--json", str(out)], env
    )
    assert done.returncode == 1, done.stderr[-2000:]  # the 20 moved vectors
    result = json.loads(out.read_text())
    assert result["counts"]["vector_changed"] == 20
    assert result["counts"]["unchanged"] == n - 20
    shutil.rmtree(folder)
    return rss


@pytest.mark.parametrize("kind", ["parquet", "jsonl", "faiss"])
def test_diff_index_memory_does_not_grow_with_the_rows(tmp_path: Path, kind: str) -> None:
    n = SIZES[kind]
    small = _diff_rss(kind, tmp_path / "n", n)
    large = _diff_rss(kind, tmp_path / "4n", 4 * n)
    print(f"{kind}: {small:.0f} MB at {n}, {large:.0f} MB at {4 * n}")
    assert large / small <= RATIO, f"{kind}: peak RSS {small:.0f} MB at {n} rows, " + (
        f"{large:.0f} MB at {4 * n} ({large / small:.2f}x, more than {RATIO}x)"
    )
