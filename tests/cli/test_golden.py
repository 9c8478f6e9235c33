"""Golden tests: what a user sees from every command, on small fixed inputs.

Each case runs one command through the CLI (CliRunner, as a user's shell would) on inputs
built deterministically (the 120-chunk ``small_kb`` with the 32-d hash embedder, the judge
fixture with its scripted ``py:`` judge), and compares the exit code, the terminal output and
the ``--json`` result with ``tests/golden/<case>.json``. They exist so that a change of
layout (moving modules, splitting functions) provably changes nothing a user sees.

Normalised before comparing: temporary paths (``<TMP>``), floats (8 significant digits),
and the manifest's values (its keys are compared; its values are times, versions and
fingerprints), durations anywhere. The terminal output must be the same; a float in the
JSON must be within a millionth of the recorded one, or 1e-7 of it (:func:`_same`): BLAS
summation order differs between CPUs, and rounding to 8 digits cannot absorb it (a cosine
of 1.0 on one machine is 0.99999994 on another, one of 0.0033621676 is 0.003362149: a sum
of products of unit vectors is off by about 1e-8 whatever its size).

A deliberate change of output is recorded with ``INDEXCHECK_UPDATE_GOLDEN=1 pytest
tests/test_golden.py``; review the diff of ``tests/golden/`` like any other change.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
EMB = ["--embedder", "py:indexcheck.testing:HASH32"]
UPDATE = os.environ.get("INDEXCHECK_UPDATE_GOLDEN") == "1"

Args = Callable[[dict[str, Path], Path], list[str]]


def _ci_config(kb: dict[str, Path], tmp: Path) -> Path:
    cfg = tmp / "indexcheck.toml"
    cfg.write_text(
        f'[ci]\nstore = "faiss:{kb["buggy"]}"\nembedder = "py:indexcheck.testing:HASH32"\n'
        f'chunks = "{kb["chunks"]}"\nmin-questions = 5\n\n'
        "[ci.check-index]\nsample = 40\n\n"
        "[ci.probe-scale]\n\n"
        "[ci.compare-ann]\nqueries = 20\nk = 4\nfetch = [4, 10]\nat-fetch = 10\n\n"
        f'[ci.diagnose]\nquestions = "{kb["questions"]}"\nk = 4\nfetch = 10\n'
    )
    return cfg


CASES: dict[str, Args] = {
    "check_index_good_all": lambda kb, t: [
        "check-index",
        "--store",
        f"faiss:{kb['good']}",
        "--chunks",
        str(kb["chunks"]),
        *EMB,
        "--all",
    ],
    "check_index_buggy_all": lambda kb, t: [
        "check-index",
        "--store",
        f"faiss:{kb['buggy']}",
        "--chunks",
        str(kb["chunks"]),
        *EMB,
        "--all",
    ],
    "check_index_buggy_sample": lambda kb, t: [
        "check-index",
        "--store",
        f"faiss:{kb['buggy']}",
        "--chunks",
        str(kb["chunks"]),
        *EMB,
        "--sample",
        "40",
        "--seed",
        "3",
    ],
    "probe_scale": lambda kb, t: ["probe-scale", "--store", f"faiss:{kb['good']}"],
    "convert_threshold": lambda kb, t: [
        "convert-threshold",
        "0.8",
        "--from",
        "(1+cos)/2",
        "--to",
        "cos",
    ],
    "sweep_threshold": lambda kb, t: [
        "sweep-threshold",
        "--store",
        f"faiss:{kb['good']}",
        "--questions",
        str(kb["questions"]),
        *EMB,
        "-k",
        "4",
        "--fetch",
        "10",
    ],
    "compare_ann": lambda kb, t: [
        "compare-ann",
        "--store",
        f"faiss:{kb['good']}",
        "-k",
        "4",
        "--fetch",
        "4,10",
        "--queries",
        "20",
    ],
    "diagnose": lambda kb, t: [
        "diagnose",
        "--store",
        f"faiss:{kb['buggy']}",
        "--questions",
        str(kb["questions"]),
        "--chunks",
        str(kb["chunks"]),
        *EMB,
        "-k",
        "4",
        "--fetch",
        "10",
    ],
    "diff_index": lambda kb, t: [
        "diff-index",
        "--old",
        f"faiss:{kb['good']}",
        "--new",
        f"faiss:{kb['buggy']}",
        "--chunks-old",
        str(kb["chunks"]),
        "--chunks-new",
        str(kb["chunks"]),
    ],
    "judge": lambda kb, t: [
        "judge",
        "--answers",
        str(ROOT / "fixtures" / "judge" / "answers.jsonl"),
        "--judge",
        "py:tests.judge_hook:fixture_judge",
        "--allow-unjudged",
    ],
    "ci": lambda kb, t: ["ci", "--config", str(_ci_config(kb, t))],
}


#: keys whose values are durations or rates, which differ from run to run
_TIMED = re.compile(r"(seconds|_per_s|per_second|elapsed|wall)$")


def _normalise(value: Any, tmp: str, key: str = "") -> Any:
    if key == "manifest" and isinstance(value, dict):
        return {k: "<manifest>" for k in sorted(value)}
    if _TIMED.search(key) and isinstance(value, (int, float)):
        return "<time>"
    if isinstance(value, dict):
        return {k: _normalise(v, tmp, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalise(v, tmp) for v in value]
    if isinstance(value, float):
        return float(f"{value:.8g}")
    if isinstance(value, str):
        return _paths(value, tmp)
    return value


def _paths(text: str, tmp: str) -> str:
    text = text.replace(tmp, "<TMP>").replace(str(ROOT), "<ROOT>")
    # rich wraps long lines at a path's characters; times and rates vary run to run
    text = re.sub(r"\b\d+(\.\d+)? ?(s|ms)\b(?= |\)|,|$)", "<time>", text)
    return text


def _same(got: Any, want: Any) -> bool:
    """``got == want``, floats within a millionth of ``want`` or 1e-7 of it (so a recorded
    0.0 and 1e-6 still tell apart); keys, lengths, strings, integers, booleans and None
    exactly."""
    if isinstance(got, dict) and isinstance(want, dict):
        return got.keys() == want.keys() and all(_same(got[k], want[k]) for k in want)
    if isinstance(got, list) and isinstance(want, list):
        return len(got) == len(want) and all(_same(g, w) for g, w in zip(got, want, strict=True))
    if isinstance(got, float) and isinstance(want, float):
        return math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-7)
    return type(got) is type(want) and got == want


def test_floats_are_held_to_one_millionth() -> None:
    """The tolerance absorbs a last-digit difference and nothing more."""
    assert _same({"c": [1.0, 0.2407327]}, {"c": [0.99999994, 0.24073273]})
    assert not _same({"c": [1.0]}, {"c": [0.99999]})
    assert not _same({"atol": 1e-6}, {"atol": 0.0}) and not _same([1e-5], [1.09e-5])
    assert _same([0.003362149], [0.0033621676]) and not _same([5.68e-8], [1e-6])
    assert not _same({"c": 0.5}, {"c": 0.5, "d": 1})
    assert not _same([1], [1.0]) and not _same([True], [1]) and not _same(["a"], ["b"])


def _run(case: str, kb: dict[str, Path], tmp: Path) -> dict[str, Any]:
    out_json = tmp / f"{case}.json"
    args = [*CASES[case](kb, tmp), "--json", str(out_json)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False, terminal_width=100)
    payload = json.loads(out_json.read_text()) if out_json.exists() else None
    return _normalise(
        {"exit_code": result.exit_code, "stdout": result.stdout.splitlines(), "json": payload},
        str(tmp),
    )


#: the length of every case's folder: rich wraps a long line at a path's characters, so the
#: folder's length must not depend on where pytest puts its temporary folders (a run under
#: pytest-xdist adds ``popen-gw0/`` to them); the golden files were recorded at this length
TMP_LENGTH = 62


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    """The case's folder (and small_kb's, which asks for it), at a fixed path length."""
    root = Path(tempfile.mkdtemp(prefix="indexcheck-golden-", dir="/tmp"))
    folder = root / "case".ljust(TMP_LENGTH - len(str(root)) - 1, "_")
    assert len(str(folder)) == TMP_LENGTH, f"{root} is too long for the golden cases"
    folder.mkdir()
    try:
        yield folder
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def kb(small_kb: dict[str, Path], small_kb_questions: Path) -> dict[str, Path]:
    return {**small_kb, "questions": small_kb_questions}


@pytest.mark.parametrize("case", sorted(CASES))
def test_what_a_user_sees_is_unchanged(
    case: str, kb: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INDEXCHECK_QUIET", "1")
    monkeypatch.setenv("COLUMNS", "120")  # rich wraps at the terminal's width
    monkeypatch.chdir(tmp_path)
    got = _run(case, kb, tmp_path)
    path = GOLDEN / f"{case}.json"
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
        return
    assert path.exists(), f"no golden file {path.name}: run with INDEXCHECK_UPDATE_GOLDEN=1"
    want = json.loads(path.read_text())
    assert got["exit_code"] == want["exit_code"]
    assert got["stdout"] == want["stdout"]
    if not _same(got["json"], want["json"]):
        assert got["json"] == want["json"]  # pytest's diff of the two
        raise AssertionError(f"{case}: a JSON value changed type (int, float or bool)")
