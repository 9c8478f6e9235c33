"""Hostile files, command by command: every input file a command reads, fed the classes of
bytes users and CI hand in (empty, binary garbage, truncated JSON, NaN/Infinity, duplicate
ids, an integer too long to convert, a BOM, CRLF line ends), and stores with NaN or
infinite vectors and rows of the wrong length.

Each run ends 0/1 (the file was fine to read) or 2 with exactly one ``error:`` line; never
a traceback, never the generic catch-all ("could not finish: <Exception>"), never exit 3:
the count of catch-all endings over this matrix is 0, and a new one fails here.
"""

# ruff: noqa: E501  (the matrix reads best one row per line)
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.testing import HASH32
from tests.util import CATCH_ALL, tree_digest

EMB = ["--embedder", "py:indexcheck.testing:HASH32"]
IDS = [f"c{i}" for i in range(12)]
TEXTS = [f"Fact {i} about subject {i % 5}." for i in range(12)]

#: (name, bytes, whether a reader may accept it): benign ones may pass, the rest are exit 2
CHUNK_FILES: list[tuple[str, bytes, bool]] = [
    ("empty", b"", False),
    ("blank_lines", b"\n\n  \n", False),
    ("garbage", bytes(range(256)) * 4, False),
    ("nul_bytes", b"\0" * 4096, False),
    ("truncated_json", b'{"id": "c0", "text": "Fact 0 ab', False),
    ("json_array", b'[{"id": "c0", "text": "x"}]\n', False),
    ("nan_text", b'{"id": "c0", "text": NaN}\n', False),
    ("infinity_id", b'{"id": Infinity, "text": "x"}\n', False),
    ("huge_int_id", b'{"id": 1' + b"9" * 5000 + b', "text": "x"}\n', False),
    ("huge_float", b'{"id": "c0", "text": 1e999}\n', False),
    ("duplicate_ids", b'{"id": "c0", "text": "Fact 0 about subject 0."}\n' * 2, False),
    (
        "bom",
        b"\xef\xbb\xbf"
        + b"".join(
            json.dumps({"id": i, "text": t}).encode() + b"\n"
            for i, t in zip(IDS, TEXTS, strict=True)
        ),
        True,
    ),
    (
        "crlf",
        b"".join(
            json.dumps({"id": i, "text": t}).encode() + b"\r\n"
            for i, t in zip(IDS, TEXTS, strict=True)
        ),
        True,
    ),
]
CSV_FILES: list[tuple[str, bytes, bool]] = [
    ("csv_empty", b"", False),
    ("csv_header_only", b"id,text\n", False),
    ("csv_garbage", bytes(range(256)) * 4, False),
    ("csv_nul", b"id,text\n\0\0\0,\0\n", True),  # odd, but strings: read as written
    ("csv_unclosed_quote", b'id,text\nc0,"never closed\n', False),
    (
        "csv_bom",
        b"\xef\xbb\xbfid,text\n"
        + b"".join(f"{i},{t}\n".encode() for i, t in zip(IDS, TEXTS, strict=True)),
        True,
    ),
    (
        "csv_crlf",
        b"id,text\r\n" + b"".join(f"{i},{t}\r\n".encode() for i, t in zip(IDS, TEXTS, strict=True)),
        True,
    ),
]
PARQUET_FILES: list[tuple[str, bytes, bool]] = [
    ("pq_empty", b"", False),
    ("pq_magic_only", b"PAR1", False),
    ("pq_garbage", b"PAR1" + bytes(range(256)) * 4 + b"PAR1", False),
    ("pq_cut_footer", b"PAR1" + b"\0" * 64 + (40).to_bytes(4, "little") + b"PAR1", False),
]
QUESTION_FILES: list[tuple[str, bytes, bool]] = [
    ("q_empty", b"", False),
    ("q_garbage", bytes(range(256)) * 4, False),
    ("q_truncated", b'{"id": "q", "question": "wha', False),
    ("q_nan_expected", b'{"id": "q", "question": "x", "expected": NaN}\n', False),
    ("q_huge_int", b'{"id": 1' + b"9" * 5000 + b', "question": "x", "in_scope": false}\n', False),
    ("q_duplicate", b'{"id": "q", "question": "x", "in_scope": false}\n' * 2, False),
    (
        "q_bom",
        b'\xef\xbb\xbf{"id": "q", "question": "Fact 1 about subject 1.", "expected": ["c1"]}\n{"id": "o", "question": "zebra", "in_scope": false}\n',
        True,
    ),
    (
        "q_crlf",
        b'{"id": "q", "question": "Fact 1 about subject 1.", "expected": ["c1"]}\r\n{"id": "o", "question": "zebra", "in_scope": false}\r\n',
        True,
    ),
]
ANSWER_FILES: list[tuple[str, bytes, bool]] = [
    ("a_empty", b"", False),
    ("a_garbage", bytes(range(256)) * 4, False),
    ("a_truncated", b'{"id": "a", "question": "x", "answer": "y", "contexts": [', False),
    (
        "a_nan_score",
        b'{"id": "a", "question": "x", "answer": "y", "contexts": [{"id": "c0", "text": "t", "score": NaN}]}\n',
        False,
    ),
    (
        "a_huge_rank",
        b'{"id": "a", "question": "x", "answer": "y", "contexts": [{"id": "c0", "text": "t", "rank": 1'
        + b"0" * 5000
        + b"}]}\n",
        False,
    ),
    ("a_duplicate", b'{"id": "a", "question": "x", "answer": "y", "contexts": []}\n' * 2, False),
    (
        "a_bom",
        b'\xef\xbb\xbf{"id": "a", "question": "x", "answer": "Fact 1.", "contexts": [{"id": "c1", "text": "Fact 1 about subject 1."}]}\n',
        True,
    ),
]


