"""The evidence sheet: append-only runs, revisions as new rows, diff, and the audit pack."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from tests.util import tree_digest

ROOT = Path(__file__).resolve().parents[4]
ANSWERS = ROOT / "fixtures" / "judge" / "answers.jsonl"
PY_JUDGE = "py:tests.judge_hook:fixture_judge"


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEXCHECK_QUIET", "1")


def judge_run(sheet: Path, answers: Path = ANSWERS, *extra: str) -> str:
    out = sheet.parent / "out.json"
    r = CliRunner().invoke(
        cli, ["judge", "--answers", str(answers), "--judge", PY_JUDGE, "--sheet", str(sheet),
              "--json", str(out), *extra])  # fmt: skip
    assert r.exit_code == 1, r.output
    return str(json.loads(out.read_text())["sheet"]["run_id"])


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_two_runs_append_without_touching_the_first(tmp_path: Path, fmt: str) -> None:
    sheet = tmp_path / "sheet"
    first = judge_run(sheet, ANSWERS, "--sheet-format", fmt, "--reviewer", "ana")
    before = tree_digest(sheet / "runs" / first, mtimes=True)
    second = judge_run(sheet, ANSWERS, "--sheet-format", fmt)
    assert second != first
    assert tree_digest(sheet / "runs" / first, mtimes=True) == before
    from indexcheck.commands.judge.sheet.sheet import read_run, runs

    assert runs(sheet) == sorted([first, second])
    info, cases, rows = read_run(sheet, first)
    assert info["judge_model"] == PY_JUDGE and info["format"] == fmt
    assert len(cases) == 7
    claims = [r for r in rows if r["claim_id"] is not None]
    assert len(claims) == 11 and len(rows) == 13  # + the refusal and the unjudged answer
    row = next(r for r in claims if r["row_id"] == f"{first}/j01/0")
    passage = next(p for p in cases[0]["passages"] if p["id"] == row["evidence_passage"])
    text = json.loads(ANSWERS.read_text().splitlines()[0])["contexts"][0]["text"]
    assert text[row["span_start"] : row["span_end"]] == row["span"]
    assert row["evidence_hash"] == passage["hash"] and len(passage["hash"]) == 32
    assert row["evidence_rank"] == 1 and row["evidence_version"] == "2026-11-01"
    assert row["checks"]["citation_status"] == "cited_supports" and row["reviewer"] == "ana"
    assert row["question"].startswith("I'm visiting") and row["indexcheck_version"]
    unjudged = next(r for r in rows if r["answer_id"] == "j07")
    assert unjudged["status"] == "UNJUDGED" and unjudged["raw_reply"].startswith("Sure!")


def test_hashes_only_keeps_no_texts(tmp_path: Path) -> None:
    sheet = tmp_path / "sheet"
    run_id = judge_run(sheet, ANSWERS, "--sheet-hashes-only")
    raw = "".join(p.read_text() for p in (sheet / "runs" / run_id).iterdir())
    assert "I'm visiting Harbor City" not in raw and "A visitor card is free and valid" in raw
    assert "question_hash" in raw


def test_revise_diff_and_export(tmp_path: Path) -> None:
    sheet = tmp_path / "sheet"
    a = judge_run(sheet)
    before = tree_digest(sheet / "runs", mtimes=True)
    runner = CliRunner()
    revise = ["sheet", "revise", "--sheet", str(sheet), f"{a}/j01/1", "--verdict", "unsupported"]
    r = runner.invoke(cli, [*revise, "--reviewer", "ana", "--note", "scope"])
    assert r.exit_code == 0, r.output
    assert "PARTIALLY_SUPPORTED -> UNSUPPORTED" in r.output
    assert tree_digest(sheet / "runs", mtimes=True) == before  # a revision is a new row
    from indexcheck.commands.judge.sheet.sheet import revisions

    (rev,) = revisions(sheet)
    assert rev["revises"] == f"{a}/j01/1" and rev["reviewer"] == "ana"
    r = runner.invoke(cli, ["sheet", "revise", "--sheet", str(sheet), f"{a}/j99/0",
                            "--verdict", "SUPPORTED", "--reviewer", "ana"])  # fmt: skip
    assert r.exit_code == 2 and "no claim row" in r.stderr

    # a second run with a changed passage and a changed question
    rows = [json.loads(x) for x in ANSWERS.read_text().splitlines()]
    rows[1]["contexts"][0]["text"] += " Updated."
    rows[2]["question"] = "Does a teen need a parent signature?"
    changed = tmp_path / "changed.jsonl"
    changed.write_text("".join(json.dumps(x) + "\n" for x in rows))
    b = judge_run(sheet, changed)
    out = tmp_path / "diff.json"
    r = runner.invoke(cli, ["sheet", "diff", "--sheet", str(sheet), a, b, "--json", str(out)])
    d = json.loads(out.read_text())
    by = {x["answer_id"]: x for x in d["answers"]}
    assert by["j02"]["changed"] == ["passage version"] and by["j03"]["changed"] == ["question"]
    assert by["j01"]["compatible"] and by["j01"]["claims"] == []
    assert r.exit_code == 0

    pack = tmp_path / "pack"
    r = runner.invoke(cli, ["sheet", "export", "--sheet", str(sheet), a, "--out", str(pack)])
    assert r.exit_code == 0, r.output
    manifest = json.loads((pack / "manifest.json").read_text())
    pack_files = ["run.json", "cases.jsonl", "retrieval.jsonl", "answers.jsonl", "claims.jsonl"]
    assert set(manifest["files"]) == {*pack_files, "revisions.jsonl"}
    for name, digest in manifest["files"].items():
        assert hashlib.sha256((pack / name).read_bytes()).hexdigest() == digest
    assert f"{a}/j01/1" in (pack / "revisions.jsonl").read_text()
    r = runner.invoke(cli, ["sheet", "export", "--sheet", str(sheet), a, "--out", str(pack)])
    assert r.exit_code == 2 and "not empty" in r.stderr
