"""Wrong exit class or message (issue 18 item 8): each case ends in its own one-line
InputError/DataFileError (exit 2), never a RecursionError or ValueError reaching the
catch-all (exit 3), never a dump of a stored vector, never a blocked read.

Same rules as tests/test_bad_input.py: exit code, exactly one ``error:`` line, no
traceback, never the catch-all, and every input and store file unchanged. (A full disk
under ``--cache`` needs a real full file system: tests/test_safety_outputs.py.)
"""

# ruff: noqa: E501  (the matrix reads best one row per line)
from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.errors import NestingTooDeepError, NotAFileError, VectorTypeError
from indexcheck.inputs.files import kind_of, loads_json, loads_toml
from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.testing import HASH32
from tests.cli.test_bad_input import EMB, World, _world
from tests.util import assert_one_error_line, tree_digest

Setup = Callable[[World], list[str]]
DEEP = 100_000
#: digits that would show up in stderr if a vector were dumped
MARK = "0.734251"


def _check(w: World, *args: str, store: str | None = None) -> list[str]:
    return ["check-index", "--store", store or w.good, *EMB, *args]


def _deep_ids(w: World) -> str:
    folder = w.data / "deep"
    write_faiss_folder(folder, ["a", "b", "c"], HASH32.embed(["a", "b", "c"]))
    (folder / "ids.json").write_text("[" * DEEP + "]" * DEEP)
    return f"faiss:{folder}"


def _deep_line(w: World, name: str = "c.jsonl") -> str:
    return w.raw(name, ('{"id": "a", "text": ' + "[" * DEEP + "]" * DEEP + "}\n").encode())


def _deep_toml(w: World, ci: bool = False) -> str:
    path = w.data / "deep.toml"
    head = f'[ci]\nstore = "{w.good}"\nx = ' if ci else "[check-index]\nsample = "
    path.write_text(head + "[" * DEEP + "]" * DEEP + "\n")
    return str(path)


def _vectors(w: World, name: str, column: list[object]) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = w.data / name
    pq.write_table(pa.table({"id": [f"v{i}" for i in range(len(column))], "vector": column}), path)
    return f"parquet:{path}"


def _jsonl_vectors(w: World, vector: object) -> str:
    rows = [{"id": "v0", "vector": [0.1, 0.2]}, {"id": "v1", "vector": vector}]
    path = w.raw("v.jsonl", "".join(json.dumps(r) + "\n" for r in rows).encode())
    return f"jsonl:{path}"


def _ci(w: World) -> str:
    from tests.output.test_files import _ci_config

    return _ci_config(w)


def _fifo(w: World, name: str = "fifo.toml") -> str:
    path = w.out / name  # not under data: hashing the user's files would read it
    os.mkfifo(path)
    return str(path)


def _export(w: World, out: Callable[[World, Path], str]) -> list[str]:
    from tests.output.test_files import _sheet

    sheet = _sheet(w)
    (run,) = [p.name for p in (sheet / "runs").iterdir()]
    return ["sheet", "export", "--sheet", str(sheet), run, "--out", out(w, sheet)]


def _dangling(w: World, sheet: Path) -> str:
    link = w.out / "pack"
    link.symlink_to(w.out / "nowhere")
    return str(link)


VEC = [float(MARK), 0.1, 0.2, 0.3]