def _files(
    w: Path, rows: list[tuple[str, bytes, bool]], suffix: str
) -> list[tuple[str, Path, bool]]:
    out = []
    for name, data, benign in rows:
        p = w / "data" / f"{name}{suffix}"
        p.write_bytes(data)
        out.append((name, p, benign))
    return out


def _world(tmp: Path) -> Path:
    (tmp / "data").mkdir()
    (tmp / "out").mkdir()
    (tmp / "data" / "chunks.jsonl").write_text(
        "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in zip(IDS, TEXTS, strict=True))
    )
    write_faiss_folder(tmp / "data" / "idx", IDS, HASH32.embed(TEXTS))
    return tmp


Command = Callable[[Path, Path], list[str]]


def _store(w: Path) -> str:
    return f"faiss:{w / 'data' / 'idx'}"


def _chunks(w: Path) -> str:
    return str(w / "data" / "chunks.jsonl")


# fmt: off
CHUNK_COMMANDS: dict[str, Command] = {
    "check-index": lambda w, f: ["check-index", "--store", _store(w), *EMB, "--sample", "2", "--chunks", str(f)],
    "check-index-all": lambda w, f: ["check-index", "--store", _store(w), *EMB, "--all", "--chunks", str(f), "--rows", str(w / "out" / "rows.csv")],
    "embed": lambda w, f: ["embed", *EMB, "--chunks", str(f), "--out", str(w / "out" / "v.parquet")],
    "diff-index": lambda w, f: ["diff-index", "--old", _store(w), "--new", _store(w), "--chunks-old", str(f), "--chunks-new", _chunks(w)],
    "check-answers": lambda w, f: ["check-answers", "--answers", str(w / "data" / "answers.jsonl"), "--chunks", str(f)],
}
QUESTION_COMMANDS: dict[str, Command] = {
    "sweep-threshold": lambda w, f: ["sweep-threshold", "--store", _store(w), *EMB, "--questions", str(f)],
    "diagnose": lambda w, f: ["diagnose", "--store", _store(w), *EMB, "--questions", str(f), "--chunks", _chunks(w)],
    "compare-ann": lambda w, f: ["compare-ann", "--store", _store(w), *EMB, "--questions", str(f)],
}
ANSWER_COMMANDS: dict[str, Command] = {
    "check-answers": lambda w, f: ["check-answers", "--answers", str(f), "--chunks", _chunks(w)],
    "judge": lambda w, f: ["judge", "--answers", str(f), "--judge", "py:tests.judge_hook:fixture_judge"],
}
# fmt: on


