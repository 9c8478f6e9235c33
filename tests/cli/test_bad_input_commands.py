"""The bad-input matrix of the newest commands (issue 12): ``judge``, ``sheet revise|diff|
export``, ``diagnose --answers/--judge`` and ``diff-index``.

Same rules as tests/test_bad_input.py: each row runs the CLI in process with a canary secret
in the environment and asserts the exit code; for 2 and 3 exactly one ``error: `` line on
stderr saying what is wrong; no traceback; never the catch-all ("could not finish:
<ExceptionType>"); the user's files unchanged; no ESC reaching stdout or stderr; hostile ids,
claims and spans shown literally (never as Rich markup); the canary nowhere. No judge call
(``$HOSTILE_JUDGE_LOG``) may happen in a row that exits 2. Rows for code this branch does not
own are strict xfails naming the bug.
"""

# ruff: noqa: E501  (the matrix reads best one row per line)
from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.testing import HASH32, HashEmbedder
from tests.util import CATCH_ALL, tree_digest

CANARY = "canary-3b9e71d0aa-secret"
EMB = ["--embedder", "py:indexcheck.testing:HASH32"]
PY_JUDGE = "py:tests.judge_hook:fixture_judge"
COUNTING = "py:tests.hostile_judges:counting"
MARKUP_IDS = [
    "[bold red]x[/bold red]",
    "[/]",
    "[link=http://evil.example]y[/link]",
    "a\x1b]0;pwn\x07",
]
TEEN = "Teen cards can borrow up to 20 items and place up to 10 holds."


@dataclass
class World:
    """``data`` is the user's (must not change); ``out`` takes outputs."""

    data: Path
    out: Path
    env: dict[str, str] = field(default_factory=dict)

    def raw(self, name: str, data: bytes) -> str:
        path = self.data / name
        path.write_bytes(data)
        return str(path)

    def jsonl(self, name: str, rows: list[object]) -> str:
        return self.raw(name, "".join(json.dumps(r) + "\n" for r in rows).encode())

    @property
    def log(self) -> Path:
        return self.out / "judge_calls.log"

    @property
    def good(self) -> str:
        return f"faiss:{self.data / 'good'}"


def _world(tmp: Path) -> World:
    data, out = tmp / "data", tmp / "out"
    data.mkdir()
    out.mkdir()
    ids = [f"c{i}" for i in range(20)]
    texts = [f"Fact {i} about subject {i % 7}." for i in range(20)]
    (data / "chunks.jsonl").write_text(
        "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in zip(ids, texts, strict=True))
    )
    write_faiss_folder(data / "good", ids, HASH32.embed(texts), texts)
    qs = [{"id": f"q{i}", "question": texts[i], "expected": [ids[i]]} for i in range(5)]
    (data / "q.jsonl").write_text("".join(json.dumps(q) + "\n" for q in qs))
    return World(
        data=data, out=out, env={"HOSTILE_JUDGE_LOG": str(tmp / "out" / "judge_calls.log")}
    )


def answer(aid: object = "a1", **over: object) -> dict[str, object]:
    row: dict[str, object] = {
        "id": aid,
        "question": "How many items can a teenager borrow?",
        "answer": "Teen cards can borrow up to 20 items and place up to 10 holds [1].",
        "contexts": [{"id": "teen-cards", "text": TEEN, "rank": 1}],
    }
    row.update(over)
    return {k: v for k, v in row.items() if v is not ...}


def _judge(w: World, rows: list[object] | str, *args: str, judge: str = COUNTING) -> list[str]:
    path = rows if isinstance(rows, str) else w.jsonl("answers.jsonl", rows)
    return ["judge", "--answers", path, "--judge", judge, *args]


def _sheet(w: World, ids: list[str] | None = None) -> Path:
    """A sheet with one run (made before the row's digest: it is the user's file)."""
    sheet = w.data / "sheet"
    rows = [answer(i) for i in (ids or ["a1", "a2"])]
    path = w.data / "sheet_answers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = CliRunner().invoke(
        cli, ["judge", "--answers", str(path), "--judge", COUNTING, "--sheet", str(sheet)]
    )
    assert r.exit_code == 0, r.output
    return sheet


def _run_id(sheet: Path) -> str:
    (run,) = [p.name for p in (sheet / "runs").iterdir()]
    return run


def _tamper(sheet: Path, name: str, edit: Callable[[str], str]) -> None:
    path = sheet / "runs" / _run_id(sheet) / name
    path.write_text(
        edit(path.read_text(encoding="utf-8")), encoding="utf-8", errors="surrogateescape"
    )