# (row id, setup -> argv, exit code, what the one stderr line must say)
ROWS: list[tuple[str, Setup, int, str]] = [
    # -- nesting deeper than the parsers follow: exit 2 naming the file, not RecursionError ----
    ("deep_ids_json", lambda w: _check(w, store=_deep_ids(w)), 2, "ids.json nests JSON arrays or objects deeper than"),
    ("deep_chunk_line_sample", lambda w: _check(w, "--chunks", _deep_line(w)), 2, "c.jsonl line 1 nests JSON"),
    ("deep_chunk_line_all", lambda w: _check(w, "--all", "--chunks", _deep_line(w)), 2, "c.jsonl line 1 nests JSON"),
    ("deep_question_line", lambda w: ["sweep-threshold", "--store", w.good, *EMB, "--questions", _deep_line(w, "q.jsonl")], 2, "q.jsonl line 1 nests JSON"),
    ("deep_jsonl_store_line", lambda w: _check(w, store="jsonl:" + _deep_line(w, "v.jsonl")), 2, "nests JSON"),
    ("deep_answers_cell", lambda w: ["judge", "--answers", w.raw("a.csv", ('id,question,answer,contexts\na,q,x,"' + "[" * 5000 + "]" * 5000 + '"\n').encode()), "--judge", "py:tests.hostile_judges:counting"], 2, "a.csv line 2: 'contexts' nests JSON"),
    ("deep_baseline", lambda w: ["ci", "--config", _ci(w), "--baseline", w.raw("base.json", ("[" * DEEP + "]" * DEEP).encode())], 2, "baseline " ),
    ("baseline_dev_zero", lambda w: ["ci", "--config", _ci(w), "--baseline", "/dev/zero"], 2, "baseline /dev/zero is a character device"),
    ("deep_toml_config", lambda w: ["--config", _deep_toml(w), *_check(w)], 2, "deep.toml nests TOML arrays or tables deeper than"),
    ("deep_toml_ci", lambda w: ["ci", "--config", _deep_toml(w, ci=True)], 2, "deep.toml nests TOML"),
    # -- stored vectors that are not lists of numbers: exit 2, the vector never shown -----------
    ("parquet_vectors_strings", lambda w: _check(w, store=_vectors(w, "s.parquet", [",".join(map(str, VEC))] * 3)), 2, "holds string values, not lists of numbers"),
    ("parquet_vectors_bytes", lambda w: _check(w, store=_vectors(w, "b.parquet", [MARK.encode()] * 3)), 2, "holds binary values, not lists of numbers"),
    ("parquet_vectors_nested", lambda w: _check(w, store=_vectors(w, "n.parquet", [[VEC, VEC]] * 3)), 2, "holds nested lists"),
    ("parquet_vectors_list_of_strings", lambda w: _check(w, store=_vectors(w, "ls.parquet", [[str(x) for x in VEC]] * 3)), 2, "holds lists of string"),
    ("parquet_vectors_struct", lambda w: _check(w, store=_vectors(w, "st.parquet", [{"x": float(MARK)}] * 3)), 2, "not lists of numbers"),
    ("jsonl_vector_string", lambda w: _check(w, store=_jsonl_vectors(w, ",".join(map(str, VEC)))), 2, "v.jsonl line 2: 'vector' holds a string"),
    ("jsonl_vector_nested", lambda w: _check(w, store=_jsonl_vectors(w, [VEC, VEC])), 2, "holds a list containing list"),
    ("jsonl_vector_bool", lambda w: _check(w, store=_jsonl_vectors(w, [True, False])), 2, "holds a list containing a boolean"),
    # -- a config that is not a regular file: say what it is, never block on a FIFO ------------
    ("config_fifo", lambda w: ["--config", _fifo(w), *_check(w)], 2, "is a FIFO (named pipe), not a regular file"),
    ("config_dev_zero", lambda w: ["--config", "/dev/zero", *_check(w)], 2, "/dev/zero is a character device, not a regular file"),
    ("config_folder", lambda w: ["--config", str(w.data), *_check(w)], 2, "--config"),
    ("config_missing", lambda w: ["--config", str(w.data / "nope.toml"), *_check(w)], 2, "nope.toml does not exist"),
    ("ci_config_fifo", lambda w: ["ci", "--config", _fifo(w)], 2, "is a FIFO (named pipe)"),
    ("ci_config_dev_zero", lambda w: ["ci", "--config", "/dev/zero"], 2, "is a character device"),
    ("chunks_fifo_sample", lambda w: _check(w, "--chunks", _fifo(w, "c.jsonl")), 2, "c.jsonl is a FIFO (named pipe), not a regular file; check the --chunks path"),
    ("chunks_fifo_all", lambda w: _check(w, "--all", "--chunks", _fifo(w, "c.jsonl")), 2, "c.jsonl is a FIFO (named pipe), not a regular file; check the --chunks path"),
    ("chunks_folder", lambda w: _check(w, "--chunks", str(w.data)), 2, "is a folder, not a regular file; check the --chunks path"),
    # -- sheet export --out ------------------------------------------------------------------------
    ("export_out_dangling_symlink", lambda w: _export(w, _dangling), 2, "is a symlink to"),
    ("export_out_inside_sheet", lambda w: _export(w, lambda w, s: str(s / "pack")), 2, "lies inside the evidence sheet"),
    ("export_out_is_sheet", lambda w: _export(w, lambda w, s: str(s)), 2, "is the evidence sheet"),
]  # fmt: skip


