"""diagnose --system: a real LangChain RAG pipeline (FAISS HNSW retriever, fetch-8 /
threshold / keep-4 assembly, a chat model behind the OpenAI-compatible loopback emulator),
with one planted case per intervention, each recovered by its intervention and not by the
control; the staged cache; the call budget (see tests/builders/rag_pipeline.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from tests.builders import rag_pipeline as rp
from tests.emulators.mistral_emulator import MistralEmulator
from tests.emulators.rag_generator import RagGenerator

KEY = "sk-rag-test-71a0"
SYSTEM = "py:tests.builders.rag_pipeline:APP"


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    spec = rp.build_index(tmp_path / "kb")
    with MistralEmulator(api_key=KEY) as emu:
        emu.chat = RagGenerator(rp.generator_script())
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("RAG_CHAT_URL", f"{emu.url}/v1")
        monkeypatch.setenv("RAG_MODEL", "rag-gen-1")
        monkeypatch.setenv("RAG_INDEX", str(tmp_path / "kb"))
        monkeypatch.setenv("INDEXCHECK_QUIET", "1")
        rp.APP.retrievals = 0
        yield {
            "emu": emu,
            "store": spec,
            "questions": rp.questions_file(tmp_path / "q.jsonl"),
            "cache": tmp_path / "cache.sqlite",
            "tmp": tmp_path,
        }


def diagnose(app: dict[str, Any], *extra: str) -> tuple[int, dict[str, Any], Any]:
    out = app["tmp"] / "diagnose.json"
    if out.exists():
        out.unlink()
    args = [
        "diagnose",
        "--system",
        SYSTEM,
        "--store",
        app["store"],
        "--trust-pickle",
        "--embedder",
        rp.EMBEDDER_SPEC,
        "--questions",
        str(app["questions"]),
        "--chunks",
        str(rp.CHUNKS),
        "--cache",
        str(app["cache"]),
        "--json",
        str(out),
        *extra,
    ]
    r = CliRunner().invoke(cli, args)
    data = json.loads(out.read_text()) if out.exists() else {}
    return r.exit_code, data, r


def labels(data: dict[str, Any]) -> dict[str, str]:
    return {q["id"]: q["label"] for q in data["questions"]}


def test_done_when_command_labels_every_planted_case(app: dict[str, Any]) -> None:
    report = app["tmp"] / "report"
    code, data, r = diagnose(
        app, "--runs", "3", "--intervene", "gold-context,fetch=20,exact", "--report", str(report)
    )
    assert code == 1, r.output
    assert "Implicated: approximate search" in (report / "diagnose.md").read_text()
    got = labels(data)
    assert got == {
        "ok": "OK",
        "ann": "ANN_MISS",
        "shift": "MISALIGNED",
        "budget": "CONTEXT_ASSEMBLY_LOSS",
        "gen": "GENERATION_REFUSED",
        "flaky": "FLAKY",
        "out": "REFUSED_OK",
    }
    q = {x["id"]: x for x in data["questions"]}
    assert q["ann"]["recovered_by"] == ["gold-context", "fetch=20", "exact"]
    assert q["ann"]["arms"]["control"] == [True, True, True]
    assert q["gen"]["arms"]["gold-context"] == [True, True, True]
    assert q["flaky"]["arms"]["control"] != [True, True, True]
    assert q["flaky"]["arms"]["gold-context"] is None  # flaky: no intervention paid for
    # upstream of generation: the gold context recovers, neither fetch nor exact
    assert q["budget"]["recovered_by"] == q["shift"]["recovered_by"] == ["gold-context"]
    assert q["ok"]["refusal_rate"]["value"] == 0.0 and q["gen"]["refusal_rate"]["value"] == 1.0
    assert 0 < q["gen"]["refusal_rate"]["low"] < 1 == q["gen"]["refusal_rate"]["high"]
    assert data["control"] == {"failing": 5, "recovered": 1}
    assert data["recovered"] == {"gold-context": 3, "fetch=20": 1, "exact": 1}
    rate = data["false_refusal_rate"]
    assert rate["k"] == 15 and rate["n"] == 18 and rate["low"] < rate["value"] < rate["high"]
    # the summary: control, "implicated" with counts, never "cause"; per-question intervals
    out = r.output
    assert "Control: 1 of 5 failing questions recovered" in out
    assert "Implicated: approximate search, in 1 of 5 failing questions" in out
    assert "recovered under fetch=20: 1; recovered under exact: 1" in out
    assert "Implicated: upstream of generation, in 3 of 5" in out
    assert "Implicated: generation, in 1 of 5" in out
    assert "candidate experiment" in out and "cause" not in out.lower()
    assert "100% [44%, 100%] (3/3)" in out
    assert q["flaky"]["flaky"] is True and q["gen"]["flaky"] is False
    assert data["cost"]["retrieve"]["calls"] >= 7 and data["cost"]["generate"]["calls"] > 0
    assert data["cost"]["generate"]["tokens"] > 0  # the app reports the emulator's usage
    assert data["manifest"]["cost"] == data["cost"]


def test_each_intervention_recovers_only_its_planted_case(app: dict[str, Any]) -> None:
    code, data, r = diagnose(
        app, "--intervene", "gold-context,fetch=20,exact,top-k=8,realigned,threshold=0.1"
    )
    assert code == 1, r.output
    q = {x["id"]: x for x in data["questions"]}
    assert q["ann"]["recovered_by"] == ["gold-context", "fetch=20", "exact"]
    assert q["budget"]["recovered_by"] == ["gold-context", "top-k=8"]
    assert q["shift"]["recovered_by"] == ["gold-context", "realigned"]
    assert q["gen"]["recovered_by"] == [] and q["flaky"]["recovered_by"] == []
    assert q["budget"]["label"] == "CONTEXT_ASSEMBLY_LOSS"
    assert q["shift"]["label"] == "MISALIGNED" and q["ann"]["label"] == "ANN_MISS"
    assert q["ann"]["arms"]["realigned"] is None  # check-index flagged none of its chunks


def test_no_filter_recovers_the_question_the_apps_filter_drops(app: dict[str, Any]) -> None:
    rp.questions_file(app["questions"], extra=("filtered",))
    code, data, r = diagnose(app, "--intervene", "no-filter,fetch=20,top-k=8")
    assert code == 1, r.output
    q = {x["id"]: x for x in data["questions"]}
    assert q["filtered"]["recovered_by"] == ["no-filter"]
    assert q["filtered"]["label"] == "NOT_RETRIEVED" and q["filtered"]["in_candidates"] is False
    others = [x["recovered_by"] for k, x in q.items() if k != "filtered"]
    assert all("no-filter" not in arms for arms in others)
    assert q["budget"]["recovered_by"] == ["top-k=8"] and q["ann"]["recovered_by"] == ["fetch=20"]


def test_threshold_recovers_the_question_under_the_apps_threshold(app: dict[str, Any]) -> None:
    rp.questions_file(app["questions"], extra=("faint",))
    code, data, r = diagnose(app, "--intervene", "threshold=0.3,top-k=8,fetch=20")
    assert code == 1, r.output
    q = {x["id"]: x for x in data["questions"]}
    assert q["faint"]["recovered_by"] == ["threshold=0.3"]
    assert q["faint"]["label"] == "BELOW_THRESHOLD" and q["faint"]["in_context"] is False
    assert q["budget"]["recovered_by"] == ["top-k=8"]  # its chunk passes 0.5 already
    assert "Implicated: the threshold, in 1 of 6 failing questions" in r.output


def test_changing_the_generator_reruns_no_retrieval(
    app: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, first, _ = diagnose(app, "--intervene", "gold-context,fetch=20")
    assert code == 1 and rp.APP.retrievals > 0
    asked = len(app["emu"].chat.requests)
    rp.APP.retrievals = 0
    code, again, _ = diagnose(app, "--intervene", "gold-context,fetch=20")
    assert rp.APP.retrievals == 0 and len(app["emu"].chat.requests) == asked  # all cached
    assert labels(again) == labels(first)
    assert set(again["cost"]) == {"assemble"}  # local replays only: nothing paid twice
    monkeypatch.setenv("RAG_MODEL", "rag-gen-2")  # only the generator changes
    code, _, r = diagnose(app, "--intervene", "gold-context,fetch=20")
    assert code == 1, r.output
    assert rp.APP.retrievals == 0 and "retrieve" not in _["cost"]
    assert len(app["emu"].chat.requests) > asked
    models = {b["model"] for b in app["emu"].chat.requests[asked:]}
    assert models == {"rag-gen-2"}


def test_budget_stops_with_exit_3_and_the_rerun_pays_nothing_twice(app: dict[str, Any]) -> None:
    emu = app["emu"]
    code, data, r = diagnose(app, "--budget-calls", "10", "--intervene", "gold-context")
    assert code == 3 and data["complete"] is False
    assert "--budget-calls 10 reached" in r.output and "resume" in r.output
    assert "(retrieve " in r.output and "generate " in r.output  # what was spent
    paid = rp.APP.retrievals + len(emu.chat.requests)
    assert 0 < paid <= 10
    code, resumed, r = diagnose(app, "--intervene", "gold-context")
    assert code == 1, r.output
    paid_after = rp.APP.retrievals + len(emu.chat.requests)
    # the same work from scratch, on a new cache and a fresh generator
    emu.chat = RagGenerator(rp.generator_script())
    rp.APP.retrievals = 0
    app["cache"] = app["tmp"] / "fresh.sqlite"
    code, fresh, _ = diagnose(app, "--intervene", "gold-context")
    assert code == 1
    assert paid_after == rp.APP.retrievals + len(emu.chat.requests)  # nothing paid twice
    assert labels(resumed) == labels(fresh)


def test_bad_intervention_is_one_line_exit_2(app: dict[str, Any]) -> None:
    code, _, r = diagnose(app, "--intervene", "gold-context,topk=8")
    assert code == 2
    assert "unknown intervention 'topk=8'" in r.output and "Traceback" not in r.output
    assert rp.APP.retrievals == 0


def test_plain_answer_hook_runs_and_refuses_interventions(app: dict[str, Any]) -> None:
    code, data, r = diagnose_with(app, "py:tests.builders.rag_pipeline:ANSWER_ONLY")
    assert code == 1, r.output
    got = labels(data)
    assert got["ok"] == "OK" and got["gen"] == "GENERATION_REFUSED" and got["flaky"] == "FLAKY"
    assert got["budget"] == "NOT_RETRIEVED"  # absent from the contexts answer() returned
    assert data["control"]["failing"] == 5 and set(data["cost"]) == {"answer"}
    code, _, r = diagnose_with(
        app, "py:tests.builders.rag_pipeline:ANSWER_ONLY", "--intervene", "gold-context"
    )
    assert code == 2 and "only answer()" in r.output and "Traceback" not in r.output


def test_library_function_with_the_app_object(app: dict[str, Any]) -> None:
    import indexcheck

    result = indexcheck.diagnose(
        app["store"],
        app["questions"],
        rp.CHUNKS,
        rp.EMBEDDER_SPEC,
        system=rp.APP,
        runs=2,
        intervene=["gold-context", "top-k=8"],
        cache=app["cache"],
        trust_pickle=True,
    )
    got = {q.id: q.label for q in result.questions}
    assert got["budget"] == "CONTEXT_ASSEMBLY_LOSS" and got["gen"] == "GENERATION_REFUSED"
    assert result.runs == 2 and result.manifest["cost"] == result.cost


def test_llamaindex_query_engine_adapter(
    app: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import indexcheck

    engine = rp.llamaindex_app()
    result = indexcheck.diagnose(
        app["store"],
        app["questions"],
        rp.CHUNKS,
        rp.EMBEDDER_SPEC,
        system=engine,
        runs=3,
        trust_pickle=True,
    )
    got = {q.id: q.label for q in result.questions}
    assert got["ok"] == "OK" and got["gen"] == "GENERATION_REFUSED"
    assert got["budget"] == "NOT_RETRIEVED" and got["out"] == "REFUSED_OK"
    assert result.cost["answer"]["calls"] == len(app["emu"].chat.requests)


@pytest.mark.parametrize(
    ("target", "needle"),
    [
        ("py:tests.builders.rag_pipeline:NOPE", "has no attribute 'NOPE'"),
        ("py:tests.builders.rag_pipeline:CORPUS", "neither retrieve()+generate() nor answer()"),
        ("tests.builders.rag_pipeline", "must be py:module:function"),
    ],
)
def test_bad_system_hook_is_one_line_exit_2(app: dict[str, Any], target: str, needle: str) -> None:
    code, _, r = diagnose_with(app, target)
    assert code == 2 and needle in r.output and "Traceback" not in r.output


def diagnose_with(app: dict[str, Any], target: str, *extra: str) -> tuple[int, dict[str, Any], Any]:
    global SYSTEM
    saved, SYSTEM = SYSTEM, target
    try:
        return diagnose(app, *extra)
    finally:
        SYSTEM = saved


@pytest.mark.parametrize("metric", ["cosine", "l2", "ip"])
def test_exact_and_realigned_scores_are_on_the_backends_scale(metric: str) -> None:
    """The app's threshold reads exact candidates: the streamed search (realigned) gives
    the backend's own scores, as its exact mode does."""
    import numpy as np

    from indexcheck.commands.diagnose.system import _Runner
    from indexcheck.commands.diagnose.system.hook import System
    from indexcheck.commands.diagnose.system.staged_cache import StagedCache
    from indexcheck.inputs.questions import Question
    from indexcheck.testing import HashEmbedder, MemoryStore

    class Stub:
        model_id = "stub"

        def retrieve(self, question: str, depth: int, filter: Any = None) -> list[Any]:
            return []

        def generate(self, question: str, context: Any) -> str:
            return "ok"

    ids = [f"c{i}" for i in range(40)]
    texts = [f"text number {i}" for i in range(40)]
    emb = HashEmbedder(16)
    vectors = emb.embed(texts)
    store = MemoryStore(ids, vectors, texts, metric=metric)
    run = _Runner(
        System(Stub(), "stub"),
        StagedCache(),
        "fp",
        5,
        1,
        store,
        emb,
        dict(zip(ids, texts, strict=True)),
    )
    q = Question("q", "text number 3", ["c3"])
    backend = run.exact(q)
    local = run.exact(q, swap={"c0": vectors[0]})  # a no-op swap forces the streamed path
    assert [c.id for c in local] == [c.id for c in backend] and backend[0].id == "c3"
    assert np.allclose([c.score for c in local], [c.score for c in backend], atol=1e-5)