def _tampered(w: World, name: str, edit: Callable[[str], str], *args: str) -> list[str]:
    """``sheet diff`` of a sheet whose run file ``name`` was edited by hand."""
    sheet = _sheet(w)
    _tamper(sheet, name, edit)
    run = _run_id(sheet)
    return (
        ["sheet", *args, "--sheet", str(sheet), run, run]
        if args[0] == "diff"
        else [
            "sheet",
            "revise",
            "--sheet",
            str(sheet),
            f"{run}/a1/0",
            "--verdict",
            "SUPPORTED",
            "--reviewer",
            "me",
        ]
    )


def _incomplete(w: World) -> Path:
    """A sheet whose only run folder has no run.json (an interrupted or hand-made folder)."""
    sheet = w.out / "incomplete"
    (sheet / "runs" / "bad").mkdir(parents=True)
    return sheet


def _sheet_pair_markup(w: World, rechain: bool = False) -> list[str]:
    """Two runs of one sheet; the second's claims.jsonl was edited to hold markup verdicts."""
    sheet = _sheet(w)
    first = _run_id(sheet)
    path = w.data / "sheet_answers.jsonl"
    r = CliRunner().invoke(
        cli, ["judge", "--answers", str(path), "--judge", COUNTING, "--sheet", str(sheet)]
    )
    assert r.exit_code == 0, r.output
    (second,) = [p.name for p in (sheet / "runs").iterdir() if p.name != first]
    claims = sheet / "runs" / second / "claims.jsonl"
    claims.write_text(
        claims.read_text().replace('"verdict": "SUPPORTED"', '"verdict": "[/]\\u001b[2J"')
    )
    if rechain:  # the forger recomputed the hash chain (no key: it verifies)
        from tests.commands.judge.sheet.test_chain import rechain as recompute

        recompute(claims.parent)
    return ["sheet", "diff", "--sheet", str(sheet), first, second]


def _diagnose(w: World, *args: str) -> list[str]:
    return ["diagnose", "--store", w.good, *EMB, "--questions", str(w.data / "q.jsonl"),
            "--chunks", str(w.data / "chunks.jsonl"), *args]  # fmt: skip


def _diag_answers(w: World) -> str:
    return w.jsonl("da.jsonl", [answer(f"q{i}") for i in range(5)])


def _faiss(w: World, name: str, n: int, dim: int) -> str:
    ids = [f"c{i}" for i in range(n)]
    texts = [f"Fact {i} about subject {i % 7}." for i in range(n)]
    write_faiss_folder(w.data / name, ids, HashEmbedder(dim).embed(texts), texts)
    return f"faiss:{w.data / name}"


def _empty_faiss(w: World) -> str:
    import faiss

    folder = w.data / "empty"
    folder.mkdir()
    faiss.write_index(faiss.IndexFlatIP(32), str(folder / "index.faiss"))
    (folder / "ids.json").write_text("[]")
    return f"faiss:{folder}"


def _diff(w: World, *args: str) -> list[str]:
    return ["diff-index", "--old", w.good, "--new", w.good, *args]


Setup = Callable[[World], list[str]]


@dataclass(frozen=True)
class Row:
    name: str
    setup: Setup
    code: int
    says: str = ""
    xfail: str | None = None
    shows: tuple[str, ...] = ()  # must appear literally on stdout (markup shown, not applied)


