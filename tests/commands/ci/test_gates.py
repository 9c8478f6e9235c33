"""indexcheck ci: gates, the non-inferiority rule against a baseline, exit codes and JUnit."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from indexcheck.api import run_ci
from indexcheck.cli.app import cli
from indexcheck.cli.ci import ci_cmd
from indexcheck.commands.ci import (
    BLOCK,
    INSUFFICIENT,
    PASS,
    CiConfig,
    baseline_outcomes,
    compare_with_baseline,
    decide,
)
from indexcheck.errors import BackendUnavailableError
from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.testing import HashEmbedder, positional_cache_bug

if "ci" not in cli.commands:
    cli.add_command(ci_cmd)

N = 60
DUP_AT, DUP_OF = 25, 3  # chunk 25 repeats chunk 3: the positional cache shifts 26..59


@pytest.fixture(autouse=True)
def _scale_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("INDEXCHECK_QUIET", "1")


def make_kb(root: Path, n_questions: int = N) -> dict[str, Path]:
    """A 60-chunk KB embedded with HASH32: a correct FAISS index, one rebuilt with the
    positional-cache bug, chunks.jsonl, and questions whose text is their chunk's text
    (so the correct index ranks the expected chunk first) plus 3 out-of-scope ones."""
    ids = [f"doc{i // 20}#s{i:02d}" for i in range(N)]
    texts = [f"Chunk {i} states fact {i} about topic {i % 7}." for i in range(N)]
    texts[DUP_AT] = texts[DUP_OF]
    fresh = HashEmbedder(32).embed(texts)
    write_faiss_folder(root / "good", ids, fresh, texts)
    write_faiss_folder(root / "regressed", ids, positional_cache_bug(texts, fresh), texts)
    chunks = root / "chunks.jsonl"
    pairs = zip(ids, texts, strict=True)
    chunks.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in pairs))
    rows = [
        {"id": f"q{i:02d}", "question": texts[i], "expected": [ids[i]], "topic": f"doc{i // 20}"}
        for i in range(N)
        if i not in (DUP_OF, DUP_AT)
    ][:n_questions]
    rows += [
        {"id": f"out{j}", "question": f"unrelated question {j}", "in_scope": False}
        for j in range(3)
    ]
    questions = root / "questions.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return {"root": root, "good": root / "good", "regressed": root / "regressed",
            "chunks": chunks, "questions": questions}  # fmt: skip


def write_config(
    kb: dict[str, Path], store: str = "good", *, extra: str = "", **tables: str
) -> Path:
    """indexcheck.toml with a [ci] table; ``tables`` replace the default check tables
    (a value of "" drops that table)."""
    default = {
        "check-index": "sample = 20",
        "probe-scale": 'expect = "dot"',
        "compare-ann": "queries = 40\nfetch = [4, 10]",
        "diagnose": f'questions = "{kb["questions"]}"\nthreshold = 0.9\n'
        'limits = ["hit_at_4 >= 0.9", "mrr >= 0.8", "answered_out_of_scope == 0"]',
    }
    default.update({k.replace("_", "-"): v for k, v in tables.items()})
    text = (
        f'[ci]\nstore = "faiss:{kb[store]}"\nembedder = "py:indexcheck.testing:HASH32"\n'
        f'chunks = "{kb["chunks"]}"\n{extra}\n'
    )
    for name, body in default.items():
        if body:
            text += f"\n[ci.{name}]\n{body}\n"
    path = kb["root"] / f"ci-{store}.toml"
    path.write_text(text)
    return path


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def junit(path: Path) -> tuple[ET.Element, list[ET.Element]]:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert len(suites) == 1
    return suites[0], suites[0].findall("testcase")


@pytest.fixture
def kb(tmp_path: Path) -> dict[str, Path]:
    return make_kb(tmp_path)


# -- the acceptance: identical rerun passes, planted regression blocks ------------


def test_identical_rerun_passes_against_its_own_baseline(kb: dict[str, Path]) -> None:
    cfg = write_config(kb, extra=f'cache = "{kb["root"] / "emb.sqlite"}"')
    base = kb["root"] / "baseline.json"
    code, out, err = run("ci", "--config", str(cfg), "--json", str(base))
    assert code == 0, out + err
    first = json.loads(base.read_text())
    assert first["verdict"] == PASS and first["ok"] is True
    assert set(first["checks"]) == {"check-index", "probe-scale", "compare-ann", "diagnose"}
    assert len(first["per_question"]["questions"]) == N - 2  # the in-scope ones

    assert first["manifest"]["embedding"]["requests"] > 0
    j, again = kb["root"] / "junit.xml", kb["root"] / "again.json"
    code, out, err = run(
        "ci", "--config", str(cfg), "--baseline", str(base), "--junit", str(j),
        "--json", str(again),
    )  # fmt: skip
    assert code == 0, out + err
    # the rerun embedded nothing but the cache audit's sample: every text came from the cache
    m = json.loads(again.read_text())["manifest"]
    assert m["embedding"]["texts"] == m["cache_audit"]["texts"] == m["cache_audit"]["sampled"]
    assert m["cache_audit"]["mismatched"] == 0 and m["cache_audit"]["sampled"] >= 3
    assert "PASS:" in out and "against the baseline (58 paired questions)" in out
    suite, cases = junit(j)
    assert suite.get("failures") == "0" and int(suite.get("tests", "0")) == len(cases) == 9
    assert not any(c.find("failure") is not None for c in cases)
    names = {c.get("name") for c in cases if c.get("classname") == "indexcheck.ci.baseline"}
    assert names == {
        "hit@4 non-inferior to baseline (margin 0.05)",
        "MRR non-inferior to baseline (margin 0.05)",
    }


def test_identical_rerun_has_zero_difference_with_zero_width(kb: dict[str, Path]) -> None:
    config = CiConfig.from_toml(write_config(kb, check_index="", compare_ann=""))
    first = run_ci(config).to_dict()
    again = run_ci(config, json.loads(json.dumps(first)))
    assert again.verdict == PASS
    for row in again.baseline["rows"]:
        assert (row["difference"], row["low"], row["high"]) == (0.0, 0.0, 0.0)
        assert row["verdict"] == PASS and row["n"] == N - 2
    assert again.baseline["regressions"] == [] and again.baseline["improvements"] == 0


def test_planted_regression_is_blocked_by_the_baseline(kb: dict[str, Path]) -> None:
    """A reindex with the positional-cache bug: only the baseline comparison is asked to
    catch it (its absolute limit is lenient, check-index is off)."""
    lenient = f'questions = "{kb["questions"]}"\nthreshold = 0.9\nlimits = ["hit_at_4 >= 0.3"]'
    base = kb["root"] / "baseline.json"
    good = write_config(kb, "good", check_index="", diagnose=lenient)
    assert run("ci", "--config", str(good), "--json", str(base))[0] == 0
    bad = write_config(kb, "regressed", check_index="", diagnose=lenient)
    out_json, j = kb["root"] / "now.json", kb["root"] / "junit.xml"
    code, out, err = run(
        "ci", "--config", str(bad), "--baseline", str(base), "--json", str(out_json),
        "--junit", str(j),
    )  # fmt: skip
    assert code == 1, out + err
    now = json.loads(out_json.read_text())
    assert now["verdict"] == BLOCK
    assert now["checks"]["diagnose"] == PASS and now["checks"]["baseline"] == BLOCK
    rows = {r["metric"]: r for r in now["baseline"]["rows"]}
    assert rows["hit_at_k"]["verdict"] == BLOCK
    assert rows["hit_at_k"]["high"] < -rows["hit_at_k"]["margin"]  # worse beyond noise
    assert rows["mrr"]["verdict"] == BLOCK
    lost = {q["id"] for q in now["baseline"]["regressions"]}
    assert "q26" in lost and "q00" not in lost  # the shift starts after the repeated text
    assert "q26: rank 1 -> " in out
    suite, cases = junit(j)
    failed = [c for c in cases if c.find("failure") is not None]
    assert {c.get("classname") for c in failed} == {"indexcheck.ci.baseline"}
    assert {c.find("failure").get("type") for c in failed} == {BLOCK}
    assert suite.get("failures") == str(len(failed)) == "2"


def test_tiny_question_set_says_insufficient_evidence(tmp_path: Path) -> None:
    kb = make_kb(tmp_path, n_questions=5)
    cfg = write_config(kb, check_index="", compare_ann="")
    base = kb["root"] / "baseline.json"
    code, out, _ = run("ci", "--config", str(cfg), "--json", str(base))
    assert code == 1  # the absolute limits on 5 questions cannot pass either
    first = json.loads(base.read_text())
    rates = [g for g in first["gates"] if g["metric"] in ("hit_at_4", "mrr")]
    assert {g["verdict"] for g in rates} == {INSUFFICIENT}
    j = kb["root"] / "junit.xml"
    code, out, _ = run("ci", "--config", str(cfg), "--baseline", str(base), "--junit", str(j))
    assert code == 1
    assert "INSUFFICIENT_EVIDENCE" in out
    _, cases = junit(j)
    base_cases = [c for c in cases if c.get("classname") == "indexcheck.ci.baseline"]
    assert [c.find("failure").get("type") for c in base_cases] == [INSUFFICIENT] * 2
    assert "need at least 30" in base_cases[0].find("failure").get("message")


# -- gates other than the baseline ---------------------------------------------------------


def test_declared_scale_that_is_not_the_stores_blocks(kb: dict[str, Path]) -> None:
    cfg = write_config(kb, probe_scale='expect = "(1+cos)/2"', check_index="", compare_ann="")
    code, out, _ = run("ci", "--config", str(cfg), "--json", "-")
    assert code == 1
    data = json.loads(out)  # --json -: JSON alone on stdout, the table on stderr
    row = next(g for g in data["gates"] if g["check"] == "probe-scale")
    assert (row["value"], row["limit"], row["verdict"]) == ("dot", "(1+cos)/2", BLOCK)


def test_check_index_gate_blocks_a_shifted_index(kb: dict[str, Path]) -> None:
    config = CiConfig.from_toml(
        write_config(kb, "regressed", check_index='sample = "all"', compare_ann="", diagnose="")
    )
    result = run_ci(config)
    assert result.verdict == BLOCK and result.checks["check-index"] == BLOCK
    metrics = {g.metric: g for g in result.gates}
    assert metrics["min_cosine"].verdict == BLOCK and metrics["min_cosine"].value < 0.5
    assert metrics["error_findings"].value >= 1
    assert result.results["check-index"]["checked"] == N
    config.check_index.sample = 1000  # larger than the corpus: every chunk, not an error
    again = run_ci(config)
    assert again.results["check-index"]["mode"] == "all" and again.verdict == BLOCK


def test_compare_ann_gate_reads_the_declared_depth(tmp_path: Path) -> None:
    """An IVF index searched with nprobe=1 misses best chunks at fetch 4; the gate on
    fetch 4 blocks while the same limit read at fetch 50 with re-ranking may differ."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((400, 16)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    write_faiss_folder(
        tmp_path / "ivf", [f"v{i}" for i in range(400)], x, index_factory="IVF16,Flat"
    )
    toml = tmp_path / "ann.toml"
    toml.write_text(
        f'[ci]\nstore = "faiss:{tmp_path / "ivf"}?nprobe=1"\n'
        "[ci.compare-ann]\nqueries = 60\nk = 4\nfetch = [4, 50]\nat-fetch = 4\n"
        'limits = ["best_miss_rate <= 0.01", "recall_at_4@50 >= 0.0", "recommended_fetch >= 1"]\n'
    )
    result = run_ci(CiConfig.from_toml(toml))
    rows = {g.metric: g for g in result.gates}
    assert rows["best_miss_rate"].verdict == BLOCK and rows["best_miss_rate"].value > 0.01
    assert rows["recall_at_4@50"].verdict == PASS
    ann = result.results["compare-ann"]
    assert [r["fetch"] for r in ann["by_fetch"]] == [4, 50]
    assert result.verdict == BLOCK


