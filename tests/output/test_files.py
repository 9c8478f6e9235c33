"""Outputs never touch inputs, are written atomically, and never keep an earlier success
(issue 18, items 2 and 7, and ``--rows`` formats from item 8).

The matrix rows follow tests/test_bad_input.py: each runs the CLI in process and asserts
the exit code, exactly one ``error:`` line naming both paths, no traceback, never the
catch-all, and every input and store file unchanged (sha256 of each file under ``data``,
folders too, before and after). A full disk is a real 64 KiB tmpfs filled to the brim
(mounted as root; the tests that need it skip where ``mount`` is refused).
"""

# ruff: noqa: E501  (the matrix reads best one row per line)
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.output.files import replacing, write_atomic
from indexcheck.stores.faiss.ids_files import store_paths
from indexcheck.testing import HASH32
from tests.cli.test_bad_input import EMB, World, _world
from tests.util import CATCH_ALL, assert_one_error_line, tree_digest

Setup = Callable[[World], list[str]]


def _check(w: World, *args: str, store: str | None = None) -> list[str]:
    return [
        "check-index",
        "--store",
        store or w.good,
        *EMB,
        "--chunks",
        w.good_chunks,
        "--sample",
        "10",
        *args,
    ]


def _parquet_store(w: World) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = [f"Fact {i} about subject {i % 7}." for i in range(40)]
    vectors = HASH32.embed(texts)
    path = w.data / "vectors.parquet"
    pq.write_table(
        pa.table({"id": [f"c{i}" for i in range(40)], "vector": list(vectors), "text": texts}), path
    )
    return str(path)


def _link(w: World, name: str, target: Path) -> str:
    link = w.out / name
    link.symlink_to(target)
    return str(link)


def _hard_link(w: World, name: str, target: Path) -> str:
    link = w.out / name
    os.link(target, link)
    return str(link)


def _questions(w: World) -> str:
    path = w.data / "q.jsonl"
    path.write_text(
        json.dumps({"id": "q1", "question": "Fact 1 about subject 1.", "expected": ["c1"]}) + "\n"
    )
    return str(path)


def _folder(w: World, name: str, *files: str) -> Path:
    """A stand-in store folder (the guard runs before any store is opened)."""
    folder = w.data / name
    folder.mkdir(parents=True)
    for f in files:
        (folder / f).write_bytes(b"engine data")
    return folder


def _sheet(w: World) -> Path:
    from tests.cli.test_bad_input_commands import COUNTING, answer

    answers = w.data / "sheet_answers.jsonl"
    answers.write_text(json.dumps(answer("a1")) + "\n")
    sheet = w.data / "sheet"
    r = CliRunner().invoke(
        cli, ["judge", "--answers", str(answers), "--judge", COUNTING, "--sheet", str(sheet)]
    )
    assert r.exit_code == 0, r.output
    return sheet


def _export(w: World, out: str) -> list[str]:
    sheet = _sheet(w)
    (run,) = [p.name for p in (sheet / "runs").iterdir()]
    return ["sheet", "export", "--sheet", str(sheet), run, "--out", out]


def _ci_config(w: World, extra: str = "") -> str:
    path = w.data / "ci.toml"
    path.write_text(
        f'[ci]\nstore = "{w.good}"\nembedder = "py:indexcheck.testing:HASH32"\nchunks = "{w.good_chunks}"\n{extra}\n[ci.check-index]\nsample = 10\n'
    )
    return str(path)