MISSING = ...
ROWS: list[Row] = [
    # -- judge: the answers file -----------------------------------------------------------
    Row("answers_missing_file", lambda w: _judge(w, str(w.data / "nope.jsonl")), 2, "answers file"),
    Row("answers_unknown_suffix", lambda w: _judge(w, w.raw("a.txt", b"x")), 2, "unknown extension '.txt'"),
    Row("answers_empty", lambda w: _judge(w, w.raw("a.jsonl", b"\n\n")), 2, "holds no answers"),
    Row("answers_no_id", lambda w: _judge(w, [answer(MISSING)]), 2, "answers.jsonl line 1: each answer needs a non-empty 'id'"),
    Row("answers_no_question", lambda w: _judge(w, [answer(question=MISSING)]), 2, "answers.jsonl line 1: each answer needs"),
    Row("answers_no_answer", lambda w: _judge(w, [answer(answer=MISSING)]), 2, "'answer' must be a string"),
    Row("answers_answer_number", lambda w: _judge(w, [answer(answer=5)]), 2, "'answer' must be a string"),
    Row("answers_answer_list", lambda w: _judge(w, [answer(answer=["x"])]), 2, "'answer' must be a string"),
    Row("answers_no_contexts", lambda w: _judge(w, [answer(contexts=MISSING)]), 2, "has no 'contexts'"),
    Row("answers_contexts_number", lambda w: _judge(w, [answer(contexts=5)]), 2, "'contexts' must be a list"),
    Row("answers_contexts_object", lambda w: _judge(w, [answer(contexts={"id": "p", "text": "t"})]), 2, "'contexts' must be a list"),
    Row("answers_contexts_string", lambda w: _judge(w, [answer(contexts="just text")]), 2, "contexts[0] must be an object"),
    Row("answers_contexts_bad_json", lambda w: _judge(w, [answer(contexts="[{oops")]), 2, "'contexts' is not a valid JSON list"),
    Row("answers_context_text_number", lambda w: _judge(w, [answer(contexts=[{"id": "p", "text": 3}])]), 2, "contexts[0] must be an object with 'id' and 'text'"),
    Row("answers_context_rank_text", lambda w: _judge(w, [answer(contexts=[{"id": "p", "text": "t", "rank": "first"}])]), 2, "'rank'/'score' must be numbers"),
    Row("answers_context_score_nan", lambda w: _judge(w, [answer(contexts=[{"id": "p", "text": "t", "score": "nan"}])]), 2, "'rank'/'score' must be"),
    Row("answers_context_id_object", lambda w: _judge(w, [answer(contexts=[{"id": {"x": 1}, "text": TEEN}])]), 2, "contexts[0] 'id' must be a string"),
    Row("answers_id_object", lambda w: _judge(w, [answer({"x": 1})]), 2, "answers.jsonl line 1: 'id' must be a string, not a dict"),
    Row("answers_in_scope_garbage", lambda w: _judge(w, [answer(in_scope="perhaps")]), 2, "'in_scope' must be true or false"),
    Row("answers_duplicate_id", lambda w: _judge(w, [answer(), answer()]), 2, "answer id 'a1' appears twice"),
    Row("answers_not_object", lambda w: _judge(w, w.raw("a.jsonl", b"[1, 2]\n")), 2, "a.jsonl line 1 is not a JSON object"),
    Row("answers_invalid_json", lambda w: _judge(w, w.raw("a.jsonl", b"{oops\n")), 2, "a.jsonl line 1 is not valid JSON"),
    Row("answers_invalid_utf8", lambda w: _judge(w, w.raw("a.jsonl", json.dumps(answer()).encode().replace(b"teenager", b"\xff\xfe") + b"\n")), 2, "a.jsonl line 1 is not valid UTF-8"),
    Row("answers_invalid_utf8_csv", lambda w: _judge(w, w.raw("a.csv", b"id,question,answer,contexts\na,q,caf\xe9,[]\n")), 2, "a.csv line 2 is not valid UTF-8"),
    Row("answers_lone_surrogate_answer", lambda w: _judge(w, w.raw("a.jsonl", json.dumps(answer(answer="Teens \ud800 20.")).encode() + b"\n")), 2, "a.jsonl line 1: 'answer' holds a lone surrogate"),
    Row("answers_lone_surrogate_context", lambda w: _judge(w, w.raw("a.jsonl", json.dumps(answer(contexts=[{"id": "p", "text": "x\udc80"}])).encode() + b"\n")), 2, "a.jsonl line 1: contexts[0] 'text' holds a lone surrogate"),
    Row("answers_lone_surrogate_id", lambda w: _judge(w, w.raw("a.jsonl", json.dumps(answer("\ud83d")).encode() + b"\n")), 2, "a.jsonl line 1: 'id' holds a lone surrogate"),
    Row("answers_markup_id_in_error", lambda w: _judge(w, [answer("[bold red]x[/bold red]\x1b[2J"), answer("[bold red]x[/bold red]\x1b[2J")]), 2, "answer id '[bold red]x[/bold red]\\x1b[2J' appears twice"),
    # -- judge: options --------------------------------------------------------------------
    Row("citation_pattern_invalid", lambda w: _judge(w, [answer()], "--citation-pattern", "("), 2, "--citation-pattern '(' is not a valid regex"),
    Row("refusal_pattern_invalid", lambda w: _judge(w, [answer()], "--refusal-pattern", "[a-"), 2, "--refusal-pattern '[a-' is not a valid regex"),
    Row("refusal_pattern_control", lambda w: _judge(w, [answer()], "--refusal-pattern", "(\x1b"), 2, "--refusal-pattern '(\\x1b' is not a valid regex"),
    # a pattern that matches an empty text makes every answer a refusal: nothing judged, a pass
    Row("refusal_pattern_matches_everything", lambda w: _judge(w, [answer()], "--refusal-pattern", "(a*)*$"), 2, "matches an empty text, so it matches every answer"),
    Row("citation_pattern_without_group", lambda w: _judge(w, [answer()], "--citation-pattern", "x"), 2, "has no group: group 1 must capture the cited ids"),
    # a judge that lists no claims did not do the work: UNJUDGED (exit 1), never a pass
    Row("judge_lists_no_claims", lambda w: _judge(w, [answer()], judge="py:tests.hostile_judges:empty_claims"), 1, "", shows=("UNJUDGED",)),
    Row("prompt_missing", lambda w: _judge(w, [answer()], "--prompt", str(w.data / "nope.md")), 2, "nope.md does not exist; check --prompt"),
    Row("prompt_folder", lambda w: _judge(w, [answer()], "--prompt", str(w.data)), 2, "--prompt"),
    Row("prompt_empty", lambda w: _judge(w, [answer()], "--prompt", w.raw("p.md", b"  \n")), 2, "is empty"),
    Row("prompt_binary", lambda w: _judge(w, [answer()], "--prompt", w.raw("p.md", b"\x89PNG\r\n\x1a\n\x00\xff\xfe")), 2, "p.md line 1 is not valid UTF-8"),
    Row("labels_missing", lambda w: _judge(w, [answer()], "--labels", str(w.data / "nope.jsonl")), 2, "labels file"),
    Row("labels_invalid_json", lambda w: _judge(w, [answer()], "--labels", w.raw("l.jsonl", b"{oops\n")), 2, "l.jsonl line 1 is not valid JSON"),
    Row("labels_not_object", lambda w: _judge(w, [answer()], "--labels", w.raw("l.jsonl", b"[1]\n")), 2, "each label needs an 'id'"),
    Row("labels_bad_verdict", lambda w: _judge(w, [answer()], "--labels", w.jsonl("l.jsonl", [{"id": "a1", "claim": 0, "verdict": "[/]"}])), 2, "l.jsonl line 1: a claim label needs"),
    Row("labels_claim_bool", lambda w: _judge(w, [answer()], "--labels", w.jsonl("l.jsonl", [{"id": "a1", "claim": True, "verdict": "SUPPORTED"}])), 2, "l.jsonl line 1: a claim label needs"),
    Row("labels_claim_negative", lambda w: _judge(w, [answer()], "--labels", w.jsonl("l.jsonl", [{"id": "a1", "claim": -1, "verdict": "SUPPORTED"}])), 2, "l.jsonl line 1: a claim label needs"),
    Row("labels_groundedness_bool", lambda w: _judge(w, [answer()], "--labels", w.jsonl("l.jsonl", [{"id": "a1", "groundedness": True}])), 2, "needs 'groundedness' in [0, 1]"),
    Row("labels_groundedness_nan", lambda w: _judge(w, [answer()], "--labels", w.raw("l.jsonl", b'{"id": "a1", "groundedness": NaN}\n')), 2, "needs 'groundedness' in [0, 1]"),
    Row("labels_invalid_utf8", lambda w: _judge(w, [answer()], "--labels", w.raw("l.jsonl", b'{"id": "a\xff", "groundedness": 1}\n')), 2, "l.jsonl line 1 is not valid UTF-8"),
    Row("labels_empty", lambda w: _judge(w, [answer()], "--labels", w.raw("l.jsonl", b"\n")), 2, "holds no labels"),
    Row("sheet_is_a_file", lambda w: _judge(w, [answer()], "--sheet", w.raw("sheet.txt", b"x")), 2, "sheet.txt"),
    Row("sheet_format_unknown", lambda w: _judge(w, [answer()], "--sheet", str(w.out / "s"), "--sheet-format", "xml"), 2, "'xml' is not one of"),
    Row("json_to_a_folder", lambda w: _judge(w, [answer()], "--json", str(w.out)), 2, "--json"),
    Row("report_is_a_file", lambda w: _judge(w, [answer()], "--report", w.raw("r.txt", b"x")), 2, "--report"),
    Row("retries_out_of_range", lambda w: _judge(w, [answer()], "--retries", "99"), 2, "invalid value for '--retries'"),
    Row("seed_nan", lambda w: _judge(w, [answer()], "--seed", "nan"), 2, "invalid value for '--seed'"),
    Row("cache_not_sqlite", lambda w: _judge(w, [answer()], "--cache", w.raw("notes.txt", b"not a database\n" * 50)), 2, "notes.txt is not an indexcheck"),
    Row("cache_is_a_folder", lambda w: _judge(w, [answer()], "--cache", str(w.out)), 2, "--cache"),
    Row("judge_spec_unknown", lambda w: _judge(w, [answer()], judge="nope:x"), 2, "unknown judge 'nope:x'"),
    Row("judge_spec_markup", lambda w: _judge(w, [answer()], judge="[bold]x\x1b[2J"), 2, "unknown judge '[bold]x\\x1b[2J'"),
    Row("judge_openai_no_model", lambda w: _judge(w, [answer()], judge="openai:http://h/v1"), 2, "?model=NAME"),
    Row("judge_py_no_module", lambda w: _judge(w, [answer()], judge="py:no_such_mod_x:f"), 2, "cannot import module"),
    Row("judge_py_bad_target", lambda w: _judge(w, [answer()], judge="py:nothing"), 2, "must be py:module:function"),
    Row("store_spec_bad", lambda w: _judge(w, [answer()], "--store", "nope:x"), 2, "nope"),
    # -- judge: hostile judges and hostile data (exit 0/1, shown literally) -----------------
    Row("judge_hook_sys_exit_0", lambda w: _judge(w, [answer()], judge="py:tests.hostile_judges:exit_zero"), 3, "py:tests.hostile_judges:exit_zero judge called sys.exit(0)"),
    Row("judge_hook_raises", lambda w: _judge(w, [answer()], judge="py:tests.hostile_judges:raises"), 3, "the py:tests.hostile_judges:raises judge raised ValueError: hook bug"),
    Row("judge_reply_wrong_types", lambda w: _judge(w, [answer()], judge="py:tests.hostile_judges:wrong_types"), 1, shows=("UNJUDGED",)),
    Row("judge_reply_claims_not_list", lambda w: _judge(w, [answer()], judge="py:tests.hostile_judges:claims_not_a_list"), 1, shows=("UNJUDGED",)),
    Row("judge_reply_markup", lambda w: _judge(w, [answer()], judge="py:tests.hostile_judges:markup"), 1, shows=("[bold red]x[/bold red]", "[/]", "[link=http://evil.example]y[/link]", "\\x1b]0;pwn\\x07")),
    Row("judge_reply_markup_verdict", lambda w: _judge(w, [answer()], judge="py:tests.hostile_judges:markup_verdict"), 1, shows=("UNJUDGED",)),
    Row("answers_markup_ids", lambda w: _judge(w, [answer(i, contexts=[{"id": i, "text": TEEN}], answer="Teens can borrow up to 20 items [1].") for i in MARKUP_IDS]), 0, shows=("[bold red]x[/bold red]", "[/]", "[link=http://evil.example]", "a\\x1b]0;pwn\\x07")),
    Row("answers_markup_unjudged_ids", lambda w: _judge(w, [answer(i) for i in MARKUP_IDS], judge="py:tests.hostile_judges:claims_not_a_list"), 1, shows=("[bold red]x[/bold red]", "[/]", "a\\x1b]0;pwn\\x07")),
    Row("answers_huge_text", lambda w: _judge(w, [answer(answer="Teens can borrow up to 20 items. " * 60_000, contexts=[{"id": "p", "text": TEEN * 30_000}])]), 0),
    # -- sheet revise / diff / export --------------------------------------------------------
    Row("sheet_missing", lambda w: ["sheet", "diff", "--sheet", str(w.data / "nope"), "a", "b"], 2, "--sheet"),
    # a run.json edited by hand is refused, never hashed into an audit pack
    Row("sheet_run_json_damaged", lambda w: _tampered(w, "run.json", lambda t: '{"run_id": 5}', "diff"), 2, "run.json lacks created"),
    Row("sheet_incomplete_run_not_listed", lambda w: ["sheet", "diff", "--sheet", str(_incomplete(w)), "bad", "bad"], 2, "no run 'bad' in sheet"),
    Row("sheet_revise_unknown_run", lambda w: ["sheet", "revise", "--sheet", str(_sheet(w)), "run-x/a1/0", "--verdict", "SUPPORTED", "--reviewer", "me"], 2, "no run 'run-x' in sheet"),
    Row("sheet_revise_unknown_row", lambda w: ["sheet", "revise", "--sheet", str(s := _sheet(w)), f"{_run_id(s)}/a9/0", "--verdict", "SUPPORTED", "--reviewer", "me"], 2, "no claim row"),
    Row("sheet_revise_markup_row", lambda w: ["sheet", "revise", "--sheet", str(s := _sheet(w)), f"{_run_id(s)}/[bold]\x1b[2J/0", "--verdict", "SUPPORTED", "--reviewer", "me"], 2, "/[bold]\\x1b[2J/0'"),
    Row("sheet_revise_traversal", lambda w: ["sheet", "revise", "--sheet", str(_sheet(w)), "../../x/a1/0", "--verdict", "SUPPORTED", "--reviewer", "me"], 2, "no run '..' in sheet"),
    Row("sheet_revise_bad_verdict", lambda w: ["sheet", "revise", "--sheet", str(s := _sheet(w)), f"{_run_id(s)}/a1/0", "--verdict", "MAYBE", "--reviewer", "me"], 2, "'MAYBE' is not one of"),
    Row("sheet_revise_claimless_row", lambda w: ["sheet", "revise", "--sheet", str(s := _sheet(w)), f"{_run_id(s)}/a1/-", "--verdict", "SUPPORTED", "--reviewer", "me"], 2, "no claim row"),
    Row("sheet_revise_corrupt_claims", lambda w: _tampered(w, "claims.jsonl", lambda t: t + "{oops\n", "revise"), 2, "claims.jsonl line 3 is not valid JSON"),
    Row("sheet_diff_unknown_runs", lambda w: ["sheet", "diff", "--sheet", str(_sheet(w)), "run-a", "run-b"], 2, "no run 'run-a' in sheet"),
    Row("sheet_diff_markup_run", lambda w: ["sheet", "diff", "--sheet", str(_sheet(w)), "[bold]\x1b[2J", "run-b"], 2, "no run '[bold]\\x1b[2J' in sheet"),
    Row("sheet_diff_json_to_a_folder", lambda w: ["sheet", "diff", "--sheet", str(s := _sheet(w)), _run_id(s), _run_id(s), "--json", str(w.out)], 2, "--json"),
    Row("sheet_diff_corrupt_cases", lambda w: _tampered(w, "cases.jsonl", lambda t: t.replace('"question_hash"', '"qh"'), "diff"), 2, "cases.jsonl"),
    Row("sheet_diff_invalid_utf8", lambda w: _tampered(w, "claims.jsonl", lambda t: t + '{"x": "\udcff"}\n', "diff"), 2, "claims.jsonl line 3 is not valid UTF-8"),
    # a hand-edited verdict no longer verifies: diff refuses it (exit 1), naming the row
    Row("sheet_diff_markup_verdict", lambda w: _sheet_pair_markup(w), 1, "does not verify"),
    Row("sheet_diff_markup_verdict_rechained", lambda w: _sheet_pair_markup(w, rechain=True), 1, shows=("[/]", "\\x1b[2J")),
    Row("sheet_export_into_existing_folder", lambda w: ["sheet", "export", "--sheet", str(s := _sheet(w)), _run_id(s), "--out", str(w.data)], 2, "is not empty"),
    Row("sheet_export_into_a_file", lambda w: ["sheet", "export", "--sheet", str(s := _sheet(w)), _run_id(s), "--out", w.raw("f.txt", b"x")], 2, "--out"),
    Row("sheet_export_unknown_run", lambda w: ["sheet", "export", "--sheet", str(_sheet(w)), "run-zz", "--out", str(w.out / "pack")], 2, "no run 'run-zz'"),
    Row("sheet_markup_answer_ids", lambda w: ["sheet", "diff", "--sheet", str(s := _sheet(w, MARKUP_IDS)), _run_id(s), _run_id(s)], 0, shows=("0 claim verdicts differ",)),
    # -- diagnose --answers / --judge --------------------------------------------------------
    Row("diagnose_judge_without_answers", lambda w: _diagnose(w, "--judge", COUNTING), 2, "--judge needs --answers"),
    Row("diagnose_answers_bad_row", lambda w: _diagnose(w, "--answers", w.jsonl("da.jsonl", [answer("q0", contexts=5)])), 2, "da.jsonl line 1: 'contexts' must be a list"),
    Row("diagnose_answers_invalid_utf8", lambda w: _diagnose(w, "--answers", w.raw("da.jsonl", b'{"id": "q\xff"}\n')), 2, "da.jsonl line 1 is not valid UTF-8"),
    Row("diagnose_answer_refusal_pattern", lambda w: _diagnose(w, "--answers", _diag_answers(w), "--answer-refusal-pattern", "(("), 2, "not a valid regex"),
    Row("diagnose_judge_spec_bad", lambda w: _diagnose(w, "--answers", _diag_answers(w), "--judge", "nope:x"), 2, "unknown judge"),
    Row("diagnose_bad_store_before_paid_judging", lambda w: [*_diagnose(w, "--answers", _diag_answers(w), "--judge", COUNTING)[:2], "faiss:" + str(w.data / "nope"), *_diagnose(w, "--answers", _diag_answers(w), "--judge", COUNTING)[3:]], 2, "nope"),
    Row("diagnose_bad_chunks_before_paid_judging", lambda w: [*_diagnose(w, "--answers", _diag_answers(w), "--judge", COUNTING)[:-4], "--chunks", w.raw("bad.jsonl", b"{oops\n"), "--answers", str(w.data / "da.jsonl"), "--judge", COUNTING], 2, "bad.jsonl line 1"),
    # -- diff-index --------------------------------------------------------------------------
    Row("diff_missing_old", lambda w: ["diff-index", "--old", f"faiss:{w.data / 'nope'}", "--new", w.good], 2, "nope"),
    Row("diff_missing_new", lambda w: ["diff-index", "--old", w.good, "--new", f"faiss:{w.data / 'nope'}"], 2, "nope"),
    # another model's dimension is a finding on the new index (exit 1), not bad input
    Row("diff_dimension_mismatch", lambda w: ["diff-index", "--old", w.good, "--new", _faiss(w, "d16", 20, 16)], 1, shows=("dimension_mismatch 20",)),
    # a first build (empty old index) compares nothing: exit 1 unless the new texts are checked
    Row("diff_empty_old", lambda w: ["diff-index", "--old", _empty_faiss(w), "--new", w.good], 1, shows=("added 20", "nothing was verified")),
    Row("diff_empty_old_checked", lambda w: ["diff-index", "--old", _empty_faiss(w), "--new", w.good, "--embedder", "py:indexcheck.testing:HASH32", "--all-new"], 0, shows=("added 20",)),
    Row("diff_empty_new", lambda w: ["diff-index", "--old", w.good, "--new", _empty_faiss(w)], 2, "holds no chunks"),
    Row("diff_both_empty", lambda w: ["diff-index", "--old", (e := _empty_faiss(w)), "--new", e], 2, "holds no chunks"),
    Row("diff_memory_limit_garbage", lambda w: _diff(w, "--memory-limit", "lots"), 2, "--memory-limit 'lots' is not a size"),
    Row("diff_memory_limit_injection", lambda w: _diff(w, "--memory-limit", "1GB'; DROP TABLE x; --"), 2, "is not a size"),
    Row("diff_workdir_a_file", lambda w: _diff(w, "--workdir", w.raw("wd.txt", b"x")), 2, "--workdir"),
    Row("diff_min_cosine_nan", lambda w: _diff(w, "--min-cosine", "nan"), 2, "'nan' is not a finite number"),
    Row("diff_sample_new_negative", lambda w: _diff(w, *EMB, "--sample-new", "-1"), 2, "--sample-new"),
    Row("diff_sample_without_embedder", lambda w: _diff(w, "--sample-new", "5"), 2, "add --embedder"),
    Row("diff_chunks_old_missing", lambda w: _diff(w, "--chunks-old", str(w.data / "nope.jsonl")), 2, "nope.jsonl"),
    Row("diff_chunks_old_invalid_utf8", lambda w: _diff(w, "--chunks-old", w.raw("c.jsonl", b'{"id":"a","text":"\xff"}\n')), 2, "c.jsonl line 1 is not valid UTF-8"),
    Row("diff_json_to_a_folder", lambda w: _diff(w, "--json", str(w.out)), 2, "--json"),
    Row("diff_cache_not_sqlite", lambda w: _diff(w, *EMB, "--cache", w.raw("notes.txt", b"not a database\n" * 50), "--sample-new", "3"), 2, "notes.txt is not an indexcheck cache (not a SQLite database)"),
]  # fmt: skip


