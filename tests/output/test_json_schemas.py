"""Every ``--json`` result validates against its shipped JSON Schema, and the schemas
cannot drift from the results: they are generated from the result dataclasses, and a key
no schema describes is refused."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from indexcheck.cli.app import cli
from indexcheck.commands.check_index.result import CheckIndexResult
from indexcheck.commands.schemas import SHAPES, all_schemas
from indexcheck.output.schema import SCHEMA_VERSION
from indexcheck.output.schemas import KINDS, kind_for, load, schema_for, schema_of
from tests.cli.test_golden import CASES, EMB, ROOT
from tests.emulators import generator_script as gs

GEN = "py:tests.emulators.generator_script:py_generator"
SCHEMAS = ROOT / "indexcheck" / "output" / "schemas"


def validate(payload: dict[str, Any]) -> None:
    schema = schema_for(payload)
    Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER).validate(
        payload
    )


def test_the_committed_schemas_are_the_generated_ones() -> None:
    """A result that gains, loses or retypes a field changes its generated schema: the
    committed file then differs (re-run scripts/write_schemas.py and review the diff)."""
    from scripts.write_schemas import render

    built = all_schemas()
    assert sorted(built) == sorted(KINDS)
    assert sorted(p.name for p in SCHEMAS.glob("*.schema.json")) == sorted(
        f"{k}.schema.json" for k in KINDS
    )
    for kind, schema in built.items():
        committed = (SCHEMAS / f"{kind}.schema.json").read_text(encoding="utf-8")
        assert committed == render(schema), f"{kind}: run scripts/write_schemas.py"


def test_a_new_result_field_changes_the_schema() -> None:
    grown = dataclasses.make_dataclass(
        "CheckIndexResult", [("new_figure", int, dataclasses.field(default=0))],
        bases=(CheckIndexResult,),
    )  # fmt: skip
    grown.__module__ = CheckIndexResult.__module__
    schema = schema_of("check-index", grown, SHAPES, title="indexcheck check-index result")
    assert "new_figure" in schema["properties"] and "new_figure" in schema["required"]
    assert schema["properties"].keys() - load("check-index")["properties"].keys() == {"new_figure"}


@pytest.mark.parametrize("kind", KINDS)
def test_every_schema_is_a_valid_schema_naming_its_version(kind: str) -> None:
    schema = load(kind)
    Draft202012Validator.check_schema(schema)
    assert schema["$id"] == f"urn:indexcheck:schema:{kind}:{SCHEMA_VERSION}"
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def _run(args: list[str], out: Path) -> dict[str, Any]:
    CliRunner().invoke(cli, [*args, "--json", str(out)], catch_exceptions=False)
    assert out.exists(), f"{args[0]} wrote no --json"
    data: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return data


def _more_cases(kb: dict[str, Path], tmp: Path) -> dict[str, list[str]]:
    """Outputs the golden cases do not cover: a --report list, embed, check-answers and a
    run refused before any work (the failure result)."""
    answers = tmp / "answers.jsonl"
    row = {
        "id": "a1",
        "question": "What is fact 3?",
        "answer": "Fact number 3 is in section 3, see https://example.org/x and 42%.",
        "contexts": [{"id": "c", "text": "Section 3. Fact number 3 about subject 3."}],
    }
    refused = {**row, "id": "a2", "answer": "I don't know, the documents do not say."}
    answers.write_text(json.dumps(row) + "\n" + json.dumps(refused) + "\n", encoding="utf-8")
    gs.SCRIPT = gs.fixture_script()
    return {
        "check_index_report": [
            "check-index", "--store", f"faiss:{kb['good']}", "--chunks", str(kb["chunks"]),
            *EMB, "--sample", "20", "--report", str(tmp / "report"),
        ],
        "embed": [
            "embed", "--chunks", str(kb["chunks"]), *EMB, "--faiss", str(tmp / "embedded"),
        ],
        "check_answers": [
            "check-answers", "--answers", str(answers), "--chunks", str(kb["chunks"]),
        ],
        "questions_generate": [
            "questions", "generate", "--chunks", str(ROOT / "fixtures" / "chunks.jsonl"),
            "--n", "4", "--oos", "2", "--seed", "0", "--generator", GEN, *EMB,
            "--out", str(tmp / "generated.jsonl"),
        ],
        "traces_refusals": [
            "traces", "refusals", "--answers", str(answers), "--chunks", str(kb["chunks"]),
        ],
        "repair": [
            "repair", "--store", f"faiss:{kb['buggy']}", "--chunks", str(kb["chunks"]), *EMB,
            "--out", str(tmp / "repaired"),
        ],
        "refused": [
            "check-index", "--store", f"faiss:{tmp / 'absent'}", "--chunks", str(kb["chunks"]),
        ],
    }  # fmt: skip


def _sheet_outputs(tmp: Path) -> dict[str, dict[str, Any]]:
    """sheet verify and sheet diff on a sheet of two judge runs, the second with one
    question changed (so the diff holds a comparable answer and one that is not)."""
    answers = ROOT / "fixtures" / "judge" / "answers.jsonl"
    rows = [json.loads(x) for x in answers.read_text(encoding="utf-8").splitlines()]
    rows[2]["question"] = "Does a teen need a parent signature?"
    changed = tmp / "changed-answers.jsonl"
    changed.write_text("".join(json.dumps(x) + "\n" for x in rows), encoding="utf-8")
    sheet = tmp / "sheet"
    run_ids = []
    for n, source in enumerate((answers, changed)):
        judged = _run(
            ["judge", "--answers", str(source), "--judge", "py:tests.judge_hook:fixture_judge",
             "--allow-unjudged", "--sheet", str(sheet)],
            tmp / f"sheet-judge-{n}.json",
        )  # fmt: skip
        run_ids.append(judged["sheet"]["run_id"])
    return {
        "sheet_verify": _run(["sheet", "verify", "--sheet", str(sheet)], tmp / "verify.json"),
        "sheet_diff": _run(["sheet", "diff", "--sheet", str(sheet), *run_ids], tmp / "diff.json"),
    }


EXPECTED_KIND = {
    "check_index_good_all": "check-index",
    "check_index_buggy_all": "check-index",
    "check_index_buggy_sample": "check-index",
    "check_index_report": "check-index",
    "probe_scale": "probe-scale",
    "convert_threshold": "convert-threshold",
    "sweep_threshold": "sweep-threshold",
    "compare_ann": "compare-ann",
    "diagnose": "diagnose",
    "diff_index": "diff-index",
    "judge": "judge",
    "ci": "ci",
    "embed": "embed",
    "check_answers": "check-answers",
    "questions_generate": "questions-generate",
    "traces_refusals": "traces-refusals",
    "repair": "repair",
    "sheet_verify": "sheet-verify",
    "sheet_diff": "sheet-diff",
    "refused": "failure",
}


@pytest.fixture
def kb(small_kb: dict[str, Path], small_kb_questions: Path) -> dict[str, Path]:
    return {**small_kb, "questions": small_kb_questions}


@pytest.fixture
def outputs(
    kb: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, dict[str, Any]]:
    """The real --json of every command, run through the CLI on the golden tests' inputs."""
    monkeypatch.setenv("INDEXCHECK_QUIET", "1")
    monkeypatch.chdir(tmp_path)
    args = {case: make(kb, tmp_path) for case, make in CASES.items()}
    args.update(_more_cases(kb, tmp_path))
    try:
        out = {case: _run(a, tmp_path / f"{case}.json") for case, a in args.items()}
        return {**out, **_sheet_outputs(tmp_path)}
    finally:
        gs.SCRIPT = None


