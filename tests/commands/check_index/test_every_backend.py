"""check-index end to end on every backend: a clean index passes, a planted shift is
diagnosed at the right chunk, and nothing is written to the index."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.commands.check_index import CheckIndexSettings, check_index
from indexcheck.inputs.corpus import corpus_from_pairs
from indexcheck.stores import StoreOptions, open_store
from indexcheck.testing import HashEmbedder, positional_cache_bug
from tests.util import tree_digest

BACKENDS = ["faiss", "parquet", "upstash", "pgvector", "chroma", "qdrant", "milvus", "lancedb"]
N = 120


def corpus() -> tuple[list[str], list[str]]:
    ids = [f"note{i // 30}-sec-{i:03d}" for i in range(N)]
    texts = [f"Section {i}. Fact number {i} about subject {i % 9}." for i in range(N)]
    texts[33] = texts[4]
    texts[70] = texts[8]
    return ids, texts


def build(backend: str, root: Path, ids: list[str], vectors, texts: list[str]) -> str:
    if backend == "faiss":
        from indexcheck.stores.faiss.store import write_faiss_folder

        write_faiss_folder(root / "faiss", ids, vectors, texts)
        return f"faiss:{root / 'faiss'}"
    if backend == "parquet":
        from indexcheck.stores.files.store import write_vectors_file

        write_vectors_file(root / "v.parquet", ids, vectors, texts)
        return f"parquet:{root / 'v.parquet'}"
    builder = importlib.import_module(f"tests.builders.{backend}")
    kw: dict[str, Any] = {"id_mode": "payload"} if backend == "qdrant" else {}
    spec: str = builder.build(root, ids, vectors, texts, "cosine", **kw)
    return spec


def writes_seen(backend: str) -> int:
    if backend != "upstash":
        return 0
    from tests.builders.upstash import shared_emulator

    return len(shared_emulator().writes())


@pytest.mark.parametrize("backend", BACKENDS)
def test_clean_passes_and_planted_shift_is_diagnosed(backend: str, tmp_path: Path) -> None:
    ids, texts = corpus()
    fresh = HashEmbedder(32).embed(texts)
    good = build(backend, tmp_path / "good", ids, fresh, texts)
    bad = build(backend, tmp_path / "bad", ids, positional_cache_bug(texts, fresh), texts)
    chunks = corpus_from_pairs(ids, texts)
    opts = StoreOptions(trust_pickle=True)  # qdrant local storage is pickled

    digests = {p: tree_digest(p) for p in (tmp_path / "good", tmp_path / "bad") if p.exists()}
    writes = writes_seen(backend)

    store = open_store(good, opts)
    fp = store.fingerprint()
    r = check_index(CheckIndexSettings(sample=None), store, HashEmbedder(32), chunks)
    assert r.ok, [f.message for f in r.findings]
    assert r.counts == {"ok": N}
    assert store.fingerprint() == fp
    store.close()

    store = open_store(bad, opts)
    r = check_index(CheckIndexSettings(sample=None), store, HashEmbedder(32), chunks)
    store.close()
    assert not r.ok
    # issue 17: one root finding; its stretches start after each repeat
    (shift,) = [f for f in r.findings if f.kind == "shift"]
    assert shift.details["start_id"] == ids[34]
    assert shift.details["preceding_duplicate"]["id"] == ids[33]
    stretches = shift.details["stretches"]
    assert [s["start_id"] for s in stretches] == [ids[34], ids[71]]
    assert [s["trigger_id"] for s in stretches] == [ids[33], ids[70]]
    by_id = {c.id: c for c in r.chunks}
    assert by_id[ids[50]].holds_vector_of == ids[49]
    assert by_id[ids[90]].holds_vector_of == ids[88]

    # read-only: files byte-identical, no write request reached the emulator
    for path, before in digests.items():
        assert tree_digest(path) == before, f"{backend} wrote under {path}"
    assert writes_seen(backend) == writes


@pytest.mark.parametrize("backend", ["pgvector", "upstash", "chroma"])
def test_cli_sample_on_a_remote_or_server_backend(backend: str, tmp_path: Path) -> None:
    ids, texts = corpus()
    fresh = HashEmbedder(32).embed(texts)
    spec = build(backend, tmp_path, ids, positional_cache_bug(texts, fresh), texts)
    r = CliRunner().invoke(
        cli,
        [
            "check-index",
            "--store",
            spec,
            "--embedder",
            "py:indexcheck.testing:HASH32",
            "--sample",
            "8",
            "--seed",
            "1",
        ],
    )
    assert r.exit_code == 1, r.stderr
    assert "shift" in r.stdout and "note1-sec-034" in r.stdout
