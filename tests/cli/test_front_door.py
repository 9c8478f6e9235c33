"""One front door: a command's CLI parses its options and calls one :mod:`indexcheck.api`
function, which opens what the specs name, calls the core and stamps the result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from indexcheck import api
from indexcheck.cli.app import cli
from indexcheck.errors import InputError, SpecError

EMB = ["--embedder", "py:indexcheck.testing:HASH32"]


def test_cli_compare_ann_calls_api_compare_ann_once(
    small_kb: dict[str, Path], small_kb_questions: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    real = api.compare_ann

    def recorder(*args: Any, **kwargs: Any) -> Any:
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr("indexcheck.api.compare_ann", recorder)
    spec = f"faiss:{small_kb['good']}"
    args = ["compare-ann", "--store", spec, "-k", "4", "--fetch", "4,10", "--json", "-"]
    r = CliRunner().invoke(cli, [*args, "--questions", str(small_kb_questions), *EMB])
    assert r.exit_code in (0, 1), r.output
    assert len(calls) == 1
    (given, kw) = calls[0]
    assert given == (spec, 500)
    assert kw["k"] == 4 and kw["fetch"] == [4, 10] and kw["questions"] == small_kb_questions
    assert kw["embedder"] == EMB[1] and kw["sweep"] is None and kw["engine"] == "local"
    data = json.loads(r.stdout)
    assert data["query_source"] == "questions" and data["queries"] == 16
    queries = data["manifest"]["queries"]
    assert queries == {"source": "questions", "count": 16, "path": str(small_kb_questions),
                       "embedder": "hash:32"}  # fmt: skip
    assert data["manifest"]["embedder"]["model_id"] == "hash:32"


def test_a_bad_sweep_parameter_is_refused_before_anything_opens(
    small_kb: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_opening(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("a store was opened before the sweep parameter was checked")

    monkeypatch.setattr("indexcheck.stores.opening.open_store", no_opening)
    monkeypatch.setattr("indexcheck.engines.open_engine", no_opening)
    spec = f"faiss:{small_kb['good']}"
    r = CliRunner().invoke(cli, ["compare-ann", "--store", spec, "--sweep", "ef=2,4"])
    assert r.exit_code == 2
    assert r.stderr.strip().splitlines() == [
        "error: --sweep ef: faiss has no search parameter ef; faiss accepts: efSearch, nprobe"
    ]
    with pytest.raises(SpecError, match="no search parameter ef"):
        api.compare_ann(spec, 5, sweep=("ef", [2, 4]))


def test_a_sweep_needs_the_store_as_a_spec(small_kb: dict[str, Path]) -> None:
    """A sweep reopens the index at each value; an opened store's spec has lost its
    parameters, so it is refused rather than reopened as something else."""
    from indexcheck.stores import open_store

    opened = open_store(f"faiss:{small_kb['good']}")
    try:
        with pytest.raises(InputError, match="pass it as a spec string"):
            api.compare_ann(opened, 5, sweep=("efSearch", [2, 4]))
    finally:
        opened.close()


def test_api_compare_ann_reads_questions_and_query_vectors_files(
    small_kb: dict[str, Path], small_kb_questions: Path, tmp_path: Path
) -> None:
    import numpy as np

    from indexcheck.testing import HashEmbedder

    spec = f"faiss:{small_kb['good']}"
    from_questions = api.compare_ann(
        spec,
        k=4,
        fetch=[4],
        questions=small_kb_questions,
        embedder="py:indexcheck.testing:HASH32",
    )
    assert from_questions.queries == 16 and from_questions.manifest["queries"]["count"] == 16
    np.save(tmp_path / "qv.npy", HashEmbedder(32).embed(["a note", "another note"]))
    from_file = api.compare_ann(spec, k=4, fetch=[4], query_vectors=tmp_path / "qv.npy")
    assert from_file.queries == 2 and from_file.manifest["queries"]["source"] == "vectors"
    with pytest.raises(InputError, match="cannot be combined"):
        api.compare_ann(spec, questions=small_kb_questions, query_vectors=tmp_path / "qv.npy")


def test_api_compare_ann_takes_the_raw_forms_the_cli_hands_it(
    small_kb: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI hands over the --sweep and --filter text and cache_dir=True; the face
    parses them as the CLI did, before anything opens."""
    from indexcheck.commands.compare_ann.settings import vector_cache_dir
    from indexcheck.errors import FilterError

    spec = f"faiss:{small_kb['good']}"
    with pytest.raises(SpecError, match="no search parameter ef"):
        api.compare_ann(spec, 5, sweep="ef=2,4")
    with pytest.raises(InputError, match="must be PARAM=V1,V2"):
        api.compare_ann(spec, 5, sweep="ef")
    with pytest.raises(FilterError, match="not valid JSON"):
        api.compare_ann(spec, 5, filter="{bad")
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path))
    assert vector_cache_dir(True) == tmp_path / "vectors"
    assert vector_cache_dir(False) is None and vector_cache_dir(tmp_path) == tmp_path
    r = api.compare_ann(spec, 5, k=4, fetch=[4], cache_dir=True)
    assert r.queries == 5


def test_api_diff_index_reads_chunk_files_with_their_columns(
    small_kb: dict[str, Path], tmp_path: Path
) -> None:
    from indexcheck import load_chunks

    rows = [json.loads(line) for line in small_kb["chunks"].read_text().splitlines()]
    renamed = tmp_path / "renamed.jsonl"
    renamed.write_text(
        "".join(json.dumps({"cid": r["id"], "body": r["text"]}) + "\n" for r in rows)
    )
    old, new = f"faiss:{small_kb['good']}", f"faiss:{small_kb['buggy']}"
    from_files = api.diff_index(old, new, renamed, renamed, id_column="cid", text_column="body")
    loaded = load_chunks(small_kb["chunks"])
    from_corpus = api.diff_index(old, new, loaded, loaded)
    assert from_files.counts == from_corpus.counts and not from_files.ok
    assert from_files.manifest["chunks_old"] == str(renamed) == from_files.manifest["chunks_new"]
    assert from_files.manifest["engine"] is None and from_corpus.manifest["chunks_old"] is None