# (row id, setup -> argv, exit code, what the one stderr line must say)
ROWS: list[tuple[str, Setup, int, str]] = [
    # -- the five cases of issue 18 item 2 -------------------------------------------------
    ("json_over_chunks", lambda w: _check(w, "--json", w.good_chunks), 2, "is the --chunks file"),
    ("json_into_faiss_ids", lambda w: _check(w, "--json", str(w.data / "good" / "ids.json")), 2, "lies inside the --store folder"),
    ("rows_over_parquet_store", lambda w: ["check-index", "--store", "parquet:" + (p := _parquet_store(w)), *EMB, "--all", "--rows", p], 2, "is the --store file"),
    ("report_into_index_folder", lambda w: _check(w, "--report", str(w.data / "good")), 2, "is the --store folder"),
    ("report_below_index_folder", lambda w: _check(w, "--report", str(w.data / "good" / "rep")), 2, "lies inside the --store folder"),
    ("json_through_symlink_to_chunks", lambda w: _check(w, "--json", _link(w, "r.json", w.data / "chunks.jsonl")), 2, "which resolves to"),
    ("json_through_symlink_into_index", lambda w: _check(w, "--json", _link(w, "r.json", w.data / "good" / "ids.json")), 2, "lies inside the --store folder"),
    ("report_through_symlinked_folder", lambda w: _check(w, "--report", _link(w, "rep", w.data / "good")), 2, "--report"),
    # -- every other input -----------------------------------------------------------------
    ("json_hard_link_to_chunks", lambda w: _check(w, "--json", _hard_link(w, "r.json", w.data / "chunks.jsonl")), 2, "is the --chunks file"),
    ("json_over_index_file", lambda w: _check(w, "--json", str(w.data / "good" / "index.faiss")), 2, "lies inside the --store folder"),
    ("json_over_questions", lambda w: ["sweep-threshold", "--store", w.good, *EMB, "--questions", (q := _questions(w)), "--json", q], 2, "is the --questions file"),
    ("report_over_questions", lambda w: ["diagnose", "--store", w.good, *EMB, "--questions", (q := _questions(w)), "--report", q], 2, "--report"),
    ("json_over_config", lambda w: ["--config", str(w.data / "indexcheck.toml"), *_check(w, "--json", str(w.data / "indexcheck.toml"))], 2, "is the config file"),
    ("json_over_default_config", lambda w: [*_check(w, "--json", "indexcheck.toml")], 2, "is the config file"),
    ("cache_over_chunks", lambda w: _check(w, "--cache", w.good_chunks), 2, "--cache"),
    ("cache_into_faiss_folder", lambda w: _check(w, "--cache", str(w.data / "good" / "cache.sqlite")), 2, "lies inside the --store folder"),
    ("cache_into_chroma_folder", lambda w: _check(w, "--cache", str(_folder(w, "chroma", "chroma.sqlite3") / "chroma.sqlite3"), store=f"chroma:{w.data / 'chroma'}?collection=c"), 2, "lies inside the --store folder"),
    ("json_into_qdrant_folder", lambda w: _check(w, "--json", str(_folder(w, "qdrant", "meta.json") / "meta.json"), store=f"qdrant:{w.data / 'qdrant'}?collection=c"), 2, "lies inside the --store folder"),
    ("json_into_lancedb_folder", lambda w: _check(w, "--json", str(_folder(w, "lance") / "r.json"), store=f"lancedb:{w.data / 'lance'}?table=t"), 2, "lies inside the --store folder"),
    ("report_into_milvus_lite", lambda w: _check(w, "--report", str(_folder(w, "m.db", "collections")), store=f"milvus:{w.data / 'm.db'}?collection=c"), 2, "--report"),
    ("json_into_llamaindex_dir", lambda w: _check(w, "--json", str(_folder(w, "storage", "docstore.json") / "docstore.json"), store=f"llamaindex:{w.data / 'storage'}"), 2, "lies inside the --store folder"),
    ("diff_json_into_old_index", lambda w: ["diff-index", "--old", w.good, "--new", w.good, "--json", str(w.data / "good" / "d.json")], 2, "lies inside the --old folder"),
    ("diff_workdir_into_new_index", lambda w: ["diff-index", "--old", w.good, "--new", w.good, "--workdir", str(w.data / "good")], 2, "--workdir"),
    ("judge_json_over_answers", lambda w: ["judge", "--answers", (a := str(w.data / "chunks.jsonl")), "--judge", "py:tests.hostile_judges:counting", "--json", a], 2, "is the --answers file"),
    ("judge_sheet_inside_index", lambda w: ["judge", "--answers", w.good_chunks, "--judge", "py:tests.hostile_judges:counting", "--store", w.good, "--sheet", str(w.data / "good" / "sheet")], 2, "--sheet"),
    ("embed_out_over_cache_path", lambda w: ["embed", "--chunks", w.good_chunks, *EMB, "--cache", str(w.out / "x.parquet"), "--out", str(w.out / "x.parquet")], 2, "are the same path"),
    ("embed_out_over_chunks", lambda w: ["embed", "--chunks", w.good_chunks, *EMB, "--out", w.good_chunks], 2, "is the --chunks file"),
    # -- outputs against outputs -------------------------------------------------------------
    ("json_and_rows_same_file", lambda w: ["check-index", "--store", w.good, *EMB, "--all", "--json", str(w.out / "r.jsonl"), "--rows", str(w.out / "r.jsonl")], 2, "are the same path"),
    ("json_inside_judge_sheet", lambda w: ["judge", "--answers", w.good_chunks, "--judge", "py:tests.hostile_judges:counting", "--sheet", str(w.out / "sheet"), "--json", str(w.out / "sheet" / "r.json")], 2, "which indexcheck writes alone"),
    # -- sheet export ----------------------------------------------------------------------------
    ("export_out_inside_sheet", lambda w: _export(w, str(w.data / "sheet" / "pack")), 2, "lies inside the evidence sheet"),
    ("export_out_is_sheet_runs", lambda w: _export(w, str(w.data / "sheet" / "runs")), 2, "lies inside the evidence sheet"),
    ("export_out_dangling_symlink", lambda w: _export(w, _link(w, "pack", w.out / "nowhere")), 2, "is a symlink to"),
    # -- ci: the paths of its [ci] table ---------------------------------------------------------
    ("ci_json_over_ci_chunks", lambda w: ["ci", "--config", _ci_config(w), "--json", w.good_chunks], 2, "is the [ci] chunks file"),
    ("ci_junit_over_config", lambda w: ["ci", "--config", (c := _ci_config(w)), "--junit", c], 2, "is the --config file"),
    ("ci_report_into_ci_store", lambda w: ["ci", "--config", _ci_config(w), "--report", str(w.data / "good" / "rep")], 2, "lies inside the [ci] store folder"),
    ("ci_cache_into_store", lambda w: ["ci", "--config", _ci_config(w, f'cache = "{w.data / "good" / "c.sqlite"}"')], 2, "[ci] cache"),
    # -- --rows picks its format from the suffix, or refuses -----------------------------------
    ("rows_unknown_suffix", lambda w: ["check-index", "--store", w.good, *EMB, "--all", "--rows", str(w.out / "rows.txt")], 2, "end the name in .parquet, .csv or .jsonl"),
    ("rows_no_suffix", lambda w: ["check-index", "--store", w.good, *EMB, "--all", "--rows", str(w.out / "rows")], 2, "has no extension"),
]  # fmt: skip


