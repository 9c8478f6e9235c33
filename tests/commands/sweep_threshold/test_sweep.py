"""sweep-threshold on the fixture KB, checked against an independent computation."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.commands.kit.retrieval import DEFAULT_REFUSAL_PATTERN
from indexcheck.commands.sweep_threshold import SweepThresholdSettings, sweep_threshold
from indexcheck.embedders.minilm.model import MiniLMEmbedder
from indexcheck.errors import DataFileError
from indexcheck.inputs.questions import load_questions
from indexcheck.stores import open_store

K, FETCH = 4, 20


def independent(kb: dict, target: float = 0.95) -> dict:
    """Brute-force cosine over every chunk, then the rule applied by hand."""
    ids = kb["corpus"].ids
    sims = kb["qvecs"] @ kb["vectors"].T  # unit vectors: cosine
    order = np.argsort(-sims, axis=1, kind="stable")[:, :FETCH]
    refusal = {i for i in ids if "topic-not-covered" in i}
    best_in: dict[str, float] = {}
    top_out: dict[str, float] = {}
    for row, q in enumerate(kb["questions"]):
        ranked = [ids[j] for j in order[row]]
        if q.in_scope:
            hits = [r for r, cid in enumerate(ranked[:K]) if cid in q.expected]
            if hits:
                best_in[q.id] = float(sims[row, order[row, hits[0]]])
        elif ranked[0] not in refusal:
            top_out[q.id] = float(sims[row, order[row, 0]])
    n_in = sum(1 for q in kb["questions"] if q.in_scope)
    need = math.ceil(target * n_in)
    passing = sorted(best_in.values(), reverse=True)
    rec = passing[need - 1] if len(passing) >= need else None
    lo, hi = min(best_in.values()), max(top_out.values())
    return {
        "recommended": rec,
        "min_in": lo,
        "max_out": hi,
        "separable": lo > hi,
        "overlap_in": sorted(q for q, v in best_in.items() if v <= hi),
        "overlap_out": sorted(q for q, v in top_out.items() if v >= lo),
    }


def test_fixture_sweep_matches_independent_computation(fixture_kb) -> None:
    store = open_store(f"faiss:{fixture_kb['faiss']}")
    settings = SweepThresholdSettings(
        store,
        fixture_kb["questions"],
        k=K,
        fetch=FETCH,
        higher_is_better=True,
        to_cosine=lambda s: s,
        refusal_pattern=DEFAULT_REFUSAL_PATTERN,
    )
    r = sweep_threshold(settings, store, MiniLMEmbedder(), fixture_kb["questions"])
    ind = independent(fixture_kb)
    assert r.in_scope == 40 and r.out_of_scope == 15
    assert r.min_in_scope_best["cosine"] == pytest.approx(ind["min_in"], abs=1e-5)
    assert r.max_out_of_scope_top["cosine"] == pytest.approx(ind["max_out"], abs=1e-5)
    assert r.separable == ind["separable"]
    assert r.overlap == {"in_scope": ind["overlap_in"], "out_of_scope": ind["overlap_out"]}
    if ind["recommended"] is None:
        assert r.recommended_threshold is None
    else:
        assert r.recommended_threshold["backend"] == pytest.approx(ind["recommended"], abs=1e-5)
    # every candidate threshold is an observed score, with rates that stay in [0, 1]
    for row in r.table:
        for rate in (row["in_scope_recall"], row["out_of_scope_rejection"]):
            assert 0 <= rate["low"] <= rate["value"] <= rate["high"] <= 1
    # refusal questions mostly land on refusal chunks: handled by content
    assert set(r.handled_by_content) <= {q.id for q in fixture_kb["questions"] if not q.in_scope}


def test_bad_question_rows_name_their_line(tmp_path) -> None:
    p = tmp_path / "q.jsonl"
    p.write_text('{"id": "a", "question": "x", "expected": ["c"]}\n{"id": "b", "question": "y"}\n')
    with pytest.raises(DataFileError, match="q.jsonl line 2: question 'b' has no 'expected'"):
        load_questions(p)
    p.write_text('{"id": "a", "question": "x", "expected": ["c"]}\nnot json\n')
    with pytest.raises(DataFileError, match="line 2 is not valid JSON"):
        load_questions(p)


def test_cli_bad_questions_exit_2(fixture_kb, tmp_path) -> None:
    p = tmp_path / "q.csv"
    p.write_text("id,question,in_scope\na,hello,maybe\n")
    r = CliRunner().invoke(
        cli, ["sweep-threshold", "--store", f"faiss:{fixture_kb['faiss']}", "--questions", str(p)]
    )
    assert r.exit_code == 2
    assert "q.csv line 2: 'in_scope' must be true or false" in r.stderr


def test_cli_on_cosine_scaled_upstash_reports_both_scales(fixture_kb, tmp_path) -> None:
    """Upstash COSINE reports (1+cos)/2; the recommendation comes on both scales and they
    agree through the probed transform."""
    from tests.builders import upstash

    corpus = fixture_kb["corpus"]
    spec = upstash.build(tmp_path, corpus.ids, fixture_kb["vectors"], corpus.texts, "cosine")
    out = tmp_path / "sweep.json"
    r = CliRunner().invoke(
        cli,
        [
            "sweep-threshold",
            "--store",
            spec,
            "--questions",
            "fixtures/questions.jsonl",
            "--json",
            str(out),
            "--report",
            str(tmp_path / "rep"),
            "--rule",
            "youden",
        ],
    )
    assert r.exit_code in (0, 1), r.stderr
    data = json.loads(out.read_text())
    assert data["scale"]["transform"] == "(1+cos)/2"
    t = data["recommended_threshold"]
    assert t["backend"] == pytest.approx((1 + t["cosine"]) / 2, abs=1e-5)
    for key in (
        "in_scope",
        "out_of_scope",
        "scale",
        "min_in_scope_best",
        "max_out_of_scope_top",
        "separable",
        "recommended_threshold",
        "table",
        "questions",
        "plots",
        "manifest",
    ):
        assert key in data
    assert set(data["min_in_scope_best"]) == {"backend", "cosine"}
    assert len(data["plots"]) == 3
    for png in data["plots"]:
        assert (tmp_path / "rep" / png.split("/")[-1]).stat().st_size > 5000


def test_plots_have_titles_labels_and_both_populations(fixture_kb) -> None:
    import matplotlib.image

    from indexcheck.output.render.plots import threshold_figures, threshold_plots

    store = open_store(f"faiss:{fixture_kb['faiss']}")
    settings = SweepThresholdSettings(
        store,
        fixture_kb["questions"],
        higher_is_better=True,
        to_cosine=lambda s: s,
        refusal_pattern=DEFAULT_REFUSAL_PATTERN,
        rule="youden",
    )
    r = sweep_threshold(settings, store, MiniLMEmbedder(), fixture_kb["questions"]).to_dict()
    figures = dict(threshold_figures(r))
    assert set(figures) == {
        "threshold-distributions.png",
        "threshold-ecdf.png",
        "threshold-rates.png",
    }
    for fig in figures.values():
        ax = fig.axes[0]
        assert ax.get_title() and ax.get_ylabel()
        assert "cosine" in ax.get_xlabel()
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert any(x.startswith("recommended") for x in labels)
    dist = figures["threshold-distributions.png"].axes[0]
    legend = [t.get_text() for t in dist.get_legend().get_texts()]
    assert any("in-scope" in x for x in legend) and any("out-of-scope" in x for x in legend)
    assert len(dist.patches) > 0 and len(dist.containers) == 2  # two histograms
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        for path in threshold_plots(r, Path(tmp)):
            img = matplotlib.image.imread(path)  # the PNG opens
            assert img.shape[0] > 300 and img.shape[1] > 500
