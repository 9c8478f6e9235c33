"""indexcheck judge: the fixture case through mistral:, openai: (emulator) and py: judges,
and every failure class with its documented result. Never NaN."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from tests.emulators import chat
from tests.emulators.mistral_emulator import MistralEmulator
from tests.judge_hook import scripted_replies

ROOT = Path(__file__).resolve().parents[3]
ANSWERS = ROOT / "fixtures" / "judge" / "answers.jsonl"
EXPECTED = json.loads((ROOT / "fixtures" / "judge" / "expected.json").read_text())
KEY = "sk-judge-test-5c1e"
PY_JUDGE = "py:tests.judge_hook:fixture_judge"
CLAIM_KEYS = list(EXPECTED["answers"]["j01"]["claims"][0])


@pytest.fixture
def emu(monkeypatch: pytest.MonkeyPatch) -> Iterator[MistralEmulator]:
    with MistralEmulator(api_key=KEY) as server:
        monkeypatch.setenv("MISTRAL_API_KEY", KEY)
        monkeypatch.setenv("MISTRAL_SERVER_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("INDEXCHECK_QUIET", "1")
        yield server


def script_fixture(emu: MistralEmulator) -> None:
    """The emulator answers each fixture answer with its scripted reply."""
    for answer, (_, reply) in scripted_replies().items():
        emu.chat.when(answer, chat.reply_from_json(reply))


def run(args: list[str], tmp_path: Path) -> tuple[int, dict[str, Any], Any]:
    out = tmp_path / "judge.json"
    if out.exists():
        out.unlink()
    r = CliRunner().invoke(cli, ["judge", *args, "--json", str(out)])
    data = json.loads(out.read_text(), parse_constant=_no_nan) if out.exists() else {}
    return r.exit_code, data, r


def _no_nan(name: str) -> float:
    raise AssertionError(f"{name} in the JSON output")


def assert_fixture_outcome(data: dict[str, Any]) -> None:
    got = {
        a["id"]: {
            "status": a["status"],
            "groundedness": a["groundedness"],
            "claims": [{k: c[k] for k in CLAIM_KEYS} for c in a["claims"]],
        }
        for a in data["answers"]
    }
    assert got == EXPECTED["answers"]
    assert data["counts"] == EXPECTED["counts"]
    assert data["statuses"] == EXPECTED["statuses"]
    assert data["unjudged"] == ["j07"]
    j07 = next(a for a in data["answers"] if a["id"] == "j07")
    assert j07["raw_reply"] == scripted_replies()[_answer_of("j07")][1]
    assert "not valid JSON" in j07["problem"]
    rate = data["supported_rate"]
    assert (rate["k"], rate["n"]) == (7, 11) and 0 < rate["low"] < rate["value"] < rate["high"] < 1


def _answer_of(aid: str) -> str:
    return next(a for a, (i, _) in scripted_replies().items() if i == aid)


@pytest.mark.parametrize("kind", ["mistral", "openai", "py"])
def test_fixture_case_comes_out_as_planned(kind: str, emu: MistralEmulator, tmp_path: Path) -> None:
    script_fixture(emu)
    spec = {
        "mistral": "mistral:mistral-small-latest",
        "openai": f"openai:{emu.url}/v1?model=qwen2.5-7b-instruct",
        "py": PY_JUDGE,
    }[kind]
    code, data, r = run(["--answers", str(ANSWERS), "--judge", spec], tmp_path)
    assert code == 1, r.output  # unsupported claims and one UNJUDGED answer
    assert_fixture_outcome(data)
    stats = data["manifest"]["judging"]
    # 5 answers asked once, j07 asked once and repaired twice; the refusal costs nothing
    assert stats["requests"] == 8 and stats["repairs"] == 2 and stats["judged"] == 6
    assert data["manifest"]["prompt"]["version"] == data["prompt_version"]
    if kind != "py":
        assert len(emu.chat.requests) == 8 and stats["tokens"] > 0
        first = emu.chat.requests[0]
        assert first["temperature"] == 0 and first["response_format"] == {"type": "json_object"}
        repair = [q for q in emu.chat.requests if len(q["messages"]) == 4]
        assert len(repair) == 1 and "not valid JSON" in repair[0]["messages"][3]["content"]
        assert all(h["headers"]["authorization"] == f"Bearer {KEY}" for h in emu.requests)
    assert "UNJUDGED" in r.output and "j07" in r.output


def one_answer(tmp_path: Path, answer: str = "Teens can borrow up to 20 items.") -> Path:
    row = json.loads(ANSWERS.read_text().splitlines()[1])  # j02: the teen card limit
    row["answer"] = answer
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path


SUPPORTED = {
    "claims": [
        {
            "claim": "Teens can borrow up to 20 items.",
            "verdict": "SUPPORTED",
            "evidence_span": "Teen cards can borrow up to 20 items",
            "rationale": "r",
        }
    ]
}


def test_malformed_then_repaired_reply_is_judged(emu: MistralEmulator, tmp_path: Path) -> None:
    emu.chat.queue(chat.text("{'claims': oops"), chat.truncated(SUPPORTED), chat.valid(SUPPORTED))
    code, data, _ = run(["--answers", str(one_answer(tmp_path)), "--judge", "mistral:m"], tmp_path)
    assert code == 0
    (a,) = data["answers"]
    assert a["status"] == "JUDGED" and a["groundedness"] == 1.0
    assert data["manifest"]["judging"]["repairs"] == 2
    assert len(emu.chat.requests[2]["messages"]) == 6  # two repair rounds in the conversation


def test_unparseable_reply_is_unjudged_and_fails_unless_allowed(
    emu: MistralEmulator, tmp_path: Path
) -> None:
    emu.chat.default = chat.text("I think it is mostly fine.")
    answers = one_answer(tmp_path)
    code, data, _ = run(
        ["--answers", str(answers), "--judge", "mistral:m", "--retries", "1"], tmp_path
    )
    assert code == 1
    (a,) = data["answers"]
    assert a["status"] == "UNJUDGED" and a["groundedness"] is None and a["claims"] == []
    assert a["raw_reply"] == "I think it is mostly fine."
    assert data["supported_rate"]["value"] is None and data["unjudged"] == [a["id"]]
    code, data, _ = run(
        ["--answers", str(answers), "--judge", "mistral:m", "--retries", "1", "--allow-unjudged"],
        tmp_path,
    )
    assert code == 0 and data["unjudged"] == [a["id"]]


def test_fabricated_span_and_added_number(emu: MistralEmulator, tmp_path: Path) -> None:
    reply = {"claims": [
        {"claim": "Teens can borrow up to 20 items.", "verdict": "SUPPORTED",
         "evidence_span": "Teen cards can borrow up to 25 items", "rationale": "r"},
        {"claim": "Teens can place 12 holds.", "verdict": "SUPPORTED",
         "evidence_span": "Teen cards can borrow up to 20 items", "rationale": "r"},
    ]}  # fmt: skip
    emu.chat.queue(chat.valid(reply))
    answers = one_answer(tmp_path, "Teens can borrow up to 20 items and place holds.")
    code, data, _ = run(["--answers", str(answers), "--judge", "mistral:m"], tmp_path)
    assert code == 1
    fabricated, added = data["answers"][0]["claims"]
    assert fabricated["span_found"] is False and fabricated["verdict"] == "UNSUPPORTED"
    assert fabricated["judge_verdict"] == "SUPPORTED" and fabricated["supported_by"] == []
    assert added["span_found"] is True and added["verdict"] == "UNSUPPORTED"
    assert added["numbers_unsupported"] == ["12"] and added["numbers_not_in_answer"] == ["12"]
    assert data["answers"][0]["groundedness"] == 0.0


def test_rerun_with_cache_makes_no_judge_calls(emu: MistralEmulator, tmp_path: Path) -> None:
    script_fixture(emu)
    judged = tmp_path / "judged.jsonl"  # the fixture without j07, whose reply never parses
    judged.write_text(
        "".join(x + "\n" for x in ANSWERS.read_text().splitlines() if '"j07"' not in x)
    )
    cache = tmp_path / "cache.sqlite"
    args = ["--answers", str(judged), "--judge", "mistral:m", "--cache", str(cache)]
    _, first, _ = run(args, tmp_path)
    assert len(emu.chat.requests) == 5
    _, second, _ = run(args, tmp_path)
    assert len(emu.chat.requests) == 5  # the rerun made 0 judge calls
    stats = second["manifest"]["judging"]
    assert stats["cache_hits"] == 5 and stats["requests"] == 0 and stats["tokens"] == 0
    for a, b in zip(first["answers"], second["answers"], strict=True):
        assert a["claims"] == b["claims"] and a["status"] == b["status"]
    assert second["answers"][0]["cached"] is True
    # an UNJUDGED answer is never cached: a rerun asks again
    _, third, _ = run(
        ["--answers", str(ANSWERS), "--judge", "mistral:m", "--cache", str(cache)], tmp_path
    )
    assert third["manifest"]["judging"]["requests"] == 3 and len(emu.chat.requests) == 8


def test_cache_is_keyed_by_prompt_version(emu: MistralEmulator, tmp_path: Path) -> None:
    emu.chat.default = chat.valid(SUPPORTED)
    cache, answers = tmp_path / "c.sqlite", one_answer(tmp_path)
    run(["--answers", str(answers), "--judge", "mistral:m", "--cache", str(cache)], tmp_path)
    prompt = tmp_path / "p.md"
    prompt.write_text("Judge strictly. Reply with JSON claims.")
    _, data, _ = run(
        ["--answers", str(answers), "--judge", "mistral:m", "--cache", str(cache),
         "--prompt", str(prompt)], tmp_path)  # fmt: skip
    assert len(emu.chat.requests) == 2 and data["manifest"]["judging"]["cache_hits"] == 0
    assert emu.chat.requests[1]["messages"][0]["content"] == prompt.read_text()


@pytest.mark.parametrize("failure", ["auth", "rate_limit", "down"])
def test_unusable_judge_exits_3(
    failure: str, emu: MistralEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if failure == "auth":
        monkeypatch.setenv("MISTRAL_API_KEY", "wrong-key")
    elif failure == "rate_limit":
        emu.fail(429, times=None, retry_after=0)
    else:
        emu.fail(500, times=None, retry_after=0)
    code, data, r = run(["--answers", str(one_answer(tmp_path)), "--judge", "mistral:m"], tmp_path)
    assert code == 3, r.output
    # --json holds the failed result (issue 18 item 7), never a partial success
    assert (data["ok"], data["complete"], data["exit_code"]) == (False, False, 3)
    assert set(data) == {"schema_version", "ok", "complete", "command", "exit_code", "error"}
    assert "Traceback" not in r.output
    assert "wrong-key" not in r.stderr + json.dumps(data)
    expected = {"auth": "refused the API key", "rate_limit": "rate limited", "down": "HTTP 500"}
    assert expected[failure] in r.stderr


def test_openai_judge_exhausted_rate_limit_exits_3(emu: MistralEmulator, tmp_path: Path) -> None:
    emu.chat.queue(*[chat.status(429, retry_after=0)] * 10)
    spec = f"openai:{emu.url}/v1?model=m"
    code, _, r = run(["--answers", str(one_answer(tmp_path)), "--judge", spec], tmp_path)
    assert code == 3 and "rate limited" in r.stderr


def test_cut_http_body_is_retried(emu: MistralEmulator, tmp_path: Path) -> None:
    emu.chat.queue(chat.cut_body(SUPPORTED), chat.valid(SUPPORTED))
    code, data, r = run(["--answers", str(one_answer(tmp_path)), "--judge", "mistral:m"], tmp_path)
    assert code == 0, r.output
    assert data["manifest"]["judging"]["retries"] == 1


def test_bad_row_is_refused_with_its_line(tmp_path: Path) -> None:
    lines = ANSWERS.read_text().splitlines()
    bad = json.loads(lines[2])
    bad["contexts"] = [{"id": "x"}]  # no text
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([lines[0], lines[1], json.dumps(bad)]) + "\n")
    code, _, r = run(["--answers", str(path), "--judge", PY_JUDGE], tmp_path)
    assert code == 2 and "bad.jsonl line 3" in r.stderr and "contexts[0]" in r.stderr
    code, _, r = run(["--answers", str(ANSWERS), "--judge", "nope:x"], tmp_path)
    assert code == 2 and "unknown judge" in r.stderr
    code, _, r = run(["--answers", str(ANSWERS), "--judge", "openai:http://h/v1"], tmp_path)
    assert code == 2 and "?model=NAME" in r.stderr


def test_answers_from_csv_and_parquet_give_the_same_result(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(line) for line in ANSWERS.read_text().splitlines()]
    flat = [
        {**r, "contexts": json.dumps(r["contexts"]), "expected": json.dumps(r.get("expected", []))}
        for r in rows
    ]
    keys = ["id", "question", "answer", "contexts", "expected"]
    import csv

    with (tmp_path / "a.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, keys, extrasaction="ignore")
        w.writeheader()
        w.writerows(flat)
    pq.write_table(
        pa.Table.from_pylist([{k: r[k] for k in keys} for r in flat]), tmp_path / "a.parquet"
    )
    for name in ("a.csv", "a.parquet"):
        _, data, _ = run(["--answers", str(tmp_path / name), "--judge", PY_JUDGE], tmp_path)
        assert_fixture_outcome(data)


def test_groundedness_is_never_nan() -> None:
    from indexcheck.commands.judge import summarise

    result = summarise([], "py:x", "v", False)
    assert result.supported_rate["value"] is None and result.ok
    assert not any(isinstance(v, float) and math.isnan(v) for v in result.counts.values())


def test_labels_report_agreement(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    rows = [
        {"id": "j01", "claim": 0, "verdict": "SUPPORTED"},
        {"id": "j01", "claim": 1, "verdict": "UNSUPPORTED"},  # the human is stricter
        {"id": "j01", "claim": 2, "verdict": "SUPPORTED"},
        {"id": "j01", "claim": 3, "verdict": "UNSUPPORTED"},
        {"id": "j05", "claim": 0, "verdict": "CONTRADICTED"},
        {"id": "j02", "groundedness": 1.0},
        {"id": "j04", "groundedness": 1.0},
    ]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, data, _ = run(
        ["--answers", str(ANSWERS), "--judge", PY_JUDGE, "--labels", str(labels)], tmp_path
    )
    cal = data["calibration"]
    assert code == 1 and cal["claims_labelled"] == 5 and cal["agreement"] == pytest.approx(0.6)
    assert cal["confusion"]["labels"][0] == "SUPPORTED"
    assert cal["kappa"]["value"] is not None
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "j01", "claim": 0, "verdict": "MAYBE"}\n')
    code, _, r = run(
        ["--answers", str(ANSWERS), "--judge", PY_JUDGE, "--labels", str(bad)], tmp_path
    )
    assert code == 2 and "bad.jsonl line 1" in r.stderr