def _run(
    tmp: Path, setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str, World, dict[str, object]]:
    for var in ("INDEXCHECK_DEBUG", "INDEXCHECK_CACHE", "INDEXCHECK_SHEET", "INDEXCHECK_JUDGE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp)
    w = _world(tmp)
    (w.data / "indexcheck.toml").write_text("[check-index]\nseed = 1\n")
    os.symlink(w.data / "indexcheck.toml", tmp / "indexcheck.toml")  # the default config
    monkeypatch.setenv("HOSTILE_JUDGE_LOG", str(w.out / "judge_calls.log"))
    args = setup(w)
    (w.out / "judge_calls.log").unlink(missing_ok=True)  # calls made by the setup itself
    before = tree_digest(w.data, dirs=True)
    r = CliRunner().invoke(cli, args)
    return r.exit_code, r.stdout, r.stderr, w, before


@pytest.mark.parametrize(
    ("setup", "code", "says"), [pytest.param(s, c, m, id=n) for n, s, c, m in ROWS]
)
def test_output_over_input_row(
    setup: Setup, code: int, says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exit_code, out, err, w, before = _run(tmp_path, setup, monkeypatch)
    assert_one_error_line(exit_code, out, err, code, says)
    assert tree_digest(w.data, dirs=True) == before  # every input and store file unchanged
    assert not (w.out / "judge_calls.log").exists()  # refused before any work


def test_messages_name_both_paths_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err, w, _ = _run(
        tmp_path, lambda w: _check(w, "--json", str(w.data / "good" / "ids.json")), monkeypatch
    )
    assert code == 2
    assert str(w.data / "good" / "ids.json") in err and f"folder {w.data / 'good'}" in err
    assert "pass another --json path" in err


def test_store_paths_name_every_local_store() -> None:
    """Every built-in store names its files or folder; remote ones have none."""
    assert store_paths("faiss:./idx") == [(Path("idx"), "folder")]
    assert store_paths("langchain-faiss:idx?efSearch=4") == [(Path("idx"), "folder")]
    assert store_paths("parquet:v.parquet?metric=ip") == [(Path("v.parquet"), "file")]
    assert store_paths("jsonl:v.json") == [(Path("v.json"), "file")]
    assert store_paths("chroma:./db?collection=c") == [(Path("db"), "folder")]
    assert store_paths("qdrant:/q?collection=c") == [(Path("/q"), "folder")]
    assert store_paths("lancedb:/l?table=t") == [(Path("/l"), "folder")]
    assert store_paths("milvus:./m.db?collection=c") == [(Path("m.db"), "folder")]
    assert store_paths("llamaindex:./storage") == [(Path("storage"), "folder")]
    assert store_paths("parquet:~/x.parquet") == [(Path.home() / "x.parquet", "file")]
    for remote in (
        "chroma:http://localhost:8000?collection=c",
        "qdrant:https://q.example?collection=c",
        "milvus:http://localhost:19530?collection=c",
        "upstash:https://x.upstash.io",
        "pgvector:postgresql://u@127.0.0.1/db?table=t",
        "no-scheme-here",
    ):
        assert store_paths(remote) == [], remote


# -- atomic writes ----------------------------------------------------------------------------


def test_a_symlink_at_the_output_is_replaced_never_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = _world(tmp_path)
    monkeypatch.chdir(tmp_path)
    target = w.out / "elsewhere.txt"
    target.write_text("keep me\n")
    link = w.out / "r.json"
    link.symlink_to(target)
    r = CliRunner().invoke(cli, _check(w, "--json", str(link)))
    assert r.exit_code == 0, r.stderr
    assert not link.is_symlink() and json.loads(link.read_text())["ok"] is True
    assert target.read_text() == "keep me\n"


def test_devices_are_written_through_never_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--json /dev/null`` (and a symlink to it) must not replace the device: as root a
    rename over /dev/null would delete it for the whole machine."""
    w = _world(tmp_path)
    monkeypatch.chdir(tmp_path)
    link = w.out / "null.json"
    link.symlink_to("/dev/null")
    for path in ("/dev/null", str(link)):
        r = CliRunner().invoke(cli, _check(w, "--json", path))
        assert r.exit_code == 0, r.stderr
        assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert link.is_symlink()
    assert not [p for p in Path("/dev").glob(".null*")]


def test_a_link_to_a_redirected_stdout_is_written_through_never_replaced(
    tmp_path: Path,
) -> None:
    """``--json /dev/stdout`` with stdout redirected to a file: /dev/stdout is a link to
    /proc/self/fd/1, which is a link to that *regular file*, so the target's type says
    "file" and a rename would replace the machine's /dev/stdout link (seen as root). The
    same chain through a link of our own, so that a regression breaks only the test."""
    w = _world(tmp_path)
    fake = tmp_path / "fakedev"
    fake.mkdir()
    link = fake / "stdout"
    link.symlink_to("/proc/self/fd/1")
    out = tmp_path / "redirected.txt"
    cmd = [sys.executable, "-c", "from indexcheck.cli import main; main()"]
    with out.open("w") as stdout:
        done = subprocess.run(
            [*cmd, *_check(w, "--json", str(link))],
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
            env={**os.environ, "INDEXCHECK_QUIET": "1"},
        )
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"
    assert sorted(p.name for p in fake.iterdir()) == ["stdout"]  # no temporary file
    text = out.read_text()
    assert '"ok"' in text and '"targets_dropped": 0' in text  # the JSON reached stdout
    # stdout is the JSON alone, as with --json -: the summary goes to stderr (it used to be
    # written over the start of the JSON through the second file position on the same file)
    assert json.loads(text)["ok"] is True
    assert "PASS" in done.stderr


def test_a_failed_write_leaves_the_old_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"ok": true}\n')
    with pytest.raises(OSError), replacing(path) as tmp:
        tmp.write_text('{"ok": fal')
        raise OSError(28, "No space left on device")
    assert path.read_text() == '{"ok": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left
    write_atomic(path, "new\n")
    assert path.read_text() == "new\n"
    assert oct(path.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    path.chmod(0o600)  # a private result stays private when rewritten
    write_atomic(path, "newer\n")
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_every_writer_goes_through_the_atomic_helper() -> None:
    """No writer of a user-visible output writes its file in place (grep the sources)."""
    root = Path(__file__).resolve().parents[2] / "indexcheck"
    writers = [
        root / "output" / "present.py",
        root / "cli" / "ci.py",
        root / "cli" / "embed.py",
        root / "output" / "render" / "markdown.py",
        root / "output" / "render" / "html.py",
        root / "output" / "render" / "judge.py",
        root / "output" / "render" / "plots.py",
        root / "output" / "render" / "figures.py",
        root / "commands" / "check_index" / "stream" / "scratch.py",
    ]
    for path in writers:
        text = path.read_text()
        for in_place in (
            ".write_text(",
            ".write_bytes(",
            "savefig(path",
            "ParquetWriter(str(path)",
        ):
            assert in_place not in text, (path.name, in_place)


# -- --rows formats ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["rows.parquet", "rows.csv", "rows.jsonl", "ROWS.CSV"])
def test_rows_are_written_in_the_format_their_name_says(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pandas as pd

    w = _world(tmp_path)
    monkeypatch.chdir(tmp_path)
    path = w.out / name
    r = CliRunner().invoke(
        cli,
        [
            "check-index",
            "--store",
            w.good,
            *EMB,
            "--all",
            "--chunks",
            w.good_chunks,
            "--rows",
            str(path),
        ],
    )
    assert r.exit_code == 0, r.stderr
    raw = path.read_bytes()
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        assert raw[:4] == b"PAR1"
        rows = pd.read_parquet(path)
    elif suffix == ".csv":
        assert raw.startswith(b'"id","position","cosine","status"')
        rows = pd.read_csv(path)
    else:
        rows = pd.DataFrame([json.loads(line) for line in raw.decode().splitlines()])
    assert list(rows["id"]) == [f"c{i}" for i in range(40)]
    assert set(rows["status"]) == {"ok"}
    assert [p.name for p in w.out.iterdir()] == [name]  # no temporary file left


# -- a failed run never leaves an earlier success behind ----------------------------------------


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs, filled: every write to it fails with ENOSPC (as root only)."""
    mnt = tmp_path / "full"
    mnt.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.decode().strip()})")
    try:
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError:
            pass
        finally:
            os.close(fd)
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _earlier_success(w: World, *outputs: str) -> None:
    r = CliRunner().invoke(cli, _check(w, *outputs))
    assert r.exit_code == 0, r.stderr