def _run(
    tmp: Path, setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str, World, dict[str, object]]:
    for var in ("INDEXCHECK_DEBUG", "INDEXCHECK_CACHE", "INDEXCHECK_SHEET", "INDEXCHECK_JUDGE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp)
    monkeypatch.setenv("HOSTILE_JUDGE_LOG", str(tmp / "out" / "judge_calls.log"))
    w = _world(tmp)
    args = setup(w)
    before = tree_digest(w.data, dirs=True)
    r = CliRunner().invoke(cli, args)
    return r.exit_code, r.stdout, r.stderr, w, before


@pytest.mark.timeout(60)  # a FIFO read would block forever: fail instead
@pytest.mark.parametrize(
    ("setup", "code", "says"), [pytest.param(s, c, m, id=n) for n, s, c, m in ROWS]
)
def test_error_class_row(
    setup: Setup, code: int, says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exit_code, out, err, w, before = _run(tmp_path, setup, monkeypatch)
    assert_one_error_line(exit_code, out, err, code, says)
    assert "RecursionError" not in err and "ValueError" not in err
    assert MARK not in err and len(err) < 400  # never a dump of the vector
    assert tree_digest(w.data, dirs=True) == before


def test_the_helpers_raise_their_own_classes(tmp_path: Path) -> None:
    with pytest.raises(NestingTooDeepError, match="x.json nests JSON"):
        loads_json("[" * DEEP + "]" * DEEP, "x.json")
    with pytest.raises(NestingTooDeepError, match="x.toml nests TOML"):
        loads_toml("a = " + "[" * DEEP + "]" * DEEP, "x.toml")
    assert loads_json('{"a": [1]}', "x") == {"a": [1]}
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    assert kind_of(fifo) == "a FIFO (named pipe)"
    assert kind_of("/dev/zero") == "a character device"
    assert kind_of(tmp_path) == "a folder"
    assert kind_of(tmp_path / "nope") == "missing"
    (tmp_path / "f").write_text("x")
    assert kind_of(tmp_path / "f") is None
    assert issubclass(NotAFileError, Exception) and VectorTypeError.exit_code == 2


def test_numeric_vectors_still_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The type check refuses only non-numbers: float, int and ragged lists still open."""
    w = _world(tmp_path)
    monkeypatch.chdir(tmp_path)
    texts = ["alpha", "beta", "gamma"]
    vecs = HASH32.embed(texts)
    for name, column in (
        ("f.parquet", [list(map(float, v)) for v in vecs]),
        ("i.parquet", [[1] * 32, [0] * 31 + [1], [1, 0] * 16]),
        ("r.parquet", [list(map(float, vecs[0])), list(map(float, vecs[1][:16])), None]),
    ):
        r = CliRunner().invoke(
            cli,
            [
                "probe-scale",
                "--store",
                _vectors(w, name, column),
                "--json",
                "-",
                "--probes",
                "2",
                "--no-cache",
            ],
        )
        assert r.exit_code in (0, 1), (name, r.stderr)
