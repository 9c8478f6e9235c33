"""Issue 17, item 6: statements that were wrong or incomplete, each with a test that fails
on the old wording or logic.

- ci: a rate measured on too few questions whose 95% interval cannot reach the limit is
  BLOCK, not INSUFFICIENT_EVIDENCE (hit@4 = 0.000 [0, 0.149] against >= 0.9);
- sweep-threshold: a set with both populations is never told it needs both;
- the HTML diagnose table says how many questions it leaves out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from indexcheck.commands.ci import gates as ci_gates
from indexcheck.commands.ci.toml_table import Limit
from indexcheck.commands.kit.stats import wilson
from indexcheck.commands.kit.verdicts import Verdict
from tests.commands.ci.test_gates import make_kb, run, write_config


def limit(text: str) -> Limit:
    metric, op, value = text.split()
    return Limit(text, metric, op, float(value), metric.replace("_4", "_k"))


def test_an_interval_that_cannot_reach_the_limit_blocks() -> None:
    w = wilson(0, 22)  # the run of the issue: 0 hits in 22 questions
    assert w.high == pytest.approx(0.149, abs=5e-4)
    row = ci_gates.judge("diagnose", limit("hit_at_4 >= 0.9"), w.value, 22, 30, (w.low, w.high))
    assert row.verdict == Verdict.BLOCK
    assert "cannot reach >= 0.9" in row.detail and "[0, 0.1487]" in row.detail
    # an interval that reaches the limit is still undecided on too few questions
    w = wilson(20, 22)
    row = ci_gates.judge("diagnose", limit("hit_at_4 >= 0.9"), w.value, 22, 30, (w.low, w.high))
    assert row.verdict == Verdict.INSUFFICIENT_EVIDENCE
    # the other directions
    assert not ci_gates.can_reach(limit("best_miss_rate <= 0.01"), 0.2, 0.5)
    assert ci_gates.can_reach(limit("best_miss_rate <= 0.01"), 0.0, 0.5)
    assert not ci_gates.can_reach(limit("mrr == 1"), 0.2, 0.5)


def test_ci_blocks_a_hopeless_rate_on_a_small_question_set(tmp_path: Path) -> None:
    """22 questions whose expected chunk is not the one they quote: hit@4 near 0, and ci
    says BLOCK (with why), where it said INSUFFICIENT_EVIDENCE."""
    kb = make_kb(tmp_path)
    chunks = [json.loads(line) for line in kb["chunks"].read_text().splitlines()]
    rows = [
        {"id": f"q{i}", "question": chunks[i]["text"], "expected": [chunks[(i + 30) % 60]["id"]]}
        for i in range(22)
    ]
    kb["questions"].write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = write_config(kb, check_index="", compare_ann="", probe_scale="")
    out_json = tmp_path / "ci.json"
    code, out, err = run("ci", "--config", str(cfg), "--json", str(out_json))
    assert code == 1, out + err
    gates = {g["metric"]: g for g in json.loads(out_json.read_text())["gates"]}
    hit = gates["hit_at_4"]
    assert hit["value"] < 0.3
    assert hit["verdict"] == "BLOCK", hit
    assert "cannot reach >= 0.9" in hit["detail"]


def shifted_store(n: int = 30, dup_at: int = 5, dup_of: int = 2):
    """A MemoryStore built with the positional-cache bug (chunk dup_at repeats dup_of):
    every chunk after the repeat holds the next chunk's vector."""
    from indexcheck.testing import HashEmbedder, MemoryStore, positional_cache_bug

    ids = [f"c{i:02d}" for i in range(n)]
    texts = [f"Chunk {i} states fact {i}." for i in range(n)]
    texts[dup_at] = texts[dup_of]
    emb = HashEmbedder(32)
    store = MemoryStore(ids, positional_cache_bug(texts, emb.embed(texts)), texts)
    return store, emb, ids, texts