#: whole-document trace exports (``.json``), read by every --answers reader
TRACE_FILES: list[tuple[str, bytes, bool]] = [
    ("t_empty", b"", False),
    ("t_garbage", bytes(range(256)) * 4, False),
    ("t_truncated", b'{"resourceSpans": [{"scopeSpans": [', False),
    ("t_huge_int", b'{"data": [{"id": 1' + b"9" * 5000 + b"}]}", False),
    ("t_deep", b"[" * 100_000 + b"]" * 100_000, False),
    ("t_scalar", b"42", False),
    ("t_nan", b'{"resourceSpans": NaN}', False),
    (
        "t_langsmith_bom",
        b'\xef\xbb\xbf[{"run_type": "chain", "id": "r", "inputs": {"question": "x"}, "outputs": {"answer": "y"}}]',
        True,
    ),
    ("t_otlp_no_spans", b'{"resourceSpans": []}', False),
    ("t_otlp_scalars", b'{"resourceSpans": [{"scopeSpans": [{"spans": [1, 2]}]}]}', False),
    (
        "t_langfuse_nan",
        b'{"data": [{"id": "t", "observations": NaN, "input": 5, "output": []}]}',
        False,
    ),
    ("t_langfuse_items", b'{"data": [{"id": "t", "observations": [1, "x", null]}]}', False),
    (
        "t_langsmith_shapes",
        b'[{"run_type": "chain", "id": 7, "inputs": 5, "outputs": NaN, "child_runs": 3}]',
        False,
    ),
    (
        "t_openinference_shapes",
        b'[{"context": {"span_id": 1, "trace_id": [2]}, "attributes": NaN, "name": {}}]',
        False,
    ),
]
# fmt: off
TRACE_COMMANDS: dict[str, Command] = {
    "check-answers": lambda w, f: ["check-answers", "--answers", str(f), "--chunks", _chunks(w)],
    "traces-refusals": lambda w, f: ["traces", "refusals", "--answers", str(f), "--chunks", _chunks(w), "--out", str(w / "out" / "q.jsonl")],
    "judge": lambda w, f: ["judge", "--answers", str(f), "--judge", "py:tests.judge_hook:fixture_judge", "--chunks", _chunks(w)],
}
# fmt: on
ROWS = {
    "chunks": CHUNK_FILES,
    "csv": CSV_FILES,
    "parquet": PARQUET_FILES,
    "questions": QUESTION_FILES,
    "answers": ANSWER_FILES,
    "traces": TRACE_FILES,
}
COMMANDS = {"questions": QUESTION_COMMANDS, "answers": ANSWER_COMMANDS, "traces": TRACE_COMMANDS}


def _cases() -> list[object]:
    cases = []
    for group, rows in ROWS.items():
        commands = COMMANDS.get(group, CHUNK_COMMANDS)
        for cmd in commands:
            for name, _, benign in rows:
                cases.append(pytest.param(group, cmd, name, benign, id=f"{cmd}-{name}"))
    return cases