# -- the non-inferiority rule, exactly ----------------------------------------------------


def outcomes(hits: list[int], k: int = 4) -> dict[str, Any]:
    return {
        "k": k,
        "question_set": "x",
        "questions": [
            {"id": f"q{i}", "expected": [f"c{i}"], "label": "OK", "ann_rank": 0 if h else None,
             "hit_at_k": h, "reciprocal_rank": float(h)}
            for i, h in enumerate(hits)
        ],
    }  # fmt: skip


def judged(before: list[int], after: list[int], margin: float = 0.05, min_q: int = 30) -> dict:
    base = baseline_outcomes({"per_question": outcomes(before)})
    res = compare_with_baseline(outcomes(after), base, {"hit_at_k": margin}, min_q, seed=0)
    return res["rows"][0]


def test_rule_one_lost_question_is_not_proven_within_a_narrow_margin() -> None:
    before = [1] * 40
    after = [1] * 39 + [0]
    row = judged(before, after, margin=0.05)
    assert row["difference"] == pytest.approx(-1 / 40)
    assert row["low"] == pytest.approx(-0.075) and row["verdict"] == INSUFFICIENT
    assert judged(before, after, margin=0.1)["verdict"] == PASS  # equal within noise
    # the same single loss among 100 questions is within noise at the narrow margin
    assert judged([1] * 100, [1] * 99 + [0], margin=0.05)["verdict"] == PASS


