"""The one command ending: closing on errors, outputs checked before work, one-line errors."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.errors import BackendUnavailableError
from indexcheck.testing import MemoryStore

EMB = ["--embedder", "py:indexcheck.testing:HASH32"]


class ClosingStore(MemoryStore):
    closed = 0

    def close(self) -> None:
        type(self).closed += 1


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> ClosingStore:
    ClosingStore.closed = 0
    s = ClosingStore(["a", "b"], np.eye(2, 32, dtype=np.float32))
    monkeypatch.setattr("indexcheck.stores.opening.open_store", lambda spec, options: s)
    return s


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_store_closes_when_the_command_raises(
    store: ClosingStore, monkeypatch: pytest.MonkeyPatch, small_kb: dict[str, Path]
) -> None:
    def down(*_a: Any, **_k: Any) -> None:
        raise BackendUnavailableError("memory: gone; retry")

    monkeypatch.setattr("indexcheck.commands.check_index.check_index", down)
    code, _, err = run(
        "check-index", "--store", "memory:x", "--chunks", str(small_kb["chunks"]), *EMB
    )
    assert (code, err) == (3, "error: memory: gone; retry\n")
    assert ClosingStore.closed == 1


def test_store_closes_when_the_command_passes(store: ClosingStore) -> None:
    code, _, err = run(
        "probe-scale", "--store", "memory:x", "--no-cache", "--probes", "2", "-k", "2"
    )
    assert code in (0, 1), err
    assert ClosingStore.closed == 1


@pytest.mark.parametrize(
    "command",
    [
        ["check-index", "--store", "memory:x", *EMB],
        ["probe-scale", "--store", "memory:x"],
        ["compare-ann", "--store", "memory:x"],
    ],
)
def test_json_pointing_at_a_folder_is_refused_before_any_work(
    store: ClosingStore, tmp_path: Path, command: list[str]
) -> None:
    code, out, err = run(*command, "--json", str(tmp_path))
    assert code == 2 and out == ""
    assert (
        err == f"error: --json {tmp_path} is a folder; pass a file path such as "
        f"{tmp_path / 'result.json'}\n"
    )
    assert ClosingStore.closed == 0  # nothing was opened


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_unwritable_report_folder_is_refused_before_any_work(
    store: ClosingStore, tmp_path: Path
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, _, err = run("compare-ann", "--store", "memory:x", "--report", str(locked / "r"))
    finally:
        locked.chmod(0o700)
    assert code == 2
    assert err.startswith(f"error: --report {locked / 'r'} cannot be written")
    assert ClosingStore.closed == 0


def test_report_that_is_a_file_is_refused(store: ClosingStore, tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    code, _, err = run("compare-ann", "--store", "memory:x", "--report", str(f))
    assert (code, err) == (2, f"error: --report {f} is a file; pass a folder path\n")


def test_every_command_stamps_the_manifest(store: ClosingStore, tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    code, _, err = run(
        "probe-scale",
        "--store",
        "memory:x",
        "--no-cache",
        "--probes",
        "2",
        "-k",
        "2",
        "--json",
        str(out),
    )
    assert code in (0, 1), err
    m = json.loads(out.read_text())["manifest"]
    assert m["command"] == "probe-scale" and m["store"]["spec"] == "memory:2"


def test_report_under_a_file_cannot_be_written(store: ClosingStore, tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    code, _, err = run("compare-ann", "--store", "memory:x", "--report", str(f / "r"))
    assert code == 2
    assert err == (
        f"error: --report {f / 'r'} cannot be written ({f} is not a folder); pass another folder\n"
    )
    assert ClosingStore.closed == 0