def test_every_command_s_json_validates_against_its_schema(
    outputs: dict[str, dict[str, Any]],
) -> None:
    assert sorted(outputs) == sorted(EXPECTED_KIND)
    assert {kind_for(p) for p in outputs.values()} == set(KINDS)
    for case, payload in outputs.items():
        assert kind_for(payload) == EXPECTED_KIND[case], case
        validate(payload)
    assert outputs["check_index_report"]["report"]  # the --report files, listed
    assert outputs["questions_generate"]["questions"]
    assert [r["id"] for r in outputs["traces_refusals"]["refusals"]] == ["a2"]
    assert [r["verified"] for r in outputs["sheet_verify"]["runs"]] == [True, True]
    diffed = {a["answer_id"]: a for a in outputs["sheet_diff"]["answers"]}
    assert diffed["j03"]["changed"] == ["question"] and diffed["j01"]["claims"] == []
    ci_results = outputs["ci"]["results"]
    assert set(ci_results) == {"check-index", "probe-scale", "compare-ann", "diagnose"}


def test_a_key_no_schema_describes_is_refused(outputs: dict[str, dict[str, Any]]) -> None:
    """The schemas refuse what they do not describe, at the top and in the rows, so a
    result cannot grow a key its schema misses."""
    for case, path in (
        ("check_index_buggy_all", ("chunks", 0)),
        ("check_index_buggy_all", ("findings", 0)),
        ("compare_ann", ("by_fetch", 0)),
        ("sweep_threshold", ("questions", 0)),
        ("judge", ("answers", 0)),
        ("ci", ("results", "check-index")),
        ("ci", ("gates", 0)),
        ("check_answers", ("answers", 0)),
        ("sheet_verify", ("runs", 0)),
        ("sheet_diff", ("answers", 0)),
    ):
        for where in ((), path):
            payload = copy.deepcopy(outputs[case])
            target = payload
            for step in where:
                target = target[step]
            target["surprise"] = 1
            with pytest.raises(ValidationError, match="surprise"):
                validate(payload)


def test_a_missing_or_retyped_key_is_refused(outputs: dict[str, dict[str, Any]]) -> None:
    payload = copy.deepcopy(outputs["check_index_good_all"])
    del payload["checked"]
    with pytest.raises(ValidationError, match="checked"):
        validate(payload)
    payload = copy.deepcopy(outputs["check_index_good_all"])
    payload["chunks"][0]["status"] = "fine"
    with pytest.raises(ValidationError, match="fine"):
        validate(payload)
    payload = copy.deepcopy(outputs["probe_scale"])
    payload["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(ValidationError):
        validate(payload)


def test_the_docs_list_every_schema() -> None:
    page = (ROOT / "docs" / "reference" / "json-schemas.md").read_text(encoding="utf-8")
    for kind in KINDS:
        assert f"| `{kind}` | `{kind}.schema.json` |" in page, kind