def test_options_of_system_need_system(app: dict[str, Any]) -> None:
    out = app["tmp"] / "d.json"
    args = ["diagnose", "--store", app["store"], "--trust-pickle", "--embedder", rp.EMBEDDER_SPEC]
    args += ["--questions", str(app["questions"]), "--json", str(out), "--intervene", "exact"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2 and "--intervene needs --system" in r.output


def test_a_generator_that_fails_midway_exits_3_and_the_rerun_resumes(
    app: dict[str, Any],
) -> None:
    from tests.emulators import chat

    emu = app["emu"]
    script = emu.chat
    original = script._pick
    served = {"n": 0}

    def failing_after_ten(body: dict[str, Any]) -> Any:
        served["n"] += 1
        return chat.status(400) if served["n"] > 10 else original(body)

    script._pick = failing_after_ten  # type: ignore[method-assign]
    code, data, r = diagnose(app, "--intervene", "gold-context")
    assert code == 3 and data["complete"] is False
    (line,) = [x for x in r.output.splitlines() if x.strip()]
    assert "system's generate() raised" in line and "rerun to resume" in line
    script._pick = original  # type: ignore[method-assign]
    before = len(script.requests)
    code, data, r = diagnose(app, "--intervene", "gold-context")
    assert code == 1, r.output
    assert data["cost"]["generate"]["calls"] == len(script.requests) - before
    assert rp.APP.retrievals == len(rp.PLANTED)  # each question retrieved once, over both runs


class _Hostile:
    model_id = "hostile"

    def __init__(self, retrieved: Any = (), answer: Any = "fine") -> None:
        self.retrieved, self.reply = retrieved, answer

    def retrieve(self, question: str, depth: int, filter: Any = None) -> Any:
        return self.retrieved

    def generate(self, question: str, context: Any) -> Any:
        return self.reply


RETURNS_NONE = _Hostile(retrieved=None)
NO_IDS = _Hostile(retrieved=[{"text": "a passage", "score": 0.9}])
NONE_ANSWER = _Hostile(answer=None)


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("RETURNS_NONE", "retrieve() returned NoneType; it must return a list"),
        ("NO_IDS", "a candidate from the --system hook has no id"),
        ("NONE_ANSWER", "returned None for an answer"),
    ],
)
def test_a_hook_breaking_the_contract_is_one_line_exit_2(
    app: dict[str, Any], name: str, needle: str
) -> None:
    code, _, r = diagnose_with(app, f"py:tests.commands.diagnose.system.test_system:{name}")
    assert code == 2 and needle in r.output and "Traceback" not in r.output
