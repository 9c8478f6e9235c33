"""diff-index stopped mid-run by SIGTERM or Ctrl-C (a real process, a real signal) leaves
no scratch behind: its own temporary folder is removed, and in a ``--workdir`` the user
gave, the spill files it wrote are removed while what was there before stays."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.testing import HashEmbedder
from tests.util import signals_as_at_a_terminal

ROOT = Path(__file__).resolve().parents[3]
SLOW = "py:tests.emulators.slow_embedder:SLOW"


def _side(tmp: Path, name: str, texts: list[str]) -> tuple[Path, Path]:
    ids = [f"c{i}" for i in range(len(texts))]
    chunks = tmp / f"{name}.jsonl"
    chunks.write_text(
        "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in zip(ids, texts, strict=True))
    )
    write_faiss_folder(tmp / name, ids, HashEmbedder(32).embed(texts))
    return tmp / name, chunks


def _start(tmp: Path, workdir: Path | None) -> subprocess.Popen[str]:
    old_texts = [f"Section {i}. Fact {i} about subject {i % 9}." for i in range(200)]
    new_texts = [t if i % 2 else t + " Revised." for i, t in enumerate(old_texts)]
    old, chunks_old = _side(tmp, "old", old_texts)
    new, chunks_new = _side(tmp, "new", new_texts)
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(tmp / "scratch"))
    env.update(INDEXCHECK_TEST_SLOW="0.3", INDEXCHECK_TEST_MARK=str(tmp / "mark"))
    env.pop("INDEXCHECK_DEBUG", None)
    args = ["diff-index", "--old", f"faiss:{old}", "--new", f"faiss:{new}", "--all-new"]
    args += ["--chunks-old", str(chunks_old), "--chunks-new", str(chunks_new)]
    args += ["--embedder", SLOW, "--json", str(tmp / "out.json")]
    args += ["--workdir", str(workdir)] if workdir else []
    return subprocess.Popen(
        [sys.executable, "-m", "indexcheck", *args],
        cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=signals_as_at_a_terminal,
    )  # fmt: skip


def _stop_when_embedding(proc: subprocess.Popen[str], mark: Path, sig: int) -> str:
    deadline = time.monotonic() + 90
    while not mark.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run never started embedding"
        time.sleep(0.02)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    return err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_its_own_scratch_folder_is_removed(tmp_path: Path, sig: int) -> None:
    (tmp_path / "scratch").mkdir()
    proc = _start(tmp_path, None)
    err = _stop_when_embedding(proc, tmp_path / "mark", sig)
    assert "Traceback" not in err
    assert list((tmp_path / "scratch").iterdir()) == []
    assert json.loads((tmp_path / "out.json").read_text())["ok"] is False


def test_spill_files_in_a_given_workdir_are_removed_and_the_rest_kept(tmp_path: Path) -> None:
    (tmp_path / "scratch").mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / "mine.txt").write_text("the user's own file")
    proc = _start(tmp_path, work)
    _stop_when_embedding(proc, tmp_path / "mark", signal.SIGTERM)
    assert sorted(p.name for p in work.iterdir()) == ["mine.txt"]
    assert (work / "mine.txt").read_text() == "the user's own file"
    assert list((tmp_path / "scratch").iterdir()) == []
