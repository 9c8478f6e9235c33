"""diagnose --answers: past retrieval, a planted context-assembly loss, a planted generation
refusal and (with --judge) a planted ungrounded answer each get their label."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from indexcheck.cli.app import cli

ROOT = Path(__file__).resolve().parents[3]


def diagnose(fixture_kb: dict[str, Any], tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "d.json"
    r = CliRunner().invoke(
        cli,
        ["diagnose", "--store", f"faiss:{fixture_kb['faiss']}",
         "--questions", str(ROOT / "fixtures" / "questions.jsonl"),
         "--chunks", str(ROOT / "fixtures" / "chunks.jsonl"), "--json", str(out), *extra],
    )  # fmt: skip
    assert r.exit_code in (0, 1), r.output + r.stderr
    return r.exit_code, json.loads(out.read_text())


def test_answers_label_the_stage_after_retrieval(
    fixture_kb: dict[str, Any], tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("INDEXCHECK_QUIET", "1")
    _, before = diagnose(fixture_kb, tmp_path)
    ok = [q for q in before["questions"] if q["label"] == "OK"]
    assert len(ok) >= 4
    texts = {
        c: t for c, t in zip(fixture_kb["corpus"].ids, fixture_kb["corpus"].texts, strict=True)
    }
    filler = [c for c in texts if "visitor" not in c][:2]
    lost, refused, ungrounded, fine = ok[:4]
    qtext = {q.id: q.question for q in fixture_kb["questions"]}

    def row(q: dict[str, Any], answer: str, with_expected: bool) -> dict[str, Any]:
        ids = ([q["expected_id"]] if with_expected else []) + filler
        return {"id": q["id"], "question": qtext[q["id"]], "answer": answer,
                "contexts": [{"id": c, "text": texts[c]} for c in ids]}  # fmt: skip

    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(x) + "\n" for x in [
        row(lost, "Here is what the library says.", with_expected=False),  # cut from the context
        row(refused, "I don't know: the sources do not say.", with_expected=True),
        row(ungrounded, "Members get free drinks at every branch.", with_expected=True),
        row(fine, "Here is what the library says.", with_expected=True),
    ]))  # fmt: skip
    code, after = diagnose(fixture_kb, tmp_path, "--answers", str(answers))
    labels = {q["id"]: q["label"] for q in after["questions"]}
    assert labels[lost["id"]] == "CONTEXT_ASSEMBLY_LOSS"
    assert labels[refused["id"]] == "GENERATION_REFUSED"
    assert labels[ungrounded["id"]] == "OK"  # no judge: nothing says it is ungrounded
    assert code == 1 and not after["ok"]
    assert after["counts"]["CONTEXT_ASSEMBLY_LOSS"] == 1
    assert after["counts"]["GENERATION_REFUSED"] == 1
    # every other question keeps its retrieval label: one label per question
    for q in before["questions"]:
        if q["id"] not in (lost["id"], refused["id"]):
            assert labels[q["id"]] == q["label"]

    _, judged = diagnose(
        fixture_kb, tmp_path, "--answers", str(answers),
        "--judge", "py:tests.judge_hook:context_judge",
    )  # fmt: skip
    labels = {q["id"]: q["label"] for q in judged["questions"]}
    assert labels[ungrounded["id"]] == "UNGROUNDED"
    assert labels[fine["id"]] == "OK"
    assert labels[lost["id"]] == "CONTEXT_ASSEMBLY_LOSS"  # the first stage that lost it
    assert judged["manifest"]["judging"]["requests"] == 4
