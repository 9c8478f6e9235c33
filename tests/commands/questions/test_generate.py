"""questions generate: the scripted generator through py:, mistral: and openai: (emulator),
each quality gate removing exactly the planted faults, the dry run's call count, the budget
cap, a corpus too uniform for multi-hop, and the generated set driving sweep-threshold and
diagnose on the fixture KB."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.commands.questions import gates
from tests.emulators import generator_script as gs
from tests.emulators.mistral_emulator import MistralEmulator

ROOT = Path(__file__).resolve().parents[3]
CHUNKS = ROOT / "fixtures" / "chunks.jsonl"
PY_GEN = "py:tests.emulators.generator_script:py_generator"
KEY = "sk-generator-test-9d2a"
BASE = ["--chunks", str(CHUNKS), "--n", "12", "--oos", "6", "--seed", "0"]


@pytest.fixture
def emu(monkeypatch: pytest.MonkeyPatch) -> Iterator[MistralEmulator]:
    with MistralEmulator(api_key=KEY) as server:
        monkeypatch.setenv("MISTRAL_API_KEY", KEY)
        monkeypatch.setenv("MISTRAL_SERVER_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("INDEXCHECK_QUIET", "1")
        yield server


@pytest.fixture(autouse=True)
def _fresh_script() -> Iterator[None]:
    gs.SCRIPT = None
    gs.CALLS.clear()
    yield
    gs.SCRIPT = None


def run(args: list[str], tmp_path: Path, name: str = "gen") -> tuple[int, dict[str, Any], Any]:
    out = tmp_path / f"{name}.json"
    r = CliRunner().invoke(cli, ["questions", "generate", *args, "--json", str(out)])
    data = json.loads(out.read_text()) if out.exists() else {}
    return r.exit_code, data, r


def read_set(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def planned_chunks(tmp_path: Path, spec: str = PY_GEN) -> tuple[list[str], int]:
    plan, calls, _ = dry_plan(tmp_path, spec)
    return plan, calls


def dry_plan(tmp_path: Path, spec: str) -> tuple[list[str], int, dict[str, Any]]:
    code, dry, r = run(
        [*BASE, "--generator", spec, "--out", str(tmp_path / "q.jsonl"), "--dry-run"],
        tmp_path,
        "dry",
    )
    assert code == 0, r.output
    assert "dry run: 16 calls" in r.output and "No call was made" in r.output
    assert not (tmp_path / "q.jsonl").exists()
    return dry["plan"]["single_hop_chunks"], dry["plan"]["calls"], dry["plan"]


def planted(chunks: list[str]) -> gs.GeneratorScript:
    return gs.fixture_script(
        malformed_once={chunks[0]},
        malformed_always={chunks[1]},
        duplicate={chunks[3]: chunks[2]},
        verbatim={chunks[4]},
        unretrievable={chunks[5]},
    )


@pytest.mark.parametrize("kind", ["py", "mistral", "openai"])
def test_each_gate_removes_exactly_the_planted_faults(
    kind: str, emu: MistralEmulator, tmp_path: Path
) -> None:
    spec = {
        "py": PY_GEN,
        "mistral": "mistral:mistral-small-latest",
        "openai": f"openai:{emu.url}/v1?model=qwen2.5-7b-instruct",
    }[kind]
    chunks, dry_calls, dry = dry_plan(tmp_path, spec)
    assert emu.chat.requests == [] and gs.CALLS == []  # the dry run made no call
    script = planted(chunks)
    if kind == "py":
        gs.SCRIPT = script
    else:
        emu.chat = gs.ScriptedChat(script)
    out = tmp_path / "q.jsonl"
    code, data, r = run([*BASE, "--generator", spec, "--out", str(out)], tmp_path)
    assert code == 0, r.output
    ids = {q["id"]: q for q in read_set(out)}
    slot = {c: f"s{i + 1:03d}" for i, c in reversed(list(enumerate(chunks)))}
    dropped = {(d["gate"], d["id"]) for d in data["dropped"]}
    assert dropped == {
        ("malformed", slot[chunks[1]]),
        ("duplicate", slot[chunks[3]]),
        ("verbatim", slot[chunks[4]]),
        ("not-retrieved", slot[chunks[5]]),
        ("answered-by-kb", "o01-2"),
    }
    assert data["drops"] == {
        "malformed": 1,
        "verbatim": 1,
        "duplicate": 1,
        "not-retrieved": 1,
        "unverified": 0,
        "answered-by-kb": 1,
        "budget": 0,
    }
    # the once-malformed reply was repaired and kept; the dry run's count is the real one
    assert slot[chunks[0]] in ids
    calls = data["calls"]
    assert calls["calls"] == dry_calls == 16 and calls["repairs"] == 1 + 2
    if kind != "py":
        assert len(emu.chat.requests) == calls["requests"] == 19
        assert 0 < calls["generator"]["tokens"] <= dry["tokens_upper_bound"]
        repair = [b for b in emu.chat.requests if len(b["messages"]) == 4]
        assert len(repair) == 2 and "not valid JSON" in repair[0]["messages"][3]["content"]
    # the not-retrieved drop is reported as a finding, with its question
    assert [f["id"] for f in data["not_retrieved"]] == [slot[chunks[5]]]
    assert "not retrieved" in r.output and "a finding about the index" in r.output
    assert (
        "dropped per gate: malformed 1, verbatim 1, unverified 0, answered-by-kb 1, duplicate 1"
        in r.output
    )
    # in-scope rows: expected = their chunk(s), paraphrase levels, provenance
    ins = [q for q in ids.values() if q.get("in_scope", True)]
    assert {q["paraphrase"] for q in ins} == set(gs.LEADS)
    multi = [q for q in ins if q["kind"] == "multi-hop"]
    assert len(multi) == 3 and all(len(q["expected"]) == 2 for q in multi)
    single = next(q for q in ins if q["kind"] == "single-hop")
    assert single["source"][0]["id"] == single["expected"][0]
    assert len(single["source"][0]["hash"]) == 32 and single["seed"] == 0
    assert single["prompt_version"] == data["prompt_versions"]["questions_v1.md"]
    assert single["generator"] == data["generator"]
    # out-of-scope rows: verified, with evidence; the tax question is a refusal chunk's
    oos = {q["question"]: q for q in ids.values() if q.get("in_scope") is False}
    assert gs.FIXTURE_OOS[1] not in oos and len(oos) == 5
    tax = oos["Can you help me fill in my tax return?"]
    assert tax["refusal_expected"] is True
    assert tax["evidence"]["top"][0]["id"] == "accounts-and-fees#topic-not-covered-tax-preparation"
    assert tax["evidence"]["verdict"] == "not answered" and tax["evidence"]["top"][0]["cosine"] > 0
    assert sum(q["refusal_expected"] for q in oos.values()) == 1
    side = json.loads((tmp_path / "q.jsonl.manifest.json").read_text())
    assert side["prompts"] == data["prompt_versions"] and side["seed"] == 0
    assert side["drops"] == data["drops"] and side["corpus"]["chunks"] == 160


def test_unusable_verification_drops_every_candidate(tmp_path: Path) -> None:
    gs.SCRIPT = gs.fixture_script(verify_malformed=True)
    out = tmp_path / "q.jsonl"
    code, data, r = run(
        [
            "--chunks",
            str(CHUNKS),
            "--n",
            "2",
            "--oos",
            "5",
            "--multi-hop",
            "0",
            "--retries",
            "1",
            "--generator",
            PY_GEN,
            "--out",
            str(out),
        ],
        tmp_path,
    )
    assert code == 0, r.output
    assert data["drops"]["unverified"] == 5 and data["calls"]["repairs"] == 1
    assert all(q.get("in_scope", True) for q in read_set(out))


def test_budget_cap_stops_writes_what_was_done_and_exits_3(tmp_path: Path) -> None:
    gs.SCRIPT = gs.fixture_script(malformed_always=set())
    out = tmp_path / "q.jsonl"
    code, data, r = run(
        [*BASE, "--generator", PY_GEN, "--out", str(out), "--budget-calls", "5"], tmp_path
    )
    assert code == 3, r.output
    assert data["complete"] is False and data["exit_code"] == 3
    assert "--budget-calls 5 reached" in data["error"] and "5 questions written" in data["error"]
    side = json.loads((tmp_path / "q.jsonl.manifest.json").read_text())
    assert side["complete"] is False and side["calls"]["requests"] == 5
    assert len(read_set(out)) == 5 and side["drops"]["budget"] == 16 - 5
    assert "STOPPED" in r.output and "--budget-calls 5 reached" in r.output


def test_budget_reached_inside_a_repair_counts_the_lost_call(tmp_path: Path) -> None:
    chunks, _ = planned_chunks(tmp_path)
    gs.SCRIPT = gs.fixture_script(malformed_always={chunks[0]})
    out = tmp_path / "q.jsonl"
    code, data, r = run(
        [*BASE, "--generator", PY_GEN, "--out", str(out), "--budget-calls", "2"], tmp_path
    )
    assert code == 3, r.output
    assert "nothing written" in data["error"] and not out.exists()
    assert "budget 16" in r.output  # 15 calls never made + the one cut off before its repair


def test_chunks_read_from_a_store_that_keeps_texts(
    fixture_kb: dict[str, Any], tmp_path: Path
) -> None:
    gs.SCRIPT = gs.fixture_script()
    out = tmp_path / "q.jsonl"
    code, data, r = run(
        [
            "--store",
            f"faiss:{fixture_kb['faiss']}",
            "--n",
            "3",
            "--oos",
            "0",
            "--multi-hop",
            "0",
            "--generator",
            PY_GEN,
            "--out",
            str(out),
        ],
        tmp_path,
    )
    assert code == 0, r.output
    got = read_set(out)
    assert len(got) == 3 and data["corpus"]["chunks"] == 160
    assert {q["expected"][0] for q in got} <= set(fixture_kb["corpus"].ids)


def test_uniform_corpus_gets_a_statement_and_single_hop_questions(tmp_path: Path) -> None:
    chunks = tmp_path / "chunks.jsonl"
    rows = [{"id": "hours", "text": "Opening hours\n\nThe library opens at 9 and closes at 5."}]
    chunks.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "q.jsonl"
    code, data, r = run(
        [
            "--chunks",
            str(chunks),
            "--n",
            "3",
            "--oos",
            "0",
            "--multi-hop",
            "0.5",
            "--generator",
            PY_GEN,
            "--out",
            str(out),
            "--dedupe",
            "0.999",
        ],
        tmp_path,
    )
    assert code == 0, r.output
    assert "multi-hop: none" in r.output and "single-hop questions are asked instead" in r.output
    got = read_set(out)
    assert got and all(q["kind"] == "single-hop" for q in got)
    # two near-identical chunks: linked pairs would be near-duplicates, so none is made
    rows.append(
        {"id": "hours-2", "text": "Opening hours\n\nThe library opens at 9 and closes at 5!"}
    )
    chunks.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, data, r = run(
        [
            "--chunks",
            str(chunks),
            "--n",
            "2",
            "--oos",
            "0",
            "--multi-hop",
            "0.5",
            "--generator",
            PY_GEN,
            "--out",
            str(out),
        ],
        tmp_path,
    )
    assert code == 0, r.output
    assert "too few or too uniform" in data["multi_hop_note"]
    assert all(q["kind"] == "single-hop" for q in read_set(out))


def test_rerun_with_cache_makes_no_calls(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    args = [*BASE, "--generator", PY_GEN, "--cache", str(cache)]
    code, first, r = run([*args, "--out", str(tmp_path / "a.jsonl")], tmp_path, "a")
    assert code == 0 and first["calls"]["calls"] == 16, r.output
    code, second, r = run([*args, "--out", str(tmp_path / "b.jsonl")], tmp_path, "b")
    assert code == 0 and second["calls"]["calls"] == 0 and second["calls"]["cache_hits"] == 16
    assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--n", "3"], "needs --chunks FILE or --store SPEC"),
        (["--chunks", str(CHUNKS), "--n", "0", "--oos", "0"], "ask for at least one question"),
        (["--chunks", str(CHUNKS), "--refusal-pattern", "("], "--refusal-pattern"),
    ],
)
def test_bad_input_exits_2_before_any_call(args: list[str], message: str, tmp_path: Path) -> None:
    code, _, r = run([*args, "--generator", PY_GEN, "--out", str(tmp_path / "q.jsonl")], tmp_path)
    assert code == 2 and message in r.output
    assert gs.CALLS == []


def test_generated_set_drives_sweep_threshold_and_diagnose(
    fixture_kb: dict[str, Any], tmp_path: Path
) -> None:
    import indexcheck

    out = tmp_path / "q.jsonl"
    result = indexcheck.generate_questions(CHUNKS, PY_GEN, out=out, n=12, oos=10, seed=1)
    assert result.ok and result.drops["answered-by-kb"] == 1
    store = f"faiss:{fixture_kb['faiss']}"
    runner = CliRunner()
    sweep = tmp_path / "sweep.json"
    r = runner.invoke(
        cli,
        [
            "sweep-threshold",
            "--store",
            store,
            "--questions",
            str(out),
            "--chunks",
            str(CHUNKS),
            "--json",
            str(sweep),
        ],
    )
    assert r.exit_code in (0, 1), r.output
    data = json.loads(sweep.read_text())
    assert data["recommended_threshold"] is not None, r.output
    assert (data["in_scope"], data["out_of_scope"]) == (
        result.counts["in_scope"],
        result.counts["out_of_scope"],
    )
    # the question marked refusal_expected is the one the KB's refusal chunk handles
    marked = [q["id"] for q in result.questions if q.get("refusal_expected")]
    assert marked and data["handled_by_content"] == marked
    diag = tmp_path / "diag.json"
    r = runner.invoke(
        cli,
        [
            "diagnose",
            "--store",
            store,
            "--questions",
            str(out),
            "--chunks",
            str(CHUNKS),
            "--json",
            str(diag),
        ],
    )
    assert r.exit_code in (0, 1), r.output
    labels = json.loads(diag.read_text())["questions"]
    assert len(labels) == len(result.questions)


def test_quote_share_and_near_duplicates_units() -> None:
    passage = "Teen cards can borrow up to 20 items at a time from any branch."
    assert gates.quote_share("Teen cards can borrow up to 20 items?", [passage]) == 1.0
    share = gates.quote_share("How many things may a teenager take out at once?", [passage])
    assert share == pytest.approx(1 / 10)  # "at" is the longest run: 1 of 10 words
    v = np.array([[1, 0], [0.99, 0.01], [0, 1]], dtype=np.float32)
    got = gates.near_duplicates(v, 0.95)
    assert got[0] is None and got[1] is not None and got[1][0] == 0 and got[2] is None
    assert gates.entities("Title\n\nVisit Harbor City on Monday. Bring ID.") == {"Harbor City"}


def test_unknown_generator_spec_names_its_option(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        cli,
        [
            "questions",
            "generate",
            "--chunks",
            str(CHUNKS),
            "--generator",
            "nope:x",
            "--out",
            str(tmp_path / "q.jsonl"),
        ],
    )
    assert r.exit_code == 2 and "error: --generator: unknown judge 'nope:x'" in r.output


def test_link_pairs_by_cosine_band_then_by_shared_names() -> None:
    v = np.array([[1, 0, 0], [0.8, 0.6, 0], [0.999, 0.04, 0], [0, 0, 1]], dtype=np.float32)
    names = [{"Harbor City", "Readmobile"}, set(), set(), {"Harbor City", "Readmobile"}]
    got = gates.link_pairs(
        v, [0, 3], [0, 1, 2, 3], 2, link_min=0.5, link_max=0.95, entity_sets=names
    )
    # chunk 2 is a near-duplicate of 0 (no second hop): 0 links to 1 by cosine; 3 has no
    # neighbour in the band, so it links to 0 by the names they share
    assert got[0][:2] == (0, 1) and got[0][2] == {"by": "embedding", "cosine": 0.8}
    assert got[1][:2] == (3, 0) and got[1][2] == {
        "by": "entities",
        "shared": ["Harbor City", "Readmobile"],
    }
    assert gates.link_pairs(v, [3], [0, 1, 2, 3], 1, link_min=0.5, link_max=0.95) == []