def test_disk_full_under_report_replaces_the_stale_json(
    tmp_path: Path, full_disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 18 item 7: the earlier run's ok: true must not survive a failed run."""
    w = _world(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = w.out / "result.json"
    _earlier_success(w, "--json", str(result))
    assert json.loads(result.read_text())["ok"] is True
    before = tree_digest(w.data, dirs=True)
    r = CliRunner().invoke(
        cli, _check(w, "--json", str(result), "--report", str(full_disk / "rep"))
    )
    assert r.exit_code == 3, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "No space left on device" in r.stderr
    failed = json.loads(result.read_text())
    assert failed["ok"] is False and failed["complete"] is False
    assert failed["exit_code"] == 3 and "could not write the --report folder" in failed["error"]
    assert tree_digest(w.data, dirs=True) == before


def test_disk_full_under_json_removes_the_stale_json(
    tmp_path: Path, full_disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When even the failed result cannot be written, the old file goes: no stale ok."""
    w = _world(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = full_disk / "result.json"
    os.remove(full_disk / "filler")
    _earlier_success(w, "--json", str(result))
    fd = os.open(full_disk / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    r = CliRunner().invoke(cli, _check(w, "--json", str(result)))
    assert r.exit_code == 3, r.stderr
    assert "could not write --json" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not result.exists()
    assert sorted(p.name for p in full_disk.iterdir()) == ["filler"]  # no temporary file


def test_disk_full_under_cache_says_so(
    tmp_path: Path, full_disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 8: not 'is not an indexcheck embedding cache ... delete this file'."""
    w = _world(tmp_path)
    monkeypatch.chdir(tmp_path)
    before = tree_digest(w.data, dirs=True)
    r = CliRunner().invoke(cli, _check(w, "--cache", str(full_disk / "cache.sqlite")))
    assert r.exit_code == 3, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "the disk is full" in lines[0], r.stderr
    assert "not an indexcheck embedding cache" not in r.stderr and "delete" not in r.stderr
    assert CATCH_ALL not in r.stderr and "Traceback" not in r.stderr
    assert tree_digest(w.data, dirs=True) == before


def test_any_failure_replaces_json_junit_report_and_removes_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exit 3 from an embedder that returns NaN, after a passing run wrote every output."""
    w = _world(tmp_path)
    monkeypatch.chdir(tmp_path)
    result, report, rows = w.out / "r.json", w.out / "rep", w.out / "rows.parquet"
    args = [
        "check-index",
        "--store",
        w.good,
        "--chunks",
        w.good_chunks,
        "--all",
        "--json",
        str(result),
        "--report",
        str(report),
        "--rows",
        str(rows),
    ]
    r = CliRunner().invoke(cli, [*args, *EMB])
    assert r.exit_code == 0, r.stderr
    assert "PASS" in (report / "check-index.md").read_text() and rows.exists()
    assert "Verdict: PASS" in (report / "check-index.html").read_text()
    r = CliRunner().invoke(cli, [*args, "--embedder", "py:tests.hostile_hooks:nan_vectors"])
    assert r.exit_code == 3, r.stderr
    failed = json.loads(result.read_text())
    assert (failed["ok"], failed["complete"], failed["command"]) == (False, False, "check-index")
    assert "NaN" in failed["error"]
    for name in ("check-index.md", "check-index.html"):  # both pages, not only the Markdown
        page = (report / name).read_text()
        assert "could not finish (exit 3)" in page and "PASS" not in page, name
    assert not rows.exists()
    (report / "report.md").write_text("another command's page\n")
    r = CliRunner().invoke(cli, [*args, "--embedder", "py:tests.hostile_hooks:nan_vectors"])
    assert r.exit_code == 3
    assert (report / "report.md").read_text() == "another command's page\n"  # not its page


def test_a_failed_ci_run_leaves_a_failing_junit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = _world(tmp_path)
    monkeypatch.chdir(tmp_path)
    junit, result, report = w.out / "junit.xml", w.out / "ci.json", w.out / "rep"
    config = _ci_config(w)
    args = ["ci", "--config", config, "--junit", str(junit), "--json", str(result)]
    r = CliRunner().invoke(cli, [*args, "--report", str(report)])
    assert r.exit_code == 0, r.stderr
    assert ET.parse(junit).getroot().get("failures") == "0"
    assert "PASS" in (report / "report.html").read_text()
    Path(config).write_text(
        Path(config)
        .read_text()
        .replace("py:indexcheck.testing:HASH32", "py:tests.hostile_hooks:nan_vectors")
    )
    r = CliRunner().invoke(cli, [*args, "--report", str(report)])
    assert r.exit_code == 3, r.stderr
    root = ET.parse(junit).getroot()
    assert root.get("errors") == "1"
    (error,) = root.iter("error")
    assert "NaN" in (error.get("message") or "")
    assert json.loads(result.read_text())["ok"] is False
    html = (report / "report.html").read_text()
    assert "could not finish (exit 3)" in html and "NaN" in html and "PASS" not in html


def test_a_refused_output_is_never_touched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The failure handling never writes to an output the guard refused (it is an input)."""
    w = _world(tmp_path)
    monkeypatch.chdir(tmp_path)
    before = w.data.joinpath("chunks.jsonl").read_bytes()
    r = CliRunner().invoke(cli, _check(w, "--json", w.good_chunks, "--report", str(w.out / "rep")))
    assert r.exit_code == 2
    assert w.data.joinpath("chunks.jsonl").read_bytes() == before


def test_exit_2_after_the_guard_replaces_a_stale_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bad input found after the guard (a null text) also leaves the failed result."""
    w = _world(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = w.out / "r.json"
    _earlier_success(w, "--json", str(result))
    bad = w.chunks("bad.jsonl", [{"id": "a", "text": None}])
    r = CliRunner().invoke(
        cli, ["check-index", "--store", w.good, *EMB, "--chunks", bad, "--json", str(result)]
    )
    assert r.exit_code == 2
    failed = json.loads(result.read_text())
    assert failed["ok"] is False and failed["exit_code"] == 2 and "no text" in failed["error"]


def test_clean_runs_still_write_every_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outputs beside the inputs (same folder, other names) are fine; embed writes both."""
    w = _world(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(
        cli, _check(w, "--json", str(w.data / "result.json"), "--report", str(w.data / "rep"))
    )
    assert r.exit_code == 0, r.stderr
    r = CliRunner().invoke(
        cli,
        [
            "embed",
            "--chunks",
            w.good_chunks,
            *EMB,
            "--out",
            str(w.out / "v.parquet"),
            "--faiss",
            str(w.out / "new"),
        ],
    )
    assert r.exit_code == 0, r.stderr
    assert sorted(p.name for p in (w.out / "new").iterdir()) == ["ids.json", "index.faiss"]
    assert sorted(p.name for p in w.out.iterdir()) == ["new", "v.parquet"]  # no staging left
    r = CliRunner().invoke(
        cli,
        [
            "check-index",
            "--store",
            f"faiss:{w.out / 'new'}",
            *EMB,
            "--chunks",
            w.good_chunks,
            "--all",
        ],
    )
    assert r.exit_code == 0, r.stderr


def test_disk_full_simulated_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same as the tmpfs tests where mount is refused (not root): the report writer
    raises ENOSPC in process. The stale ok: true still goes, the message says why."""
    import errno

    import indexcheck.output.render.html as pages

    w = _world(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = w.out / "r.json"
    _earlier_success(w, "--json", str(result))

    def full(path: object, data: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pages, "write_atomic", full)
    r = CliRunner().invoke(cli, _check(w, "--json", str(result), "--report", str(w.out / "rep")))
    assert r.exit_code == 3, r.stderr
    assert "the disk is full" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    failed = json.loads(result.read_text())
    assert (failed["ok"], failed["complete"], failed["exit_code"]) == (False, False, 3)
