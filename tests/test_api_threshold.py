"""The public face functions convert-threshold and sweep-threshold --observed use:
``api.convert_threshold``, ``api.observed_traces`` and ``api.sweep_plots`` give what the
CLI prints and writes, and data they quote comes back escaped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import indexcheck
from indexcheck import api
from indexcheck.cli.app import cli
from indexcheck.errors import InputError
from indexcheck.testing import HashEmbedder


def test_convert_threshold_gives_the_cli_json() -> None:
    out = api.convert_threshold(0.8, "(1+cos)/2", "cos")
    r = CliRunner().invoke(cli, ["convert-threshold", "0.8", "--from", "(1+cos)/2", "--json", "-"])
    assert r.exit_code == 0, r.output
    # the CLI's JSON is to_dict() with the schema version first
    assert {"schema_version": 2, **out.to_dict()} == json.loads(r.stdout[r.stdout.index("{") :])
    assert out.to_dict()["result"] == pytest.approx(0.6) and out.manifest == {}
    with pytest.raises(InputError, match="pass --from or --store, not both"):
        api.convert_threshold(0.8, "cos", store="memory:x")


def test_convert_threshold_reads_the_scale_of_a_store(small_kb: dict[str, Path]) -> None:
    out = api.convert_threshold(0.5, to_formula="cos", store=f"faiss:{small_kb['good']}")
    assert out.to_dict()["from"] == "dot" and out.to_dict()["scale_source"] == "probed"


@pytest.fixture
def traces(small_kb: dict[str, Path], small_kb_questions: Path, tmp_path: Path) -> Path:
    """Each question's top 3 with its scores, and one trace no question labels (its id
    carries an escape sequence)."""
    qs = [json.loads(line) for line in small_kb_questions.read_text().splitlines()]
    with indexcheck.open_store(f"faiss:{small_kb['good']}") as store:
        D, ids = store.query(HashEmbedder(32).embed([q["question"] for q in qs]), 3)
    rows = [
        {"id": f"t{n}", "question": q["question"], "answer": "x",
         "contexts": [{"id": i, "text": "t", "rank": r + 1, "score": float(d)}
                      for r, (i, d) in enumerate(zip(ids[n], D[n], strict=True))]}
        for n, q in enumerate(qs)
    ]  # fmt: skip
    rows.append({**rows[0], "id": "t\x1b[31mx", "question": "no one labelled this"})
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_observed_traces_feed_the_sweep_and_name_their_file(
    traces: Path, small_kb_questions: Path, tmp_path: Path
) -> None:
    read = api.observed_traces(traces)
    assert len(read) == 17 and read.file == str(traces) and read.format == "own"
    result = api.sweep_threshold(None, small_kb_questions, observed=read, k=3)
    observed = result.manifest["observed"]
    assert (observed["file"], observed["format"], observed["traces"]) == (str(traces), "own", 17)
    assert list(result.manifest)[-2:] == ["questions", "observed"]
    assert result.warnings == [
        "1 of 17 traces are left out: their question is not labelled in --questions (t\\x1b[31mx)"
    ]
    assert "warnings" not in result.to_dict()
    with pytest.raises(InputError, match="--filter does not apply to --observed"):
        api.observed_traces(traces, filter='{"a": 1}')
    files = api.sweep_plots(result, tmp_path / "rep")
    # the pages first (sweep-threshold.html and .md, as every command's --report writes
    # them), then plots
    pages = ["sweep-threshold.html", "sweep-threshold.md"]
    assert [p.name for p in files] == pages + [Path(p).name for p in result.plots]
    assert all(p.is_file() for p in files)
    # each plot drawn once: the folder holds the page and the plots, no second copy
    on_disk = sorted(str(p.relative_to(tmp_path / "rep")) for p in (tmp_path / "rep").rglob("*"))
    assert on_disk == sorted(p.name for p in files)