def test_rule_observed_loss_beyond_the_margin_blocks() -> None:
    before = [1] * 60
    after = [1] * 56 + [0] * 4  # -6.7 points
    row = judged(before, after, margin=0.05)
    assert row["verdict"] == BLOCK and row["high"] >= -0.05  # blocked though not "proven"
    assert "loses more than the margin" in row["detail"]


def test_rule_needs_enough_questions_even_for_a_perfect_rerun() -> None:
    assert judged([1] * 29, [1] * 29)["verdict"] == INSUFFICIENT  # min_questions 30
    assert judged([1] * 30, [1] * 30)["verdict"] == PASS
    # a 1% margin needs 100 questions: one question alone would move hit@k by more
    row = judged([1] * 60, [1] * 60, margin=0.01)
    assert row["min_questions"] == 100 and row["verdict"] == INSUFFICIENT
    # a tiny set is insufficient even when everything was lost (the limits still block)
    assert judged([1] * 5, [0] * 5)["verdict"] == INSUFFICIENT


def test_decide_table() -> None:
    assert decide(None, None, 0, 0.05, 30) == INSUFFICIENT
    assert decide(-0.06, -0.2, 100, 0.05, 30) == BLOCK
    assert decide(0.0, -0.049, 100, 0.05, 30) == PASS
    assert decide(0.0, -0.05, 100, 0.05, 30) == INSUFFICIENT  # the bound must clear -margin
    assert decide(-0.02, -0.08, 100, 0.05, 30) == INSUFFICIENT


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 1), min_size=1, max_size=120),
    st.floats(0.01, 0.5),
    st.integers(1, 60),
)
def test_rule_properties(hits: list[int], margin: float, min_q: int) -> None:
    n_min = max(min_q, math.ceil(1 / margin - 1e-9))
    same = judged(hits, hits, margin, min_q)
    assert same["verdict"] == (PASS if len(hits) >= n_min else INSUFFICIENT)
    lost = judged(hits, [0] * len(hits), margin, min_q)
    assert lost["low"] <= lost["difference"] <= lost["high"]
    if len(hits) < n_min:
        assert lost["verdict"] == INSUFFICIENT
    elif sum(hits) / len(hits) > margin:
        assert lost["verdict"] == BLOCK
    else:
        assert lost["verdict"] in (PASS, INSUFFICIENT)


