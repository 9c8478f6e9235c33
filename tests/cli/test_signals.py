"""A run stopped by SIGTERM, SIGHUP or Ctrl-C ends the same way: its outputs marked failed,
its scratch folder removed, exit 128 + the signal, its --cache good to resume from; a second
signal during the cleanup changes nothing. Real processes, real signals."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.util import signals_as_at_a_terminal

ROOT = Path(__file__).resolve().parents[2]
SLOW = "py:tests.emulators.slow_embedder:SLOW"


def _start(small_kb: dict[str, Path], tmp: Path, slow: float) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TMPDIR=str(tmp / "scratch"))
    env.update(INDEXCHECK_TEST_SLOW=str(slow), INDEXCHECK_TEST_MARK=str(tmp / "mark"))
    args = ["check-index", "--all", "--store", f"faiss:{small_kb['good']}"]
    args += ["--chunks", str(small_kb["chunks"]), "--embedder", SLOW]
    args += ["--json", str(tmp / "out.json"), "--rows", str(tmp / "rows.csv")]
    args += ["--cache", str(tmp / "cache.sqlite"), "--report", str(tmp / "report")]
    return subprocess.Popen(
        [sys.executable, "-m", "indexcheck", *args],
        cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=signals_as_at_a_terminal,
    )  # fmt: skip


def _wait_for(path: Path, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run never started embedding"
        time.sleep(0.02)


@pytest.mark.parametrize(
    ("signals", "message"),
    [
        ([signal.SIGTERM], "stopped by SIGTERM"),
        ([signal.SIGHUP], "stopped by SIGHUP"),
        ([signal.SIGINT], "interrupted"),
        ([signal.SIGTERM, signal.SIGTERM, signal.SIGINT], "stopped by SIGTERM"),
    ],
)
def test_a_signal_ends_the_run_as_ctrl_c_does(
    small_kb: dict[str, Path], tmp_path: Path, signals: list[int], message: str
) -> None:
    (tmp_path / "scratch").mkdir()
    (tmp_path / "report").mkdir()  # what an earlier passing run left: none may survive
    (tmp_path / "out.json").write_text('{"ok": true}')
    (tmp_path / "rows.csv").write_text("id,status\n")
    (tmp_path / "report" / "check-index.md").write_text("# PASS\n")

    proc = _start(small_kb, tmp_path, 0.4)
    _wait_for(tmp_path / "mark", proc)
    for sig in signals:
        proc.send_signal(sig)
        time.sleep(0.05)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signals[0], err
    assert err == f"{message}\n"
    assert json.loads((tmp_path / "out.json").read_text())["ok"] is False
    assert not (tmp_path / "rows.csv").exists()
    assert "could not finish" in (tmp_path / "report" / "check-index.md").read_text()
    assert list((tmp_path / "scratch").iterdir()) == []  # no scratch folder left
    with sqlite3.connect(tmp_path / "cache.sqlite") as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)

    if signals != [signal.SIGTERM]:
        return
    again = _start(small_kb, tmp_path, 0)  # resumes from the cache the stopped run left
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    assert json.loads((tmp_path / "out.json").read_text())["ok"] is True


@pytest.mark.parametrize("json_to", ["-", "/dev/stdout"])
def test_a_closed_stdout_ends_the_run_quietly(
    small_kb: dict[str, Path], tmp_path: Path, json_to: str
) -> None:
    """``--json - | head -c 100``: the reader is gone before the result is written."""
    read, write = os.pipe()
    os.close(read)  # every write to stdout now fails with EPIPE
    args = ["check-index", "--store", f"faiss:{small_kb['good']}", "--chunks"]
    args += [str(small_kb["chunks"]), "--embedder", "py:indexcheck.testing:HASH32"]
    args += ["--json", json_to]
    proc = subprocess.run(
        [sys.executable, "-m", "indexcheck", *args],
        cwd=tmp_path, stdout=write, stderr=subprocess.PIPE, text=True, timeout=120,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )  # fmt: skip
    os.close(write)
    assert (proc.returncode, proc.stderr) == (141, ""), proc.stderr
