"""The planted-fault suite for a store a framework writes (LangChain's Pinecone and turbopuffer
stores): the corpus, the seed bug as a LangChain embeddings wrapper, the chunks file, and
one function per fault that builds through ``build(embeddings) -> (spec, ids)`` and holds
check-index's verdict through the CLI. Each store's test module calls them with its own
builder and emulator. Also the assertions Weaviate's suite makes on a store it cannot
build through ``Build`` (its seeded filters are :mod:`tests.stores.seeded_filters`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.testing import HashEmbedder, positional_cache_bug

N = 120
EMBEDDER = "py:indexcheck.testing:HASH32"
#: an embedder of the same dimension but another model, for the model-mismatch fault
OTHER_MODEL = HashEmbedder(32, model="another-model")
OTHER = "py:tests.stores.planted_faults:OTHER_MODEL"
OTHER_EMBEDDER = OTHER
Build = Callable[[Any], tuple[str, list[str]]]


def corpus() -> tuple[list[str], list[dict[str, Any]]]:
    """Texts with two repeats (33 = 4, 70 = 8) and metadata."""
    texts = [f"Section {i}. Fact number {i} about subject {i % 9}." for i in range(N)]
    texts[33], texts[70] = texts[4], texts[8]
    return texts, [{"topic": f"t{i % 4}", "year": 2000 + i % 25} for i in range(N)]


def lc(spec: str = EMBEDDER, buggy: bool = False) -> Any:
    """LangChain embeddings over an indexcheck embedder; ``buggy`` replays the seed bug (a
    text-hash cache that does not advance the position into the fresh embeddings)."""
    from langchain_core.embeddings import Embeddings

    from indexcheck.integrations.langchain.embeddings import embeddings

    inner = embeddings(spec)
    if not buggy:
        return inner

    class Buggy(Embeddings):  # type: ignore[misc]
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            fresh = np.asarray(inner.embed_documents(texts), dtype=np.float32)
            return positional_cache_bug(texts, fresh).tolist()  # type: ignore[no-any-return]

        def embed_query(self, text: str) -> list[float]:
            return inner.embed_query(text)  # type: ignore[no-any-return]

    return Buggy()


def chunks_file(path: Path, ids: list[str], texts: list[str]) -> Path:
    path.write_text(
        "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in zip(ids, texts, strict=True))
    )
    return path


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def check(spec: str, chunks: Path, *extra: str) -> tuple[Any, dict[str, Any]]:
    """check-index --all against ``chunks``: the result and its JSON."""
    out = chunks.parent / "r.json"
    r = run("check-index", "--store", spec, "--chunks", str(chunks), "--embedder", EMBEDDER,
            "--all", "--json", str(out), *extra)  # fmt: skip
    return r, (json.loads(out.read_text()) if out.exists() else {})


def clean_passes(build: Build, tmp_path: Path) -> tuple[str, list[str], list[str]]:
    """A clean build passes --all (texts from the store), --chunks and --sample; returns the
    spec, ids and texts."""
    texts, _ = corpus()
    spec, ids = build(lc())
    r = run("check-index", "--store", spec, "--embedder", EMBEDDER, "--all")
    assert r.exit_code == 0, r.output
    r, _ = check(spec, chunks_file(tmp_path / "c.jsonl", ids, texts))
    assert r.exit_code == 0, r.output
    r = run("check-index", "--store", spec, "--embedder", EMBEDDER, "--sample", "30")
    assert r.exit_code == 0, r.output
    return spec, ids, texts


def shift_is_one_story(build: Build, tmp_path: Path) -> None:
    """The seed bug is told as one shift from position 34, with positions from --chunks."""
    texts, _ = corpus()
    spec, ids = build(lc(buggy=True))
    r, data = check(spec, chunks_file(tmp_path / "c.jsonl", ids, texts))
    assert r.exit_code == 1, r.output
    (shift,) = [f for f in data["findings"] if f["kind"] == "shift"]
    d = shift["details"]
    assert d["order"] == "chunks file order"
    assert (d["start_position"], d["start_id"]) == (34, ids[34])
    assert [s["trigger_id"] for s in d["stretches"]] == [ids[33], ids[70]]
    rows = {c["id"]: c for c in data["chunks"]}
    assert rows[ids[50]]["holds_vector_of"] == ids[49]


def stale_missing_and_orphan(build: Build, tmp_path: Path) -> None:
    texts, _ = corpus()
    spec, ids = build(lc())
    mine = list(texts)
    mine[11] += " Revised in 2024, see the new appendix on subject scope."  # never re-embedded
    listed_ids, listed = [*ids, "never-indexed"], [*mine, "A chunk nobody embedded."]
    del listed_ids[5], listed[5]  # ids[5] stays in the store: an orphan vector
    r, data = check(spec, chunks_file(tmp_path / "c.jsonl", listed_ids, listed))
    assert r.exit_code == 1, r.output
    status = {c["id"]: c["status"] for c in data["chunks"] if c["status"] != "ok"}
    assert status == {ids[11]: "stale_vector", "never-indexed": "missing_vector"}
    (orphan,) = [f for f in data["findings"] if f["kind"] == "orphan_vector"]
    assert orphan["chunk_ids"] == [ids[5]]


def model_mismatch(build: Build, tmp_path: Path) -> None:
    texts, _ = corpus()
    spec, ids = build(lc(OTHER))
    r, data = check(spec, chunks_file(tmp_path / "c.jsonl", ids, texts))
    assert r.exit_code == 1, r.output
    kinds = {f["kind"] for f in data["findings"]}
    assert "model_mismatch" in kinds and not kinds & {"shift", "stale_vector"}, kinds


def assert_shift_story(data: dict[str, Any], ids: list[str]) -> None:
    """The seed bug on :func:`corpus` built in ``ids`` order, told as one story from the
    chunks file's positions: it starts after the first repeat (33) and chains from there."""
    (shift,) = [f for f in data["findings"] if f["kind"] == "shift"]
    d = shift["details"]
    assert d["order"] == "chunks file order"
    assert (d["start_position"], d["start_id"]) == (34, ids[34])
    assert [s["trigger_id"] for s in d["stretches"]] == [ids[33], ids[70]]
    rows = {c["id"]: c for c in data["chunks"]}
    assert rows[ids[50]]["holds_vector_of"] == ids[49]


def stale_missing_orphan(
    ids: list[str], texts: list[str], absent: list[str]
) -> tuple[list[str], list[str]]:
    """A chunks listing of a clean build with three faults planted: chunk 11's text revised
    (never re-embedded), ``absent`` ids listed that were never indexed, chunk 5 left out (its
    vector stays: an orphan)."""
    mine = list(texts)
    mine[11] += " Revised in 2024, see the new appendix on subject scope."
    listed_ids = [*ids, *absent]
    listed = [*mine, *(f"A chunk nobody embedded, number {i}." for i in range(len(absent)))]
    del listed_ids[5], listed[5]
    return listed_ids, listed


def assert_stale_missing_orphan(data: dict[str, Any], ids: list[str], absent: list[str]) -> None:
    status = {c["id"]: c["status"] for c in data["chunks"] if c["status"] != "ok"}
    assert status == {ids[11]: "stale_vector", **dict.fromkeys(absent, "missing_vector")}
    (orphan,) = [f for f in data["findings"] if f["kind"] == "orphan_vector"]
    assert orphan["chunk_ids"] == [ids[5]]
