"""indexcheck check-answers: planted URLs, references without links and numbers absent from
the knowledge base are flagged; the same strings in the knowledge base or the context are not;
ordinary text (a year after "In", "May 2020", versions, list numbers) is never a reference."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import indexcheck
from indexcheck.cli.app import cli
from indexcheck.commands.judge import kb_index
from indexcheck.commands.judge.answer_checks import check_answers
from indexcheck.commands.judge.claims import quantities
from indexcheck.commands.judge.references import ItemKind, extract
from indexcheck.inputs.answers import load_answers
from indexcheck.inputs.corpus import corpus_from_pairs

#: an answer completed from general knowledge: every item below is absent from KB_PLAIN
PLANTED = {
    "https://www.example.org/nutrition/cats": "url",
    "Harper 1998": "author_year",
    "Smith et al., 2019": "author_year",
    "Smith and Jones (2020)": "author_year",
    "10.1111/jvim.15227": "doi",
    "ISBN 978-0-306-40615-7": "isbn",
    "WSAVA 2013": "standard",
    "ISO 9001:2015": "standard",
    "35%": "percentage",
}
PLANTED_ANSWER = (
    "Cats need more protein than dogs, as Harper 1998 showed (Smith et al., 2019). "
    "Smith and Jones (2020) agree with the WSAVA 2013 advice and ISO 9001:2015 audits. "
    "About 35% of cats are overweight [1]. See https://www.example.org/nutrition/cats, "
    "doi:10.1111/jvim.15227 and ISBN 978-0-306-40615-7."
)
KB_PLAIN = [
    "Cats need more protein than dogs.",
    "Overweight cats are common in clinics.",
]
#: the same items, written the way a knowledge base writes them
KB_HOLDING = KB_PLAIN + [
    "Harper, J. A. (1998). Protein in feline diets. Journal of Feeding.",
    "Smith, K., Lee, M. and Jones, P. (2019) studied cats; Smith and Jones 2020 followed.",
    "The WSAVA global nutrition guidelines (2013) and ISO 9001:2015 apply to clinics.",
    "Thirty-five percent of cats are overweight (https://example.org/nutrition/cats/).",
    "Read it at https://doi.org/10.1111/JVIM.15227 or in the book, ISBN 0-306-40615-2.",
]


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def answer(aid: str, text: str, contexts: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    ctx = [{"id": f"c{i}", "text": t} for i, t in enumerate(contexts or [])]
    return {"id": aid, "question": "What do cats need?", "answer": text, "contexts": ctx, **extra}


def chunks(path: Path, texts: list[str]) -> Path:
    return write_rows(path, [{"id": f"k{i}", "text": t} for i, t in enumerate(texts)])


def run(tmp_path: Path, answers: list[dict[str, Any]], kb: list[str], *extra: str) -> Any:
    a = write_rows(tmp_path / "answers.jsonl", answers)
    c = chunks(tmp_path / "chunks.jsonl", kb)
    out = tmp_path / "out.json"
    r = CliRunner().invoke(
        cli, ["check-answers", "--answers", str(a), "--chunks", str(c), "--json", str(out), *extra]
    )
    data = json.loads(out.read_text()) if out.exists() else None
    return r, data


def flags_of(data: dict[str, Any], aid: str) -> dict[str, str]:
    got = next(a for a in data["answers"] if a["id"] == aid)
    return {f["text"]: f["kind"] for f in got["flags"]}


# -- planted and present -------------------------------------------------------------------


def test_planted_items_absent_from_the_kb_are_flagged_with_their_kind(tmp_path: Path) -> None:
    r, data = run(tmp_path, [answer("a1", PLANTED_ANSWER, ["Cats need protein."])], KB_PLAIN)
    assert r.exit_code == 1, r.output
    assert flags_of(data, "a1") == PLANTED
    flag = data["answers"][0]["flags"][0]
    assert flag["looked_in"] == ["context", "knowledge_base"]
    assert data["flagged"]["percentage"] == 1 and data["flagged"]["reference"] == 8


def test_the_same_items_in_the_kb_are_not_flagged(tmp_path: Path) -> None:
    r, data = run(tmp_path, [answer("a1", PLANTED_ANSWER, ["Cats need protein."])], KB_HOLDING)
    assert flags_of(data, "a1") == {}, data["answers"]
    assert r.exit_code == 0, r.output
    row = data["answers"][0]
    assert row["items"] == len(PLANTED) and row["in_knowledge_base_only"] == len(PLANTED)


def test_the_same_items_in_the_context_sent_are_not_flagged(tmp_path: Path) -> None:
    contexts = KB_HOLDING[2:]
    r, data = run(tmp_path, [answer("a1", PLANTED_ANSWER, contexts)], KB_PLAIN)
    assert r.exit_code == 0, flags_of(data, "a1")
    assert data["answers"][0]["in_context"] == len(PLANTED)


def test_one_answers_context_does_not_cover_another_answer(tmp_path: Path) -> None:
    rows = [
        answer("a1", "Harper 1998 found 35% of cats.", ["Harper (1998): 35% of cats."]),
        answer("a2", "Harper 1998 found 35% of cats.", ["Cats need protein."]),
    ]
    r, data = run(tmp_path, rows, KB_PLAIN)
    assert flags_of(data, "a1") == {}
    assert flags_of(data, "a2") == {"Harper 1998": "author_year", "35%": "percentage"}


def test_the_context_field_is_what_was_sent(tmp_path: Path) -> None:
    """``context`` (the exact text the model received) wins over the passages joined."""
    row = answer("a1", "Harper 1998 says so.", ["nothing here"], context="Harper (1998) said it")
    r, _ = run(tmp_path, [row], KB_PLAIN)
    assert r.exit_code == 0


def test_a_flag_is_shown_on_one_line(tmp_path: Path) -> None:
    """The answer is read a sentence a line ("et al." ends one): a flag never shows that."""
    r, data = run(tmp_path, [answer("a1", "Per Smith et al. (2019), cats eat.")], KB_PLAIN)
    assert flags_of(data, "a1") == {"Smith et al. (2019)": "author_year"}


def test_a_reference_is_not_found_through_another_year_or_name(tmp_path: Path) -> None:
    kb = ["Harper, J. A. (1998). Protein.", "Smith (2018) and WSAVA 2011."]
    text = "Harper 1999 and Harpers 1998, Smith (2019) and WSAVA 2013."
    r, data = run(tmp_path, [answer("a1", text)], kb)
    assert r.exit_code == 1
    assert set(flags_of(data, "a1")) == {
        "Harper 1999",
        "Harpers 1998",
        "Smith (2019)",
        "WSAVA 2013",
    }


def test_a_name_and_year_in_two_different_chunks_are_not_a_reference(tmp_path: Path) -> None:
    r, data = run(
        tmp_path, [answer("a1", "Harper 1998 says so.")], ["It was Harper", "1998 it was"]
    )
    assert flags_of(data, "a1") == {"Harper 1998": "author_year"}


def test_numbers_compare_as_the_judge_compares_them(tmp_path: Path) -> None:
    kb = ["Give it for five days at twenty percent, then $40 on 3 May, at 7:30, 1,000 mg."]
    text = "Treat for 5 days at 20 percent; it costs 40 dollars on May 3 at 7:30 with 1000 mg."
    r, data = run(tmp_path, [answer("a1", text)], kb)
    assert r.exit_code == 0, flags_of(data, "a1")
    kinds = {i.text: i.kind for i in extract(text)}
    assert kinds["5 days"] is ItemKind.DURATION and kinds["20 percent"] is ItemKind.PERCENTAGE
    assert kinds["May"] is ItemKind.DATE and kinds["7:30"] is ItemKind.DATE
    text2 = "Treat for 6 days at 25%, it costs $41."
    r, data = run(tmp_path, [answer("a1", text2)], kb)
    assert flags_of(data, "a1") == {"6 days": "duration", "25%": "percentage", "$41": "amount"}


def test_a_percentage_is_not_found_through_the_bare_number(tmp_path: Path) -> None:
    r, data = run(tmp_path, [answer("a1", "About 35% of cats.")], ["35 cats were seen in 2019."])
    assert flags_of(data, "a1") == {"35%": "percentage"}


# -- false-positive guards -----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "In 2019 the guideline changed.",
        "Since 2010, most clinics weigh cats. By 2020 they all did.",
        "May 2020 was the first month.",
        "The March 2021 update and the 2019 edition.",
        "Install version 2.1 or v3.0.1, or 3.10.4 of the tool.",
        "1. Feed the cat\n2. Weigh the cat\n3) Call the clinic",
    ],
)
def test_ordinary_text_is_no_reference(text: str) -> None:
    kinds = {i.kind for i in extract(text)}
    assert not kinds & {ItemKind.AUTHOR_YEAR, ItemKind.STANDARD, ItemKind.URL}
    items = [i.text for i in extract(text)]
    assert not any(x in items for x in ("1", "2", "3", "2.1", "3.0.1", "3.10.4")), items


def test_a_month_before_a_year_is_a_date_and_is_found_as_one(tmp_path: Path) -> None:
    kinds = [(i.text, i.kind) for i in extract("In May 2020 and in 2019.")]
    assert kinds == [("May", ItemKind.DATE), ("2020", ItemKind.DATE), ("2019", ItemKind.DATE)]
    r, _ = run(tmp_path, [answer("a1", "In May 2020 and in 2019.")], ["May 2020; 2019."])
    assert r.exit_code == 0


def test_citation_markers_and_list_numbers_are_never_flagged(tmp_path: Path) -> None:
    text = "1. Cats need protein [1].\n2. Dogs too [2]."
    r, data = run(tmp_path, [answer("a1", text, ["Cats need protein."])], KB_PLAIN)
    assert r.exit_code == 0, flags_of(data, "a1")


# -- rates, JSON, report, terminal ---------------------------------------------------------


def test_rates_come_with_wilson_intervals_and_a_phrase(tmp_path: Path) -> None:
    rows = [answer(f"a{i}", "Cats need protein.") for i in range(7)]
    rows.append(answer("bad", "About 35% of cats."))
    r, data = run(tmp_path, rows, KB_PLAIN)
    rate = data["rates"]["percentage"]
    assert (rate["k"], rate["n"]) == (7, 8)
    assert 0 < rate["low"] < rate["value"] < rate["high"] < 1
    assert rate["phrase"] == "88% of answers without a percentage absent from the knowledge base"
    assert "88% of answers without a percentage absent from the knowledge base" in r.output
    assert data["manifest"]["command"] == "check-answers"
    assert data["manifest"]["index"]["chunks"] == len(KB_PLAIN)
    assert set(data["manifest"]["seconds"]) == {"read", "index", "check"}


def test_report_is_markdown_with_data_escaped(tmp_path: Path) -> None:
    rows = [answer("a|*1*", "See https://x.test/a_b_c*d for it.")]
    r, data = run(tmp_path, rows, KB_PLAIN, "--report", str(tmp_path / "rep"))
    assert r.exit_code == 1
    md = (tmp_path / "rep" / "check-answers.md").read_text()
    assert "a\\|\\*1\\*" in md and "https://x.test/a\\_b\\_c\\*d" in md
    assert "| a|*1*" not in md


def test_terminal_data_is_never_markup(tmp_path: Path) -> None:
    """(Square brackets in an answer are citation markers, removed before the check: the id
    carries the markup here.)"""
    r, _ = run(tmp_path, [answer("[bold]x[/bold]", "About 35% of cats.")], KB_PLAIN)
    assert r.exit_code == 1 and "[bold]x[/bold]" in r.output


# -- exit codes and bad input --------------------------------------------------------------


def test_exit_0_when_nothing_is_flagged(tmp_path: Path) -> None:
    r, data = run(tmp_path, [answer("a1", "Cats need protein.")], KB_PLAIN)
    assert r.exit_code == 0 and data["ok"] is True


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"id": "a1", "question": "q", "answer": "x"}], "has no 'contexts'"),
        ([{"id": "a1", "question": "q", "answer": 3, "contexts": []}], "'answer' must be a string"),
        ([{"question": "q", "answer": "x", "contexts": []}], "non-empty 'id'"),
        ([answer("a1", "x"), answer("a1", "y")], "appears twice"),
    ],
)
def test_bad_answer_rows_exit_2_with_one_line(
    tmp_path: Path, rows: list[dict[str, Any]], message: str
) -> None:
    r, data = run(tmp_path, rows, KB_PLAIN)
    # a failed run leaves its failed result at --json, never a result claiming success
    assert r.exit_code == 2 and data is not None
    assert (data["ok"], data["complete"], data["exit_code"]) == (False, False, 2)
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]


def test_bad_chunks_exit_2_with_one_line(tmp_path: Path) -> None:
    a = write_rows(tmp_path / "a.jsonl", [answer("a1", "x")])
    missing = ["check-answers", "--answers", str(a), "--chunks", str(tmp_path / "none.jsonl")]
    r = CliRunner().invoke(cli, missing)
    assert r.exit_code == 2 and r.output.startswith("error: chunks file")
    assert len(r.output.strip().splitlines()) == 1
    c = write_rows(tmp_path / "c.jsonl", [{"id": "k1", "body": "text"}])
    r = CliRunner().invoke(cli, ["check-answers", "--answers", str(a), "--chunks", str(c)])
    assert r.exit_code == 2 and "no column 'text'" in r.output and "--text-column" in r.output


def test_missing_answers_file_exits_2(tmp_path: Path) -> None:
    c = chunks(tmp_path / "c.jsonl", KB_PLAIN)
    args = ["check-answers", "--answers", str(tmp_path / "no.jsonl"), "--chunks", str(c)]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2 and "answers file" in r.output and "--answers" in r.output


# -- library and index ---------------------------------------------------------------------


def test_library_function_returns_a_typed_result(tmp_path: Path) -> None:
    a = write_rows(tmp_path / "a.jsonl", [answer("a1", PLANTED_ANSWER)])
    c = chunks(tmp_path / "c.jsonl", KB_PLAIN)
    result = indexcheck.check_answers(a, c)
    assert result.ok is False and result.manifest["command"] == "check-answers"
    assert {f.text for f in result.answers[0].flags} == set(PLANTED)
    assert result.to_dict()["answers"][0]["flags"][0]["looked_in"] == ["context", "knowledge_base"]
    rows = load_answers(a)
    kb = corpus_from_pairs(["k1"], [" ".join(KB_HOLDING)])
    assert check_answers(rows, kb).ok is True


@pytest.mark.parametrize(
    "written",
    ["2019", "2019.", "0.5", "half", "1,000", "5th", "twenty-five", "twenty five", "2:30",
     "12 percent", "12 per cent", "12%", "10mg", "007", "May", "june", "3.5"],
)  # fmt: skip
def test_every_number_the_judge_reads_is_found_by_its_key(written: str) -> None:
    index = kb_index.build_index([f"It said {written} here."])
    for q in quantities(written):
        assert index.has_number(kb_index.key_query(q.key)), (written, q.key)
    assert not index.has_number(kb_index.key_query("987654"))


def test_an_index_over_several_blocks_finds_items_in_every_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(kb_index, "_BLOCK", 64)
    texts = [
        f"Chunk {i}: Author{i} and Harper{i} wrote in {1900 + i} about {i} cats."
        for i in range(200)
    ]
    index = kb_index.build_index(texts)
    name = kb_index.token_hash(b"harper150")
    assert index.has_pair(name, kb_index.number_token(b"2050"))
    assert not index.has_pair(name, kb_index.number_token(b"2051"))
    assert index.has_number(kb_index.key_query("199"))


def test_contexts_are_scoped_to_their_answer() -> None:
    index = kb_index.build_index(["Harper 1998 and 15%", "nothing"], docs=[0, 1])
    name, year = kb_index.token_hash(b"harper"), kb_index.number_token(b"1998")
    assert index.has_pair(name, year, doc=0) and not index.has_pair(name, year, doc=1)
    pct = kb_index.key_query("15%")
    assert index.has_number(pct, doc=0) and not index.has_number(pct, doc=1)


@pytest.mark.parametrize(
    "name", ["Ng", "Harper", "Abernathy", "Müller", "Øvergaard", "Wolfeschlegelsteinhausen"]
)
def test_names_hash_alike_in_the_index_and_in_a_query(name: str) -> None:
    """Short, 9-16 byte, longer than 16 byte and non-ASCII names: the vectorized hash of the
    index and the hash of a query agree (and a near name does not match)."""
    index = kb_index.build_index([f"As {name}, J. wrote in 1999, cats eat."])
    year = kb_index.number_token(b"1999")
    assert index.has_pair(kb_index.token_hash(kb_index.tokens(name)[0]), year)
    assert not index.has_pair(kb_index.token_hash(kb_index.tokens(name + "x")[0]), year)


def test_answers_in_csv_are_read_like_judge_reads_them(tmp_path: Path) -> None:
    import csv

    path = tmp_path / "answers.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "question", "answer", "contexts"])
        w.writerow(["a1", "q", "Harper 1998 says 35%.", json.dumps([{"id": "c", "text": "x"}])])
    c = chunks(tmp_path / "c.jsonl", KB_HOLDING)
    r = CliRunner().invoke(cli, ["check-answers", "--answers", str(path), "--chunks", str(c)])
    assert r.exit_code == 0, r.output


def test_the_cli_manifest_times_the_whole_command_reading_included(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI reads the files, then calls api.check_answers, which stamps the result with
    its own run: the manifest's wall time left the reading out (0.48 s of a 2.3 s run)."""
    import time

    from indexcheck.inputs import given as cmd  # where the chunks are read now

    slow = cmd.load_chunks

    def load(*a: Any, **k: Any) -> Any:
        time.sleep(0.3)
        return slow(*a, **k)

    monkeypatch.setattr(cmd, "load_chunks", load)
    r, data = run(tmp_path, [answer("a1", PLANTED_ANSWER, ["Cats need protein."])], KB_PLAIN)
    assert r.exit_code == 1, r.output
    m = data["manifest"]
    assert m["seconds"]["read"] >= 0.3
    assert m["wall_seconds"] >= m["seconds"]["read"]
