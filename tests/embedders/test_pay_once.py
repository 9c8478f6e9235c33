"""Pay once: the embedding cache commits each batch as it arrives, so a run killed at any
point, or stopped by an exhausted rate limit, is resumed by a rerun that requests only the
texts not yet embedded."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from indexcheck.embedders.base import RetryPolicy
from indexcheck.embedders.cache import CachedEmbedder, EmbeddingCache, audit_size
from indexcheck.errors import DataFileError, RateLimitError
from indexcheck.testing import HashEmbedder

ROOT = Path(__file__).resolve().parents[2]
KEY = "canary-pay-once-3f9c"


def _chunks(path: Path, n: int) -> Path:
    path.write_text(
        "".join(
            json.dumps({"id": f"c{i}", "text": f"chunk text number {i}"}) + "\n" for i in range(n)
        )
    )
    return path


def _embed_cli(
    tmp: Path, chunks: Path, cache: Path, out: str, kill_at: int | None
) -> tuple[int, list[int]]:
    """Run `indexcheck embed` in a subprocess with the KILL hook; (returncode, texts per call)."""
    log = tmp / f"log-{out}.txt"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOSTILE_LOG": str(log)}
    env.pop("HOSTILE_KILL_AT", None)
    if kill_at is not None:
        env["HOSTILE_KILL_AT"] = str(kill_at)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from indexcheck.cli.app import main; main()",
            "embed",
            "--chunks",
            str(chunks),
            "--embedder",
            "py:tests.hostile_hooks:KILL",
            "--cache",
            str(cache),
            "--out",
            str(tmp / out),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    calls = [int(x) for x in log.read_text().split()] if log.exists() else []
    return proc.returncode, calls


def test_sigkill_mid_run_then_rerun_requests_only_the_rest(tmp_path: Path) -> None:
    chunks = _chunks(tmp_path / "chunks.jsonl", 1000)
    cache = tmp_path / "cache" / "emb.sqlite"
    code, calls = _embed_cli(tmp_path, chunks, cache, "first.parquet", kill_at=3)
    assert code == -signal.SIGKILL
    assert calls == [256, 256, 256]  # killed during the third batch, before it answered
    code, calls = _embed_cli(tmp_path, chunks, cache, "second.parquet", kill_at=None)
    assert code == 0
    # the first call is the audit of the 512 hits (audit_size: 1%, at least 3); then the two
    # committed batches are not asked again
    assert calls[0] == audit_size(512) == 6
    assert sum(calls[1:]) == 1000 - 2 * 256
    code, calls = _embed_cli(tmp_path, chunks, cache, "third.parquet", kill_at=None)
    assert code == 0 and calls == [audit_size(1000)]  # a third run pays only the audit


def test_rate_limit_after_3_batches_then_rerun_requests_only_the_rest(tmp_path: Path) -> None:
    pytest.importorskip("mistralai.client")
    from indexcheck.embedders.mistral.embedder import MistralEmbedder
    from tests.emulators.mistral_emulator import MistralEmulator, expected_vector

    texts = [f"distinct text {i}" for i in range(20)]
    path = tmp_path / "emb.sqlite"
    with MistralEmulator(api_key=KEY) as emu:

        def embedder() -> CachedEmbedder:
            inner = MistralEmbedder(
                api_key=KEY,
                server_url=emu.url,
                batch_size=4,
                retry=RetryPolicy(max_retries=2),
                sleep=lambda s: None,
            )
            return CachedEmbedder(inner, EmbeddingCache(path))

        emu.fail_after(3, 429)
        with pytest.raises(RateLimitError):
            embedder().embed(texts)
        assert len(emu.requests) == 3 + 3  # 3 paid batches, then 429 and 2 retries
        emu.reset()
        vectors = embedder().embed(texts)
        inputs = [len(r["body"]["input"]) for r in emu.requests]
        # the audit re-embeds 3 of the 12 hits, then only the 8 texts never embedded are sent
        assert inputs == [audit_size(12), 4, 4] == [3, 4, 4]
    want = np.stack([expected_vector(t) for t in texts])
    np.testing.assert_allclose(vectors, want, atol=1e-6)
    raw = path.read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("emb.sqlite-*"))
    assert KEY.encode() not in raw


def test_cache_is_wal_and_shared_by_concurrent_writers(tmp_path: Path) -> None:
    path = tmp_path / "emb.sqlite"
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            emb = CachedEmbedder(HashEmbedder(16), EmbeddingCache(path))
            for start in range(0, 400, 40):
                emb.embed([f"t{offset}-{i}" for i in range(start, start + 40)])
        except BaseException as exc:  # noqa: BLE001 (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == 1200


def test_cache_that_is_not_sqlite_is_refused_with_its_path(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("my notes, not a database\n" * 20)
    before = path.read_bytes()
    with pytest.raises(DataFileError, match=f"--cache {path} is not an indexcheck cache"):
        EmbeddingCache(path)
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["notes.txt"]


def test_cache_rows_of_another_dimension_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "emb.sqlite"
    small, big = HashEmbedder(16), HashEmbedder(32)
    small.model_id = big.model_id = "py:my.hook:embed"  # same name, another model behind it
    CachedEmbedder(small, EmbeddingCache(path)).embed(["a", "b"])
    with pytest.raises(DataFileError, match="dimension 16, but the embedder gives 32"):
        CachedEmbedder(big, EmbeddingCache(path))


def test_cache_commits_per_batch_in_process(tmp_path: Path) -> None:
    """A failure in batch 3 leaves batches 1-2 committed (no kill needed to see it)."""

    class FailThird(HashEmbedder):
        calls = 0

        def embed(self, texts):  # type: ignore[no-untyped-def]
            FailThird.calls += 1
            if FailThird.calls == 3:
                raise RateLimitError("429 after every retry")
            return super().embed(texts)

    path = tmp_path / "emb.sqlite"
    inner = FailThird(8)
    inner.batch_size = 5
    with pytest.raises(RateLimitError):
        CachedEmbedder(inner, EmbeddingCache(path)).embed([f"x{i}" for i in range(20)])
    assert sqlite3.connect(path).execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == 10
