"""Every file users hand in is read one record at a time, each record capped: a line over
the limit is refused (exit 2) naming the file and line, in memory bounded by the limit, never
read whole (a 2 GB line of NUL bytes once ended in MemoryError through the catch-all)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.errors import DataFileError, RecordTooLargeError
from indexcheck.inputs.answers import load_answers
from indexcheck.inputs.corpus import load_chunks
from indexcheck.inputs.formats.traces.records import load_json
from indexcheck.inputs.limits import (
    DEFAULT_MAX_RECORD_BYTES,
    RECORD_LIMIT_ENV,
    bounded_lines,
    record_limit,
    set_record_limit,
)
from indexcheck.inputs.questions import load_questions
from indexcheck.inputs.rowfiles import iter_rows

ROOT = Path(__file__).parents[2]


@pytest.fixture(autouse=True)
def _small_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RECORD_LIMIT_ENV, "1024")
    set_record_limit(None)


def _write(path: Path, *lines: bytes) -> Path:
    path.write_bytes(b"".join(lines))
    return path


def test_default_limit_is_64_mib(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(RECORD_LIMIT_ENV)
    assert record_limit() == DEFAULT_MAX_RECORD_BYTES == 64 * 1024 * 1024


def test_option_beats_environment() -> None:
    set_record_limit(2048)
    try:
        assert record_limit() == 2048
    finally:
        set_record_limit(None)


@pytest.mark.parametrize("raw", ["0", "-5", "lots", "1.5"])
def test_a_bad_environment_value_is_refused(raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RECORD_LIMIT_ENV, raw)
    with pytest.raises(DataFileError, match=RECORD_LIMIT_ENV):
        record_limit()


def test_a_line_at_the_limit_is_read(tmp_path: Path) -> None:
    text = "x" * (1024 - len('{"id":"a","text":""}'))
    p = _write(
        tmp_path / "c.jsonl",
        json.dumps({"id": "a", "text": text}, separators=(",", ":")).encode() + b"\n",
    )
    assert load_chunks(p).texts == [text]


def test_a_jsonl_line_over_the_limit_names_file_and_line(tmp_path: Path) -> None:
    p = _write(
        tmp_path / "chunks.jsonl",
        b'{"id":"a","text":"ok"}\n',
        b'{"id":"b","text":"' + b"y" * 3000 + b'"}\n',
    )
    with pytest.raises(RecordTooLargeError) as info:
        load_chunks(p)
    msg = str(info.value)
    assert msg.startswith("chunks.jsonl line 2: a record of 3.0 kB exceeds the 1 KiB record limit")
    assert "--max-record-bytes" in msg and "\n" not in msg


def test_the_last_line_without_newline_is_capped_too(tmp_path: Path) -> None:
    p = _write(tmp_path / "chunks.jsonl", b"\0" * 5000)
    with pytest.raises(RecordTooLargeError, match="chunks.jsonl line 1: a record of 5.0 kB"):
        list(iter_rows(p))


def test_a_csv_line_over_the_limit_is_refused(tmp_path: Path) -> None:
    p = _write(tmp_path / "c.csv", b"id,text\n", b"a," + b"z" * 4000 + b"\n")
    with pytest.raises(RecordTooLargeError, match="c.csv line 2: a record of 4.0 kB"):
        load_chunks(p)


def test_a_quoted_csv_field_over_many_lines_is_refused(tmp_path: Path) -> None:
    body = b"\n".join([b"w" * 100] * 40)  # every line short, the field 4 kB
    p = _write(tmp_path / "c.csv", b"id,text\n", b'a,"' + body + b'"\n')
    with pytest.raises(RecordTooLargeError, match="c.csv line"):
        load_chunks(p)


def test_a_csv_field_over_csv_module_default_but_under_the_limit_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(RECORD_LIMIT_ENV, str(1 << 20))
    p = _write(tmp_path / "c.csv", b"id,text\n", b"a," + b"q" * 200_000 + b"\n")
    assert len(load_chunks(p).texts[0]) == 200_000


def test_questions_and_answers_lines_are_capped(tmp_path: Path) -> None:
    q = _write(tmp_path / "q.jsonl", b'{"id":"q","question":"' + b"a" * 2000 + b'"}\n')
    with pytest.raises(RecordTooLargeError, match="q.jsonl line 1"):
        load_questions(q, require_labels=False)
    a = _write(
        tmp_path / "a.jsonl",
        b'{"id":"q","question":"x","answer":"' + b"a" * 2000 + b'","contexts":[]}\n',
    )
    with pytest.raises(RecordTooLargeError, match="a.jsonl line 1"):
        load_answers(a)


def test_a_whole_json_document_over_its_limit_is_refused_unread(tmp_path: Path) -> None:
    doc = _write(tmp_path / "traces.json", b"[" + b" " * 40_000 + b"]")
    with pytest.raises(RecordTooLargeError, match="traces.json: a document of 40.0 kB exceeds"):
        load_json(doc)


def test_bounded_lines_never_reads_past_the_cap(tmp_path: Path) -> None:
    p = _write(tmp_path / "x.jsonl", b"a\n", b"bb\r\n", b"", b"c")
    with p.open("rb") as f:
        assert list(bounded_lines(f, "x.jsonl")) == [(1, b"a\n"), (2, b"bb\r\n"), (3, b"c")]


def test_the_cli_says_one_line_and_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from indexcheck.stores.faiss.store import write_faiss_folder
    from indexcheck.testing import HASH32

    monkeypatch.delenv("INDEXCHECK_DEBUG", raising=False)
    write_faiss_folder(tmp_path / "idx", ["a", "b"], HASH32.embed(["one", "two"]))
    chunks = _write(
        tmp_path / "chunks.jsonl",
        b'{"id":"a","text":"one"}\n',
        b'{"id":"b","text":"' + b"t" * 5000 + b'"}\n',
    )
    args = [
        "check-index",
        "--store",
        f"faiss:{tmp_path / 'idx'}",
        "--embedder",
        "py:indexcheck.testing:HASH32",
        "--chunks",
        str(chunks),
    ]
    for extra in ([], ["--all"]):
        r = CliRunner().invoke(cli, [*args, *extra])
        assert r.exit_code == 2, r.stderr
        assert r.stderr.strip().splitlines() == [
            "error: chunks.jsonl line 2: a record of 5.0 kB exceeds the 1 KiB record limit; "
            "split it or raise --max-record-bytes"
        ]
    r = CliRunner().invoke(cli, [*args, "--all", "--max-record-bytes", "10000"])
    assert r.exit_code in (0, 1), r.stderr


def _peak_rss_reading(path: Path, limit: str) -> tuple[int, str]:
    """Peak RSS (bytes) of a fresh interpreter that reads ``path`` as chunks."""
    code = textwrap.dedent(
        f"""
        import resource, sys
        from indexcheck.errors import RecordTooLargeError
        from indexcheck.inputs.corpus import load_chunks
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            load_chunks({str(path)!r})
            said = "read"
        except RecordTooLargeError as exc:
            said = str(exc)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print((peak - base) * 1024, said, sep="\\t")
        """
    )
    env = {**os.environ, RECORD_LIMIT_ENV: limit, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    grown, said = out.stdout.strip().split("\t")
    return int(grown), said


def test_a_200_mb_line_costs_the_cap_not_the_line(tmp_path: Path) -> None:
    """A sparse file: 200 MB of NUL bytes on disk costs nothing; reading it whole cost
    581 MB of RSS for 300 MB before the cap."""
    p = tmp_path / "chunks.jsonl"
    with p.open("wb") as f:
        f.truncate(200_000_000)
    grown, said = _peak_rss_reading(p, str(1 << 20))
    assert said.startswith("chunks.jsonl line 1: a record of 200.0 MB exceeds the 1 MiB")
    assert grown < 16 * (1 << 20), grown


@pytest.mark.slow
def test_a_2_gb_line_of_nul_bytes_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """The issue's case, at the default limit: 2.1 GB of NUL bytes on one line."""
    p = tmp_path / "chunks.jsonl"
    with p.open("wb") as f:
        f.truncate(2_100_000_000)
    grown, said = _peak_rss_reading(p, str(DEFAULT_MAX_RECORD_BYTES))
    assert said == (
        "chunks.jsonl line 1: a record of 2.1 GB exceeds the 64 MiB record limit; "
        "split it or raise --max-record-bytes"
    )
    assert grown < 3 * DEFAULT_MAX_RECORD_BYTES, grown  # the cap and a piece, never the line