def _run(
    tmp: Path, setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str, World, dict[str, object]]:
    for var in ("INDEXCHECK_DEBUG", "INDEXCHECK_JUDGE", "INDEXCHECK_SHEET", "INDEXCHECK_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp)
    w = _world(tmp)
    monkeypatch.setenv("HOSTILE_JUDGE_LOG", str(w.log))
    args = setup(w)
    if w.log.exists():
        w.log.unlink()  # calls made while setting up (a sheet's first run) are not the row's
    before = tree_digest(w.data, dirs=True)
    env = {"MISTRAL_API_KEY": CANARY, "OPENAI_API_KEY": CANARY, "PGPASSWORD": CANARY, **w.env}
    r = CliRunner().invoke(cli, args, env=env)
    return r.exit_code, r.stdout, r.stderr, w, before


@pytest.mark.parametrize(
    "row",
    [
        pytest.param(
            r, id=r.name, marks=[pytest.mark.xfail(strict=True, reason=r.xfail)] if r.xfail else []
        )
        for r in ROWS
    ],
)
def test_bad_input_command_row(row: Row, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err, w, before = _run(tmp_path, row.setup, monkeypatch)
    assert code == row.code, err
    assert row.says in err, err
    if code in (2, 3):
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), err
    if code == 2:  # refused before any work: not one judge call
        assert not w.log.exists() or w.log.read_text() == ""
    for token in row.shows:
        assert token in out, out
    assert "\x1b" not in out + err and "\x07" not in out + err
    assert "Traceback" not in out + err
    assert CATCH_ALL not in err  # the catch-all (tests/test_bad_input.py proves the text)
    assert tree_digest(w.data, dirs=True) == before  # the user's files are untouched
    assert CANARY not in out + err
    for p in w.out.rglob("*"):
        if p.is_file():
            assert CANARY.encode() not in p.read_bytes(), p


def _hostile_report(tmp_path: Path, judge: str, rows: list[dict[str, object]]) -> tuple[str, str]:
    w = _world(tmp_path)
    rep = w.out / "rep"
    r = CliRunner().invoke(cli, _judge(w, rows, "--report", str(rep), judge=judge))
    assert r.exit_code in (0, 1), r.output
    return (rep / "judge.md").read_text(encoding="utf-8"), (rep / "judge.html").read_text(
        encoding="utf-8"
    )


HOSTILE_TEXT = "<script>alert(1)</script> [x](javascript:alert(1)) ![i](http://evil/p.png) *em* `code` | cell \r| row |\x85\x9b31m"


def test_reports_show_hostile_claims_and_ids_as_text(tmp_path: Path) -> None:
    """judge.md and judge.html: ids, claims, spans and passages are text, never markup, and
    no control character (C0 or C1, CR included) reaches either file."""
    rows = [answer(HOSTILE_TEXT, contexts=[{"id": HOSTILE_TEXT, "text": TEEN + " " + HOSTILE_TEXT}],
                   answer="Teens can borrow up to 20 items [1].")]  # fmt: skip
    md, page = _hostile_report(tmp_path, "py:tests.hostile_judges:markup", rows)
    for text in (md, page):
        assert (
            "\x1b" not in text and "\x07" not in text and "\x85" not in text and "\x9b" not in text
        )
        assert "<script>" not in text
    assert "\r" not in md  # CommonMark ends a line at CR: a table row would break
    assert "[x](javascript:" not in md and "![i](" not in md
    assert re.search(r"(?<!\\)\| cell", md) is None and "\\| cell" in md  # no cell break
    assert "\\[bold red\\]x\\[/bold red\\]" in md
    assert "&lt;script&gt;" in page and "\\x1b]0;pwn\\x07" in page


def test_a_hostile_judge_cannot_inject_through_a_cached_rerun(tmp_path: Path) -> None:
    """The cached judgement of a hostile reply renders as safely as the live one."""
    w = _world(tmp_path)
    args = _judge(
        w, [answer()], "--cache", str(w.out / "c.sqlite"), judge="py:tests.hostile_judges:markup"
    )
    first = CliRunner().invoke(cli, args)
    second = CliRunner().invoke(cli, args)
    assert first.exit_code == second.exit_code == 1
    for r in (first, second):
        assert "\x1b" not in r.stdout and "[bold red]x[/bold red]" in r.stdout


def test_correct_runs_still_pass(tmp_path: Path) -> None:
    """The guards refuse bad input only: a clean judge run, sheet round trip and diff-index pass."""
    w = _world(tmp_path)
    r = CliRunner().invoke(
        cli,
        _judge(
            w,
            [answer(), answer("a2")],
            "--labels",
            w.jsonl(
                "l.jsonl",
                [{"id": "a1", "claim": 0, "verdict": "SUPPORTED"}, {"id": "a2", "groundedness": 1}],
            ),
        ),
    )
    assert r.exit_code == 0, r.output
    sheet = _sheet(w)
    run = _run_id(sheet)
    r = CliRunner().invoke(
        cli,
        [
            "sheet",
            "revise",
            "--sheet",
            str(sheet),
            f"{run}/a1/0",
            "--verdict",
            "unsupported",
            "--reviewer",
            "me",
        ],
    )
    assert r.exit_code == 0 and "SUPPORTED -> UNSUPPORTED" in r.stdout, r.output
    r = CliRunner().invoke(
        cli, ["sheet", "diff", "--sheet", str(sheet), run, run, "--json", str(w.out / "d.json")]
    )
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(
        cli, ["sheet", "export", "--sheet", str(sheet), run, "--out", str(w.out / "pack")]
    )
    assert r.exit_code == 0 and (w.out / "pack" / "manifest.json").is_file(), r.output
    r = CliRunner().invoke(cli, _diff(w, "--workdir", str(w.out / "wd"), "--memory-limit", "64MB"))
    assert r.exit_code == 0, r.output
    assert np.isfinite(0.0)