def _run(args: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    for var in ("INDEXCHECK_DEBUG", "INDEXCHECK_TIMEOUT", "INDEXCHECK_MAX_WAIT"):
        monkeypatch.delenv(var, raising=False)
    r = CliRunner().invoke(cli, args)
    return r.exit_code, r.stdout, r.stderr


def test_a_byte_order_mark_is_read_not_refused(tmp_path: Path) -> None:
    from indexcheck.inputs.corpus import load_chunks

    (tmp_path / "c.csv").write_bytes(b"\xef\xbb\xbfid,text\r\nc0,Fact 0.\r\n")
    (tmp_path / "c.jsonl").write_bytes(b'\xef\xbb\xbf{"id": "c0", "text": "Fact 0."}\r\n')
    for name in ("c.csv", "c.jsonl"):
        c = load_chunks(tmp_path / name)
        assert (c.ids, c.texts) == (["c0"], ["Fact 0."])


def _assert_clean_end(code: int, out: str, err: str, benign: bool) -> None:
    assert "Traceback" not in out + err, err
    assert CATCH_ALL not in err, err  # the count of catch-all endings stays 0
    assert code != 3, err
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), err
    else:
        assert benign and code in (0, 1), (code, err)


@pytest.mark.parametrize(("group", "command", "name", "benign"), _cases())
def test_a_hostile_input_file_ends_in_one_clear_line(
    group: str,
    command: str,
    name: str,
    benign: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = _world(tmp_path)
    monkeypatch.chdir(w)
    (w / "data" / "answers.jsonl").write_text(
        json.dumps(
            {
                "id": "a",
                "question": "x",
                "answer": "Fact 1.",
                "contexts": [{"id": "c1", "text": TEXTS[1]}],
            }
        )
        + "\n"
    )
    rows = ROWS[group]
    suffix = {"csv": ".csv", "parquet": ".parquet", "traces": ".json"}.get(group, ".jsonl")
    path = {n: p for n, p, _ in _files(w, [r for r in rows if r[0] == name], suffix)}[name]
    commands = COMMANDS.get(group, CHUNK_COMMANDS)
    before = tree_digest(w / "data", dirs=True)
    code, out, err = _run(commands[command](w, path), monkeypatch)
    _assert_clean_end(code, out, err, benign)
    assert tree_digest(w / "data", dirs=True) == before  # no input file changed


def _parquet_store(w: Path, vectors: list[object]) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = len(vectors)
    table = pa.table({"id": IDS[:n], "text": TEXTS[:n], "vector": vectors})
    pq.write_table(table, w / "data" / "store.parquet")
    return f"parquet:{w / 'data' / 'store.parquet'}"


GOOD = [v.tolist() for v in HASH32.embed(TEXTS)]
STORES: list[tuple[str, list[object]]] = [
    ("nan_vector", [[float("nan")] * 32, *GOOD[1:]]),
    ("inf_vector", [[float("inf")] * 32, *GOOD[1:]]),
    ("wrong_length_row", [GOOD[0][:16], *GOOD[1:]]),
    ("wrong_dimension", [g[:16] for g in GOOD]),
    ("all_zero", [[0.0] * 32, *GOOD[1:]]),
    ("huge_values", [[1e38] * 32, *GOOD[1:]]),
]


@pytest.mark.parametrize(("name", "vectors"), STORES, ids=[s[0] for s in STORES])
@pytest.mark.parametrize("mode", ["sample", "all", "diff"])
def test_a_hostile_store_ends_in_one_clear_line_or_a_finding(
    name: str, vectors: list[object], mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = _world(tmp_path)
    monkeypatch.chdir(w)
    spec = _parquet_store(w, vectors)
    args = {
        "sample": ["check-index", "--store", spec, *EMB, "--sample", "12", "--chunks", _chunks(w)],
        "all": ["check-index", "--store", spec, *EMB, "--all", "--chunks", _chunks(w)],
        "diff": ["diff-index", "--old", _store(w), "--new", spec],
    }[mode]
    before = tree_digest(w / "data", dirs=True)
    code, out, err = _run(args, monkeypatch)
    _assert_clean_end(code, out, err, benign=True)
    assert tree_digest(w / "data", dirs=True) == before


def test_a_store_of_nan_vectors_is_never_a_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = _world(tmp_path)
    monkeypatch.chdir(w)
    spec = _parquet_store(w, [[float("nan")] * 32 for _ in GOOD])
    code, _, err = _run(
        ["check-index", "--store", spec, *EMB, "--all", "--chunks", _chunks(w)], monkeypatch
    )
    assert code in (1, 2), err