def test_sweep_on_a_shifted_index_says_why_separability_is_unknown() -> None:
    """Both populations are there; no in-scope question retrieves its chunk (each finds the
    chunk holding its own text's vector), so there is no in-scope score."""
    from indexcheck.commands.sweep_threshold import SweepThresholdSettings, sweep_threshold
    from indexcheck.inputs.questions import Question

    store, emb, ids, texts = shifted_store()
    qs = [Question(f"q{i}", texts[i], [ids[i]]) for i in range(10, 20)]
    qs += [Question(f"o{j}", f"unrelated question {j}", [], in_scope=False) for j in range(4)]
    settings = SweepThresholdSettings(store, qs, k=1, fetch=5, higher_is_better=True)
    r = sweep_threshold(settings, store, emb, qs)
    assert r.in_scope == 10 and r.out_of_scope == 4
    assert len(r.not_retrieved) == 10 and r.separable is None
    assert "needs both in-scope and out-of-scope" not in r.verdict, r.verdict
    assert "none of the 10 in-scope questions gets its expected chunk into the top k" in (r.verdict)
    # a set that really lacks one population is still told so
    only_in = sweep_threshold(settings, store, emb, qs[:10])
    assert "needs both in-scope and out-of-scope" in only_in.verdict


def test_html_diagnose_table_says_how_many_rows_it_leaves_out(tmp_path: Path) -> None:
    from indexcheck.commands.diagnose import DiagnoseSettings, diagnose
    from indexcheck.inputs.corpus import corpus_from_pairs
    from indexcheck.inputs.questions import Question
    from indexcheck.output.render.html import write_report

    store, emb, ids, texts = shifted_store(n=50)
    corpus = corpus_from_pairs(ids, texts, "chunks")
    qs = [Question(f"q{i}", texts[i], [ids[i]]) for i in range(10, 42)]
    res = diagnose(DiagnoseSettings(k=1, fetch=5), store, emb, qs, corpus)
    failing = [d for d in res.questions if d.label not in ("OK",)]
    assert len(failing) == 32
    write_report([res.to_dict()], tmp_path)
    html = (tmp_path / "report.html").read_text()
    assert "questions that did not end where they should (32; the first 20 shown, 12 more" in (html)
    table = html.split("12 more", 1)[1].split("</table>", 1)[0]
    assert table.count("<td>q") == 20


def test_terminal_diagnose_summary_says_how_many_it_leaves_out() -> None:
    from rich.console import Console

    from indexcheck.api import sections
    from indexcheck.commands.diagnose import DiagnoseSettings, diagnose
    from indexcheck.inputs.corpus import corpus_from_pairs
    from indexcheck.inputs.questions import Question
    from indexcheck.output.render.terminal import render

    store, emb, ids, texts = shifted_store(n=50)
    corpus = corpus_from_pairs(ids, texts, "chunks")
    qs = [Question(f"q{i}", texts[i], [ids[i]]) for i in range(10, 42)]
    console = Console(record=True, width=200)
    render(sections(diagnose(DiagnoseSettings(k=1, fetch=5), store, emb, qs, corpus)), console)
    out = console.export_text()
    assert "... and 22 more (every question is in --json)" in out


def test_sweep_with_every_out_of_scope_question_refused_by_content() -> None:
    from indexcheck.commands.sweep_threshold import SweepThresholdSettings, sweep_threshold
    from indexcheck.inputs.questions import Question
    from indexcheck.testing import HashEmbedder, MemoryStore

    emb = HashEmbedder(32)
    texts = [f"Chunk {i} states fact {i}." for i in range(10)] + ["We do not cover this."]
    ids = [f"c{i}" for i in range(10)] + ["topic-not-covered"]
    store = MemoryStore(ids, emb.embed(texts), texts)
    qs = [Question(f"q{i}", texts[i], [ids[i]]) for i in range(5)]
    qs.append(Question("o0", "We do not cover this.", [], in_scope=False))
    asked = SweepThresholdSettings(
        store, qs, k=1, fetch=3, refusal_pattern="topic-not-covered", higher_is_better=True
    )
    r = sweep_threshold(asked, store, emb, qs)
    assert r.separable is None and r.handled_by_content == ["o0"]
    assert "needs both" not in r.verdict and "no separation needed" in r.verdict, r.verdict
