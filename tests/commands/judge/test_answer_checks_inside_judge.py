"""The no-model answer checks inside ``judge --chunks`` and ``diagnose --answers``: a planted
reference and percentage absent from the knowledge base are flagged in the JSON and on the
terminal; the same strings in the knowledge base are not; without --chunks judge says it
looked in the context only. A flag never changes either command's exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from indexcheck.cli.app import cli

ROOT = Path(__file__).resolve().parents[3]
FIXTURE_ANSWERS = ROOT / "fixtures" / "judge" / "answers.jsonl"
FIXTURE_CHUNKS = ROOT / "fixtures" / "chunks.jsonl"
#: completed from general knowledge: neither the context nor the fixture KB holds these
PLANTED_TEXT = "About 35% of visitors renew, as Harper 1998 found."
PLANTED_FLAGS = {"35%": "percentage", "Harper 1998": "author_year"}
HOLDING = "Harper (1998) found that 35% of visitors renew their card."


def planted_row(aid: str = "planted") -> dict[str, Any]:
    return {"id": aid, "question": "Do visitors renew their card?", "answer": PLANTED_TEXT,
            "contexts": [{"id": "accounts-and-fees#visitor-cards",
                          "text": "Visitor cards are free and valid for 3 months."}]}  # fmt: skip


def answers_file(tmp_path: Path) -> Path:
    path = tmp_path / "answers.jsonl"
    lines = FIXTURE_ANSWERS.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([*lines, json.dumps(planted_row())]) + "\n", encoding="utf-8")
    return path


def kb_holding(tmp_path: Path) -> Path:
    path = tmp_path / "kb.jsonl"
    extra = json.dumps({"id": "renewals", "text": HOLDING})
    path.write_text(FIXTURE_CHUNKS.read_text(encoding="utf-8") + extra + "\n", encoding="utf-8")
    return path


def judge(tmp_path: Path, *extra: str) -> tuple[Any, dict[str, Any]]:
    out = tmp_path / "judge.json"
    args = ["judge", "--answers", str(answers_file(tmp_path)),
            "--judge", "py:tests.judge_hook:fixture_judge", "--allow-unjudged",
            "--json", str(out), *extra]  # fmt: skip
    r = CliRunner().invoke(cli, args, terminal_width=200)
    assert r.exit_code in (0, 1), r.output
    return r, json.loads(out.read_text())


def flags_of(block: dict[str, Any], aid: str) -> dict[str, str]:
    got = next(a for a in block["answers"] if a["id"] == aid)
    return {f["text"]: f["kind"] for f in got["flags"]}


def test_judge_flags_a_reference_and_percentage_absent_from_the_kb(tmp_path: Path) -> None:
    r, data = judge(tmp_path, "--chunks", str(FIXTURE_CHUNKS))
    block = data["answer_checks"]
    assert block["looked_in"] == ["context", "knowledge_base"]
    assert flags_of(block, "planted") == PLANTED_FLAGS
    flag = next(a for a in block["answers"] if a["id"] == "planted")["flags"][0]
    assert flag["looked_in"] == ["context", "knowledge_base"]
    assert block["answers_checked"] == 8 and block["chunks"] == 160
    assert block["rates"]["percentage"]["phrase"].endswith("absent from the knowledge base")
    n = block["answers_flagged"]
    assert (
        f"answer checks: {n} of 8 answers hold a URL, reference or number absent from the "
        "context and the knowledge base" in r.output
    )
    # the checks add a block and a line; they change neither the verdicts nor the exit code
    r0, without = judge(tmp_path)
    assert r.exit_code == r0.exit_code and data["ok"] == without["ok"]
    assert data["counts"] == without["counts"]


def test_judge_does_not_flag_what_the_kb_holds(tmp_path: Path) -> None:
    _, data = judge(tmp_path, "--chunks", str(kb_holding(tmp_path)))
    block = data["answer_checks"]
    assert flags_of(block, "planted") == {}
    row = next(a for a in block["answers"] if a["id"] == "planted")
    assert row["in_knowledge_base_only"] == 2


def test_judge_without_chunks_says_it_looked_in_the_context_only(tmp_path: Path) -> None:
    r, data = judge(tmp_path)
    block = data["answer_checks"]
    assert block["looked_in"] == ["context"] and block["chunks"] is None
    assert flags_of(block, "planted") == PLANTED_FLAGS
    flag = next(a for a in block["answers"] if a["id"] == "planted")["flags"][0]
    assert flag["looked_in"] == ["context"]
    assert block["rates"]["percentage"]["phrase"].endswith("absent from the context")
    assert "absent from the context (no --chunks: the knowledge base was not searched)" in (
        " ".join(r.output.split())
    )


def _diagnose(fixture_kb: dict[str, Any], tmp_path: Path, chunks: Path, *extra: str) -> Any:
    out = tmp_path / "d.json"
    r = CliRunner().invoke(
        cli,
        ["diagnose", "--store", f"faiss:{fixture_kb['faiss']}",
         "--questions", str(ROOT / "fixtures" / "questions.jsonl"),
         "--chunks", str(chunks), "--json", str(out), *extra],
        terminal_width=200,
    )  # fmt: skip
    assert r.exit_code in (0, 1), r.output + r.stderr
    return r, json.loads(out.read_text())


def test_diagnose_answers_carries_the_same_block(
    fixture_kb: dict[str, Any], tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("INDEXCHECK_QUIET", "1")
    q = fixture_kb["questions"][0]
    row = {**planted_row(q.id), "question": q.question}
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps(row) + "\n", encoding="utf-8")
    _, before = _diagnose(fixture_kb, tmp_path, FIXTURE_CHUNKS)
    assert "answer_checks" not in before  # no --answers: nothing to check, nothing said
    r, data = _diagnose(fixture_kb, tmp_path, FIXTURE_CHUNKS, "--answers", str(answers))
    block = data["answer_checks"]
    assert block["looked_in"] == ["context", "knowledge_base"]
    assert flags_of(block, q.id) == PLANTED_FLAGS
    assert (
        "answer checks: 1 of 1 answers hold a URL, reference or number absent from the "
        "context and the knowledge base" in " ".join(r.output.split())
    )
    _, held = _diagnose(fixture_kb, tmp_path, kb_holding(tmp_path), "--answers", str(answers))
    assert flags_of(held["answer_checks"], q.id) == {}
    assert held["ok"] == data["ok"]  # a flag is no diagnose failure
