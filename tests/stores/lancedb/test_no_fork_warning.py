"""LanceDB's "fork support is experimental" warning is about its own runtime in a forked
child; indexcheck never uses LanceDB across a fork, so a run that opened a LanceDB table
must not print it (a process that forks later, e.g. a worker pool, stays quiet)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from tests.builders import lancedb as lb

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = """
import os, sys
from indexcheck.stores import open_store
store = open_store(sys.argv[1])
store.info()
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
store.close()
"""


def test_a_fork_after_opening_a_lancedb_table_prints_no_warning(tmp_path: Path) -> None:
    x = np.random.default_rng(0).standard_normal((50, 8)).astype(np.float32)
    spec = lb.build(tmp_path, [f"c{i}" for i in range(50)], x, None, "cosine")
    r = subprocess.run(
        [sys.executable, "-c", SCRIPT, spec], capture_output=True, text=True,
        cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "fork support is experimental" not in r.stderr
