"""Never harm: a target that is, or lies inside, the source is refused (exit 2) before any
work; a repair killed while embedding or writing leaves no target that looks complete and
the source byte-identical; bad options are exit 2 with one sentence saying what to do."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck import api
from indexcheck.cli.app import cli
from indexcheck.errors import BackendError, InputError, OutputError
from indexcheck.stores.files.store import write_vectors_file
from indexcheck.testing import HashEmbedder
from tests.builders.repeat_corpus import (
    hash_embed,
    langchain_faiss,
    repeat_corpus,
    seed_bug_vectors,
)
from tests.commands.repair.helpers import CountingEmbedder, file_hashes

HASH32 = "py:indexcheck.testing:HASH32"


def _shifted(tmp_path: Path, n: int = 200) -> Path:
    c = repeat_corpus(n, 20)
    path = tmp_path / "src" / "index.parquet"
    write_vectors_file(path, c.ids, seed_bug_vectors(c.texts, hash_embed(32)), c.texts)
    return path


def test_a_target_inside_the_source_folder_is_refused_before_any_embedding(
    tmp_path: Path,
) -> None:
    spec = langchain_faiss(tmp_path, repeat_corpus(120, 10), hash_embed(32))
    folder = Path(spec.split(":", 1)[1])
    emb = CountingEmbedder(32)
    for out in (folder, folder / "fixed"):
        with pytest.raises(InputError, match="inside the source"):
            api.repair(spec, out=out, embedder=emb, trust_pickle=True)
    assert emb.sent == []
    r = CliRunner().invoke(cli, ["repair", "--store", spec, "--trust-pickle", "--out",
                                 str(folder / "fixed"), "--embedder", HASH32])  # fmt: skip
    assert r.exit_code == 2 and "--out" in r.output and "Traceback" not in r.output
    assert not (folder / "fixed").exists()


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ([], "pass --out DIR"),
        (["--out", "EXISTS"], "already exists"),
        (["--out", "NEW", "--verify", "3"], "--verify 8 or more"),
        (["--out", "NEW", "--verify", "some"], "a count or 'all'"),
    ],
)
def test_bad_options_are_exit_2_with_what_to_do(
    tmp_path: Path, extra: list[str], says: str
) -> None:
    src = _shifted(tmp_path)
    (tmp_path / "exists").mkdir()
    args = [a.replace("EXISTS", str(tmp_path / "exists")).replace("NEW", str(tmp_path / "n"))
            for a in extra]  # fmt: skip
    r = CliRunner().invoke(cli, ["repair", "--store", f"parquet:{src}", "--embedder", HASH32,
                                 *args])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert says in " ".join(r.output.split())
    assert not (tmp_path / "n").exists()


class _DiesMidway(HashEmbedder):
    """Embeds the check sample, then fails as a killed provider connection would."""

    def __init__(self) -> None:
        super().__init__(32)
        self.calls = 0

    def _embed_batch(self, texts: list[Any]) -> tuple[np.ndarray, int]:
        self.calls += 1
        if self.calls > 1:
            raise BackendError("the embedding service went away")
        return super()._embed_batch(texts)


def test_a_repair_whose_embedder_dies_leaves_no_target_and_the_source_intact(
    tmp_path: Path,
) -> None:
    src = _shifted(tmp_path)
    before = file_hashes(src.parent)
    out = tmp_path / "fixed"
    with pytest.raises(BackendError):
        api.repair(f"parquet:{src}", out=out, embedder=_DiesMidway())
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".fixed")] == []
    assert file_hashes(src.parent) == before


def test_a_repair_failing_mid_write_leaves_no_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from indexcheck.commands.repair.targets.faiss import FaissWriter

    spec = langchain_faiss(tmp_path, repeat_corpus(120, 10), hash_embed(32))
    before = file_hashes(Path(spec.split(":", 1)[1]))

    def full_disk(*_a: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(FaissWriter, "commit", full_disk)  # after the Parquet file
    out = tmp_path / "fixed"
    with pytest.raises(OutputError, match="disk filled"):
        api.repair(spec, out=out, embedder=HashEmbedder(32), trust_pickle=True)
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert file_hashes(Path(spec.split(":", 1)[1])) == before


_KILLED = """
import sys, time
from indexcheck import api
from indexcheck.commands.repair.targets.parquet import ParquetWriter
from indexcheck.testing import HashEmbedder
real = ParquetWriter.commit
def slow(self):
    real(self)
    print("written", flush=True)
    time.sleep(60)
ParquetWriter.commit = slow
api.repair(sys.argv[1], out=sys.argv[2], embedder=HashEmbedder(32))
"""


def test_a_repair_killed_while_writing_leaves_no_target_that_looks_complete(
    tmp_path: Path,
) -> None:
    src = _shifted(tmp_path)
    before = file_hashes(src.parent)
    out = tmp_path / "fixed"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    proc = subprocess.Popen([sys.executable, "-c", _KILLED, f"parquet:{src}", str(out)],
                            stdout=subprocess.PIPE, env=env)  # fmt: skip
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == b"written"  # the Parquet file is on disk...
    proc.send_signal(signal.SIGKILL)  # ...and the process dies before the rename
    proc.wait(timeout=30)
    time.sleep(0.1)
    assert not out.exists()
    assert file_hashes(src.parent) == before


_CALLS = {"n": 0}


def dies_after_the_sample(texts: list[str]) -> np.ndarray:
    """A ``py:`` hook: the check sample embeds, then the service goes away."""
    _CALLS["n"] += 1
    if _CALLS["n"] > 1:
        raise BackendError("the embedding service went away")
    return HashEmbedder(32).embed(texts)


def test_the_cli_says_it_could_not_finish_and_leaves_nothing(tmp_path: Path) -> None:
    src = _shifted(tmp_path)
    _CALLS["n"] = 0
    hook = "py:tests.commands.repair.test_the_source_is_never_harmed:dies_after_the_sample"
    r = CliRunner().invoke(cli, ["repair", "--store", f"parquet:{src}", "--embedder", hook,
                                 "--out", str(tmp_path / "fixed")])  # fmt: skip
    assert r.exit_code == 3, r.output
    assert "went away" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "fixed").exists()
