"""Third-party stderr noise is held back: a Milvus Lite folder locked by another process
gives exactly one line on stderr (exit 3: the input is right, the folder is busy), and the
library's own traceback shows only under INDEXCHECK_DEBUG=1."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from indexcheck.safety import noise

ROOT = Path(__file__).resolve().parents[2]
HOLD = """
import sys, time
from milvus_lite import MilvusLite
held = MilvusLite(sys.argv[1])
print("held", flush=True)
sys.stdin.read()
"""


def _indexcheck(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("INDEXCHECK_")}
    full.update(env, PYTHONPATH=str(ROOT), INDEXCHECK_QUIET="1")
    return subprocess.run(
        [sys.executable, "-c", "from indexcheck.cli.app import main; main()", *args],
        env=full,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_locked_milvus_lite_folder_is_one_line(tmp_path: Path) -> None:
    pytest.importorskip("milvus_lite")
    from indexcheck.testing import HASH32
    from tests.builders import milvus as mb

    texts = ["Vaccinate puppies at eight weeks.", "Cats need taurine in their diet."]
    spec = mb.build(tmp_path, ["a", "b"], HASH32.embed(texts), texts, "ip")
    folder = spec.split(":", 1)[1].split("?")[0]
    chunks = tmp_path / "chunks.jsonl"
    rows = [{"id": i, "text": t} for i, t in zip("ab", texts, strict=True)]
    chunks.write_text("".join(json.dumps(row) + "\n" for row in rows))
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, folder], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        args = ["check-index", "--store", spec, "--chunks", str(chunks),
                "--embedder", "py:indexcheck.testing:HASH32"]  # fmt: skip
        r = _indexcheck(args)
        lines = [line for line in r.stderr.splitlines() if line.strip()]
        assert r.returncode == 3, r.stderr
        assert len(lines) == 1, r.stderr
        assert lines[0].startswith("error: cannot open Milvus Lite") and "one process" in lines[0]
        debug = _indexcheck(args, INDEXCHECK_DEBUG="1")
        assert debug.returncode == 3
        assert "Failed to start MilvusLite server" in debug.stderr  # the library's own words
        assert debug.stderr.count("Failed to start MilvusLite server") == 1
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)


def test_library_noise_captures_fd_2_and_log_records(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("INDEXCHECK_DEBUG", raising=False)
    with noise.library_noise():
        os.write(2, b"E0000 grpc: C-core noise\n")
        logging.getLogger("some.library").error("a library's own traceback")
    assert capfd.readouterr().err == ""
    assert "C-core noise" in noise.last_captured()
    assert "a library's own traceback" in noise.last_captured()
    monkeypatch.setenv("INDEXCHECK_DEBUG", "1")
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-0123456789abcdef")
    with noise.library_noise():
        os.write(2, b"noise holding tok-0123456789abcdef\n")
    err = capfd.readouterr().err
    assert "noise holding ***" in err and "tok-0123" not in err


def test_nested_blocks_capture_once(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("INDEXCHECK_DEBUG", raising=False)
    with noise.library_noise():
        with noise.library_noise():
            os.write(2, b"inner\n")
        os.write(2, b"outer\n")
    assert capfd.readouterr().err == ""
    assert noise.last_captured().split() == ["inner", "outer"]