def test_a_diagnose_json_is_accepted_as_a_baseline() -> None:
    diag = {
        "k": 4,
        "metrics": {},
        "questions": [
            {"id": "a", "in_scope": True, "ann_rank": 0},
            {"id": "b", "in_scope": True, "ann_rank": 5},
            {"id": "c", "in_scope": True, "ann_rank": None},
            {"id": "o", "in_scope": False, "ann_rank": None},
        ],
    }
    got = baseline_outcomes(diag)
    assert got["k"] == 4 and set(got["questions"]) == {"a", "b", "c"}
    assert [got["questions"][i]["hit_at_k"] for i in "abc"] == [1.0, 0.0, 0.0]
    assert got["questions"]["b"]["reciprocal_rank"] == pytest.approx(1 / 6)


# -- configuration and input errors: exit 2 naming the key; exit 3 when it cannot finish ---


@pytest.mark.parametrize(
    ("tables", "extra", "needle"),
    [
        ({"compare_ann": "fetchh = [4]"}, "", "ci.compare-ann.fetchh is not a known key"),
        ({"diagnose": 'questions = "q.jsonl"\nlimits = ["hit_at_4 => 0.9"]'}, "",
         "ci.diagnose.limits has 'hit_at_4 => 0.9'"),
        ({"diagnose": 'questions = "q.jsonl"\nlimits = ["recall_at_5 >= 0.9"]'}, "",
         "recall_at_5 asks for k=5 but this check runs k=4"),
        ({"check_index": 'limits = ["hit_at_4 >= 0.9"]'}, "", "ci.check-index.limits"),
        ({"probe_scale": 'expect = "cos^3"'}, "", "ci.probe-scale.expect"),
        ({"compare_ann": "fetch = [2, 10]"}, "", "ci.compare-ann.fetch has depth 2"),
        ({"diagnose": "k = 4"}, "",
         "ci.diagnose.questions is required: the question set (JSONL or CSV) to gate on"),
        ({}, "seed = 1.5", "ci.seed must be an integer"),
        ({}, "[ci.non-inferiority]\nmargin = 0", "margin for hit_at_k must be in (0, 1)"),
        ({}, "[ci.non-inferiority]\nmargins = { ndcg = 0.1 }", "ci.non-inferiority.margins.ndcg"),
        ({"check_index": "", "probe_scale": "", "compare_ann": "", "diagnose": ""}, "",
         "configures no check"),
    ],
)  # fmt: skip
def test_bad_config_exits_2_naming_the_key(
    kb: dict[str, Path], tables: dict[str, str], extra: str, needle: str
) -> None:
    cfg = write_config(kb, extra=extra, **tables)
    code, out, err = run("ci", "--config", str(cfg))
    assert code == 2, out + err
    assert needle in err and err.startswith("error: ") and err.count("\n") == 1


