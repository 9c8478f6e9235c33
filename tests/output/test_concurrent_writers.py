"""Runs started at once (processes, not threads) that write the same ``--cache``, ``--json``
and ``--rows``: every run ends 0 or with one clear line, the cache passes SQLite's integrity
check and holds each text once, and each output is one whole file from one run, with no
temporary file left beside it."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pyarrow.csv as pcsv

from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.testing import HASH32

ROOT = Path(__file__).parents[2]
WRITERS = 3
N = 160


def _world(tmp: Path) -> tuple[list[str], Path]:
    texts = [f"Passage {i} on topic {i % 13}, with detail {i * 7919 % 1000}." for i in range(N)]
    ids = [f"c{i}" for i in range(N)]
    (tmp / "chunks.jsonl").write_text(
        "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in zip(ids, texts, strict=True))
    )
    write_faiss_folder(tmp / "idx", ids, HASH32.embed(texts))
    out = tmp / "out"
    out.mkdir()
    return texts, out


def test_writers_at_once_leave_a_sound_cache_and_whole_outputs(tmp_path: Path) -> None:
    texts, out = _world(tmp_path)
    cache, result, rows = out / "cache.sqlite", out / "result.json", out / "rows.csv"
    args = [
        sys.executable, "-m", "indexcheck", "check-index",
        "--store", f"faiss:{tmp_path / 'idx'}", "--embedder", "py:tests.hostile_hooks:SLOW",
        "--chunks", str(tmp_path / "chunks.jsonl"), "--all", "--block-size", "1",
        "--cache", str(cache), "--json", str(result), "--rows", str(rows),
    ]  # fmt: skip
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "INDEXCHECK_QUIET": "1"}
    env |= {"HOSTILE_BARRIER": str(barrier), "HOSTILE_WRITERS": str(WRITERS)}
    env.pop("INDEXCHECK_DEBUG", None)
    procs = [
        subprocess.Popen(
            args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(WRITERS)
    ]
    ends = [(p.wait(120), p.stderr.read().decode()) for p in procs if p.stderr]
    for code, err in ends:
        assert code == 0, err
        assert "Traceback" not in err and "could not finish" not in err, err
    db = sqlite3.connect(cache)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    table = next(t for t in tables if "embed" in t or t == "vectors")
    assert db.execute(f"SELECT COUNT(*) FROM {table}").fetchone() == (len(set(texts)),)
    db.close()
    got = json.loads(result.read_text())
    assert got["ok"] is True
    assert pcsv.read_csv(rows).num_rows == N
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []
