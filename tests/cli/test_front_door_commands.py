"""The last three commands through the front door: embed, judge ``--store`` and
sweep-threshold ``--observed`` call one :mod:`indexcheck.api` function, which opens the
store or embedder their specs name; the library function gives what the CLI gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import indexcheck
from indexcheck import api
from indexcheck.cli.app import cli
from indexcheck.errors import InputError
from indexcheck.inputs.answers import DEFAULT_ANSWER_REFUSAL_PATTERN

SPEC = "py:indexcheck.testing:HASH32"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _scale_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))


def _recording(monkeypatch: pytest.MonkeyPatch, name: str) -> list[dict[str, Any]]:
    """Each call of ``api.NAME`` (its arguments by name), the real function still run."""
    import inspect

    calls: list[dict[str, Any]] = []
    real = getattr(api, name)

    def recorder(*args: Any, **kwargs: Any) -> Any:
        calls.append(dict(inspect.signature(real).bind(*args, **kwargs).arguments))
        return real(*args, **kwargs)

    monkeypatch.setattr(f"indexcheck.api.{name}", recorder)
    return calls


def _json(stdout: str) -> dict[str, Any]:
    """The CLI's --json result as the library's ``to_dict()`` has it (no schema_version)."""
    data: dict[str, Any] = json.loads(stdout[stdout.index("{") :])
    assert data.pop("schema_version") == 2
    return data


def _without_times(manifest: dict[str, Any]) -> dict[str, Any]:
    drop = {"started_at", "wall_seconds", "embedding", "judging"}
    return {k: v for k, v in manifest.items() if k not in drop}


# -- embed -----------------------------------------------------------------------------------
def test_cli_embed_calls_api_embed_once_and_writes_what_the_library_writes(
    small_kb: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow.parquet as pq

    calls = _recording(monkeypatch, "embed")
    out, faiss = tmp_path / "cli.parquet", tmp_path / "cli-faiss"
    args = ["embed", "--chunks", str(small_kb["chunks"]), "--embedder", SPEC]
    r = CliRunner().invoke(cli, [*args, "--out", str(out), "--faiss", str(faiss), "--json", "-"])
    assert r.exit_code == 0, r.output
    assert len(calls) == 1
    assert calls[0]["embedder"] == SPEC and calls[0]["out"] == out and calls[0]["faiss"] == faiss
    cli_manifest = _json(r.stdout)["manifest"]

    lib = indexcheck.embed(small_kb["chunks"], SPEC, out=tmp_path / "lib.parquet")
    assert lib.ok and (lib.chunks, lib.distinct_texts) == (120, 118)
    assert lib.written == [tmp_path / "lib.parquet"]
    assert _without_times(lib.manifest) == _without_times(cli_manifest)
    assert list(lib.manifest) == list(cli_manifest)  # the same keys, in the same order
    assert pq.read_table(out).equals(pq.read_table(tmp_path / "lib.parquet"))
    assert indexcheck.open_store(f"faiss:{faiss}").info().count == 120


def test_api_embed_refuses_an_existing_output_before_the_embedder_opens(
    small_kb: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_opening(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("the embedder was opened before the outputs were checked")

    monkeypatch.setattr("indexcheck.embedders.cached_embedder", no_opening)
    (tmp_path / "old.parquet").write_bytes(b"PAR1")
    with pytest.raises(InputError, match="old.parquet already exists"):
        api.embed(small_kb["chunks"], SPEC, out=tmp_path / "old.parquet")
    with pytest.raises(InputError, match="needs somewhere to write"):
        api.embed(small_kb["chunks"], SPEC)


# -- judge --store ---------------------------------------------------------------------------
ANSWERS = ROOT / "fixtures" / "judge" / "answers.jsonl"
JUDGE = "py:tests.judge_hook:fixture_judge"
REFUSALS = DEFAULT_ANSWER_REFUSAL_PATTERN  # the CLI's default --refusal-pattern


def test_cli_judge_store_goes_through_api_judge_and_fingerprints_the_sheet(
    small_kb: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _recording(monkeypatch, "judge")
    spec = f"faiss:{small_kb['good']}"
    args = ["judge", "--answers", str(ANSWERS), "--judge", JUDGE, "--allow-unjudged"]
    r = CliRunner().invoke(cli, [*args, "--store", spec, "--sheet", str(tmp_path / "sheet"),
                                 "--json", "-"])  # fmt: skip
    assert r.exit_code == 1, r.output  # the fixture case holds ungrounded answers
    assert len(calls) == 1 and calls[0]["store"] == spec and calls[0]["judge"] == JUDGE
    m = _json(r.stdout)["manifest"]
    assert m["store_fingerprint"] == m["index_fingerprint"]
    assert m["store"]["spec"] == spec and m["judge"]["spec_scheme"] == "py"
    (run,) = (tmp_path / "sheet" / "runs").glob("*/run.json")
    assert json.loads(run.read_text())["store_fingerprint"] == m["index_fingerprint"]

    lib = indexcheck.judge(ANSWERS, JUDGE, allow_unjudged=True, store=spec)  # CLI defaults
    assert lib.manifest["index_fingerprint"] == m["index_fingerprint"]
    assert lib.manifest["store"] == m["store"]
    assert lib.to_dict()["answers"] == _json(r.stdout)["answers"]
    assert "store" not in indexcheck.judge(ANSWERS, JUDGE, allow_unjudged=True).manifest


# -- sweep-threshold --observed --------------------------------------------------------------
@pytest.fixture
def observed(small_kb: dict[str, Path], small_kb_questions: Path, tmp_path: Path) -> Path:
    """Each question's top 5 as the store retrieves them, with their scores, as production
    traces would record them (one more trace whose question no one labelled)."""
    from indexcheck.testing import HashEmbedder

    texts = {
        r["id"]: r["text"] for r in map(json.loads, small_kb["chunks"].read_text().splitlines())
    }
    qs = [json.loads(line) for line in small_kb_questions.read_text().splitlines()]
    with indexcheck.open_store(f"faiss:{small_kb['good']}") as store:
        D, ids = store.query(HashEmbedder(32).embed([q["question"] for q in qs]), 5)
    rows = [
        {"id": f"t{n}", "question": q["question"], "answer": "x",
         "contexts": [{"id": i, "text": texts[i], "rank": r + 1, "score": float(d)}
                      for r, (i, d) in enumerate(zip(ids[n], D[n], strict=True))]}
        for n, q in enumerate(qs)
    ]  # fmt: skip
    rows.append({**rows[0], "id": "tx", "question": "a question no one labelled"})
    path = tmp_path / "observed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_cli_observed_goes_through_api_sweep_threshold_as_the_library_does(
    small_kb: dict[str, Path],
    small_kb_questions: Path,
    observed: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _recording(monkeypatch, "sweep_threshold")
    spec = f"faiss:{small_kb['good']}"
    args = ["sweep-threshold", "--observed", str(observed), "--questions", str(small_kb_questions)]
    r = CliRunner().invoke(cli, [*args, "--store", spec, "-k", "3", "--json", "-"])
    assert r.exit_code == 0, r.output
    assert "1 of 17 traces are left out" in r.stderr
    assert len(calls) == 1 and calls[0]["store"] == spec and len(calls[0]["observed"]) == 17
    assert "embedder" not in calls[0]  # nothing is embedded
    cli_out = _json(r.stdout)
    m = cli_out.pop("manifest")
    assert list(m)[-2:] == ["questions", "observed"] and m["observed"]["format"] == "own"

    lib = indexcheck.sweep_threshold(spec, small_kb_questions, observed=observed, k=3)
    out = lib.to_dict()
    facts = out.pop("manifest")
    assert (out.pop("scale")["source"], cli_out.pop("scale")["source"]) == ("cached", "probed")
    assert out == cli_out
    assert "embedder" not in facts and facts["store"] == m["store"]
    assert facts["observed"] == {
        k: v for k, v in m["observed"].items() if k not in ("file", "format")
    }
    with pytest.raises(InputError, match="--filter does not apply to --observed"):
        indexcheck.sweep_threshold(spec, small_kb_questions, observed=observed, filter={"a": 1})


def test_api_sweep_threshold_needs_a_store_or_observed_traces(small_kb_questions: Path) -> None:
    with pytest.raises(InputError, match="needs a store .* or observed traces"):
        indexcheck.sweep_threshold(None, small_kb_questions, SPEC)


def test_observed_without_a_store_carries_the_whole_manifest(
    small_kb_questions: Path, observed: Path
) -> None:
    """Every result's manifest says what ran (tool, version, command, wall time): --observed
    with no --store gave only its two own entries."""
    args = ["sweep-threshold", "--observed", str(observed), "--questions", str(small_kb_questions)]
    r = CliRunner().invoke(cli, [*args, "-k", "3", "--json", "-"])
    assert r.exit_code == 0, r.output
    m = _json(r.stdout)["manifest"]
    assert (m["tool"], m["command"]) == ("indexcheck", "sweep-threshold")
    assert m["version"] == indexcheck.__version__ and m["wall_seconds"] >= 0
    assert "store" not in m and "embedder" not in m
    assert list(m)[-2:] == ["questions", "observed"] and m["observed"]["traces"] == 17