def test_missing_ci_table_store_or_file_exit_2(kb: dict[str, Path]) -> None:
    cfg = kb["root"] / "other.toml"
    cfg.write_text('[defaults]\nstore = "faiss:x"\n')
    assert "has no [ci] table" in run("ci", "--config", str(cfg))[2]
    cfg.write_text("[ci]\n[ci.probe-scale]\n")
    code, _, err = run("ci", "--config", str(cfg))
    assert code == 2 and "no store; set ci.store" in err
    code, _, err = run("ci", "--config", str(kb["root"] / "absent.toml"))
    assert code == 2 and "does not exist" in err
    cfg.write_text("[ci\n")
    assert run("ci", "--config", str(cfg))[0] == 2


def test_store_from_defaults_and_group_level_config(kb: dict[str, Path]) -> None:
    cfg = kb["root"] / "shared.toml"
    cfg.write_text(
        f'[defaults]\nstore = "faiss:{kb["good"]}"\n\n[ci]\n[ci.probe-scale]\nexpect = "dot"\n'
    )
    code, out, err = run("--config", str(cfg), "ci")
    assert code == 0, out + err
    assert "PASS: 1 passed" in out


def test_baseline_errors_exit_2(kb: dict[str, Path]) -> None:
    cfg = write_config(kb, check_index="", compare_ann="")
    code, _, err = run("ci", "--config", str(cfg), "--baseline", str(kb["root"] / "nope.json"))
    assert code == 2 and "baseline" in err and "does not exist" in err
    junk = kb["root"] / "junk.json"
    junk.write_text('{"ok": true}')
    code, _, err = run("ci", "--config", str(cfg), "--baseline", str(junk))
    assert code == 2 and "holds no per-question outcomes" in err
    other_k = kb["root"] / "k5.json"
    other_k.write_text(json.dumps({"per_question": outcomes([1, 1], k=5)}))
    code, _, err = run("ci", "--config", str(cfg), "--baseline", str(other_k))
    assert code == 2 and "k=5" in err
    no_diag = write_config(kb, check_index="", compare_ann="", diagnose="")
    code, _, err = run("ci", "--config", str(no_diag), "--baseline", str(other_k))
    assert code == 2 and "add a [ci.diagnose] table" in err


