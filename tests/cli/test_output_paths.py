"""Output paths checked before any work for every reason they could fail later (a name or a
path over the system's limits, a name that is not UTF-8, a parent that is a file), without a
probe file in a device folder or beside a FIFO; FIFOs and /dev/fd pipes are written through;
an input path that is not UTF-8 is read or refused with one sentence, never a traceback."""

# ruff: noqa: E501  (command lines read best on one line)

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.testing import HASH32

EMB = ["--embedder", "py:indexcheck.testing:HASH32"]


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("INDEXCHECK_DEBUG", raising=False)
    monkeypatch.chdir(tmp_path)
    texts = [f"Fact {i}." for i in range(6)]
    ids = [f"c{i}" for i in range(6)]
    (tmp_path / "chunks.jsonl").write_text(
        "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in zip(ids, texts, strict=True))
    )
    write_faiss_folder(tmp_path / "idx", ids, HASH32.embed(texts))
    return tmp_path


def _check(w: Path, *args: str) -> list[str]:
    return ["check-index", "--store", f"faiss:{w / 'idx'}", *EMB, "--chunks", str(w / "chunks.jsonl"), "--all", *args]  # fmt: skip


def _refused(args: list[str], says: str) -> str:
    r = CliRunner().invoke(cli, args)
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2, r.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert says in lines[0], lines[0]
    assert "Traceback" not in r.stdout + r.stderr
    return lines[0]


def test_a_name_over_name_max_is_refused_before_work(world: Path) -> None:
    long = "r" * 300 + ".json"
    _refused(_check(world, "--json", str(world / long)), "longer than the 255 bytes a file name")
    _refused(_check(world, "--rows", str(world / ("r" * 300 + ".parquet"))), "--rows")
    _refused(_check(world, "--report", str(world / ("d" * 300) / "x")), "--report")


def test_a_path_over_path_max_is_refused_before_work(world: Path) -> None:
    deep = Path(world, *(["d" * 200] * 25), "r.json")  # every name short, the path 5 kB
    _refused(_check(world, "--json", str(deep)), "bytes long, over the system's 4096")
    assert not (world / ("d" * 200)).exists()  # nothing created on the way


def test_a_parent_that_is_a_file_is_refused(world: Path) -> None:
    (world / "afile").write_text("x")
    _refused(_check(world, "--json", str(world / "afile" / "r.json")), "afile is not a folder")
    assert (world / "afile").read_text() == "x"


def test_a_name_that_is_not_utf8_is_refused_in_one_line(world: Path) -> None:
    for option, name in (
        ("--json", b"r\xff.json"),
        ("--rows", b"r\xfe.csv"),
        ("--report", b"d\xfe"),
    ):
        line = _refused(_check(world, option, str(world / os.fsdecode(name))), "not valid UTF-8")
        assert "\\xf" in line  # the bytes shown as escapes, never sent raw
    assert sorted(os.listdir(world)) == ["chunks.jsonl", "idx"]


def _drain(fd: int, into: list[bytes]) -> threading.Thread:
    def run() -> None:
        with os.fdopen(fd, "rb") as f:
            into.append(f.read())

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_json_to_a_pipe_in_dev_fd_is_written_through(world: Path) -> None:
    """``--json >(jq .)``: the probe must not try to create a file in /dev/fd."""
    r_fd, w_fd = os.pipe()
    got: list[bytes] = []
    reader = _drain(r_fd, got)
    try:
        r = CliRunner().invoke(cli, _check(world, "--json", f"/dev/fd/{w_fd}"))
    finally:
        os.close(w_fd)
    reader.join(10)
    assert r.exit_code == 0, r.stderr
    assert json.loads(got[0])["ok"] is True