def test_store_files_beside_an_index_are_capped_too(tmp_path: Path) -> None:
    """A ``jsonl:`` store and a FAISS folder's ``ids.jsonl`` are files users hand in too."""
    from indexcheck.stores.faiss.store import write_faiss_folder
    from indexcheck.testing import HASH32

    store = _write(
        tmp_path / "store.jsonl",
        json.dumps({"id": "a", "vector": [0.5] * 32}).encode() + b"\n",
        b'{"id": "b", "vector": [' + b"0.1, " * 2000 + b"0.1]}\n",
    )
    folder = tmp_path / "idx"
    write_faiss_folder(folder, ["a", "b"], HASH32.embed(["one", "two"]))
    (folder / "ids.json").unlink()
    _write(folder / "ids.jsonl", b'"a"\n', b'"' + b"b" * 4000 + b'"\n')
    for spec, says in (
        (f"jsonl:{store}", "store.jsonl line 2"),
        (f"faiss:{folder}", "ids.jsonl line 2"),
    ):
        r = CliRunner().invoke(
            cli,
            ["check-index", "--store", spec, "--embedder", "py:indexcheck.testing:HASH32", "--all"],
        )
        assert r.exit_code == 2, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and says in lines[0] and "1 KiB record limit" in lines[0], r.stderr