def test_baseline_path_from_the_config(kb: dict[str, Path]) -> None:
    base = kb["root"] / "baseline.json"
    cfg = write_config(kb, check_index="", compare_ann="")
    assert run("ci", "--config", str(cfg), "--json", str(base))[0] == 0
    cfg = write_config(
        kb, check_index="", compare_ann="",
        extra=f'[ci.non-inferiority]\nbaseline = "{base}"\nmargins = {{ hit_at_4 = 0.1 }}',
    )  # fmt: skip
    result = json.loads(run("ci", "--config", str(cfg), "--json", "-")[1])
    margins = {r["metric"]: r["margin"] for r in result["baseline"]["rows"]}
    assert margins == {"hit_at_k": 0.1, "mrr": 0.05}
    assert result["baseline"]["path"] == str(base)


def test_backend_failure_exits_3(kb: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    def down(*_a: Any, **_k: Any) -> None:
        raise BackendUnavailableError("faiss: the index could not be read; retry")

    monkeypatch.setattr("indexcheck.commands.ci.run_ci", down)
    code, _, err = run("ci", "--config", str(write_config(kb)))
    assert code == 3 and err == "error: faiss: the index could not be read; retry\n"


def test_the_example_config_is_valid() -> None:
    root = Path(__file__).resolve().parents[3]
    cfg = CiConfig.from_toml(root / "examples" / "indexcheck.toml", env={})
    assert cfg.store == "faiss:reports/demo/good-index" and cfg.embedder == "minilm"
    assert cfg.check_index and cfg.probe_scale and cfg.compare_ann and cfg.diagnose
    assert cfg.probe_scale.expect == "dot" and cfg.compare_ann.at_fetch == 20
    assert [lim.text for lim in cfg.diagnose.limits][0] == "hit_at_4 >= 0.8"
    assert cfg.margins == {"hit_at_k": 0.05, "mrr": 0.05}


def test_baseline_from_another_embedder_is_refused_unless_allowed(kb: dict[str, Path]) -> None:
    """Two different systems are never compared by accident: a baseline measured with
    another embedding model is exit 2 before any check runs; --baseline-any-store compares
    anyway and says so."""
    cfg = write_config(kb, check_index="", compare_ann="")
    base = kb["root"] / "baseline.json"
    assert run("ci", "--config", str(cfg), "--json", str(base))[0] == 0
    foreign = json.loads(base.read_text())
    foreign["manifest"]["embedder"]["model_id"] = "mistral:mistral-embed"
    other = kb["root"] / "foreign.json"
    other.write_text(json.dumps(foreign))
    code, out, err = run("ci", "--config", str(cfg), "--baseline", str(other))
    assert code == 2 and "another system" in err and "--baseline-any-store" in err
    assert len(err.strip().splitlines()) == 1
    now = kb["root"] / "now.json"
    args = ("--baseline", str(other), "--baseline-any-store", "--json", str(now))
    code, out, err = run("ci", "--config", str(cfg), *args)
    assert code == 0, out + err
    assert "baseline from another system" in out
    (note,) = json.loads(now.read_text())["baseline_differences"]
    assert note.startswith("embedder 'mistral:mistral-embed' in the baseline, ")