def test_json_to_a_fifo_is_written_through_with_no_probe_beside_it(world: Path) -> None:
    out = world / "outs"
    out.mkdir()
    fifo = out / "result.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    opened: list[int] = []

    def run() -> None:
        fd = os.open(fifo, os.O_RDONLY)
        opened.append(fd)
        with os.fdopen(fd, "rb") as f:
            got.append(f.read())

    reader = threading.Thread(target=run, daemon=True)
    reader.start()
    r = CliRunner().invoke(cli, _check(world, "--json", str(fifo)))
    reader.join(10)
    assert r.exit_code == 0, r.stderr
    assert json.loads(got[0])["ok"] is True
    assert sorted(p.name for p in out.iterdir()) == ["result.fifo"]  # no probe, no temp file
    assert fifo.is_fifo()


def test_a_faiss_folder_whose_name_is_not_utf8_is_read(world: Path) -> None:
    """faiss's SWIG wrapper takes UTF-8 text only: the index is opened through /proc."""
    name = os.fsdecode(b"idx\xfe")
    os.rename(world / "idx", world / name)
    r = CliRunner().invoke(cli, ["check-index", "--store", f"faiss:{world / name}", *EMB, "--chunks", str(world / "chunks.jsonl"), "--all"])  # fmt: skip
    assert r.exit_code == 0, r.stderr


def test_a_chunks_file_whose_name_is_not_utf8_is_named_in_one_line(world: Path) -> None:
    bad = world / os.fsdecode(b"ch\xfe.jsonl")
    bad.write_bytes(b'{"id": "a", "text": 5}\n')
    r = CliRunner().invoke(cli, ["check-index", "--store", f"faiss:{world / 'idx'}", *EMB, "--chunks", str(bad), "--all"])  # fmt: skip
    assert r.exit_code == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "line 1: column 'text' holds" in lines[0], r.stderr


LONG = "x" * 300


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(
            lambda w: ["check-index", "--store", f"faiss:{w / LONG}", *EMB], id="store-folder"
        ),
        pytest.param(
            lambda w: ["check-index", "--store", f"parquet:{w / LONG}.parquet", *EMB],
            id="store-file",
        ),
        pytest.param(
            lambda w: [
                "check-index",
                "--store",
                f"faiss:{w / 'idx'}",
                *EMB,
                "--sample",
                "2",
                "--cache",
                str(w / LONG),
            ],
            id="cache",
        ),
        pytest.param(
            lambda w: [
                "sweep-threshold",
                "--store",
                f"faiss:{w / 'idx'}",
                *EMB,
                "--questions",
                f"{w / LONG}.jsonl",
            ],
            id="questions",
        ),
        pytest.param(
            lambda w: [
                "check-answers",
                "--answers",
                f"{w / LONG}.json",
                "--chunks",
                str(w / "chunks.jsonl"),
            ],
            id="answers",
        ),
        pytest.param(
            lambda w: [
                "diff-index",
                "--old",
                f"faiss:{w / 'idx'}",
                "--new",
                f"faiss:{w / 'idx'}",
                "--workdir",
                str(w / LONG),
            ],
            id="workdir",
        ),
        pytest.param(
            lambda w: [
                "check-index",
                "--store",
                f"faiss:{w / 'idx'}",
                *EMB,
                "--chunks",
                f"{w / LONG}.jsonl",
            ],
            id="chunks",
        ),
    ],
)
def test_an_input_path_over_name_max_is_one_sentence_exit_2(world: Path, args: object) -> None:
    assert callable(args)
    line = _refused(args(world), "too long")
    assert "could not finish" not in line


def test_parquet_inputs_whose_names_are_not_utf8_are_read(world: Path) -> None:
    """pyarrow takes UTF-8 path text only: the files are opened through /proc too."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = [f"Fact {i}." for i in range(6)]
    table = pa.table(
        {
            "id": [f"c{i}" for i in range(6)],
            "text": texts,
            "vector": [v.tolist() for v in HASH32.embed(texts)],
        }
    )
    pq.write_table(table, world / "plain.parquet")
    store = world / os.fsdecode(b"st\xfe.parquet")
    os.rename(world / "plain.parquet", store)
    for extra in (["--sample", "3"], ["--all"], ["--all", "--chunks", str(store)]):
        r = CliRunner().invoke(cli, ["check-index", "--store", f"parquet:{store}", *EMB, *extra])
        assert r.exit_code == 0, r.stderr
