"""Shared fixtures: small corpora and FAISS folders built with the hash embedder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from indexcheck.stores.faiss.store import write_faiss_folder
from indexcheck.testing import HashEmbedder, positional_cache_bug

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_CHUNKS = ROOT / "fixtures" / "chunks.jsonl"


@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch) -> None:
    """Tests never write to the user's ~/.cache: probed scales etc. go to a temp folder."""
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture
def small_kb(tmp_path: Path) -> dict[str, Path]:
    """A 120-chunk corpus with repeats, as chunks.jsonl, plus a good and a buggy FAISS folder."""
    ids = [f"note{i // 30}#sec-{i:03d}" for i in range(120)]
    texts = [f"Section {i}. Fact number {i} about subject {i % 9}." for i in range(120)]
    texts[33] = texts[4]
    texts[70] = texts[8]
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text(
        "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in zip(ids, texts, strict=True))
    )
    fresh = HashEmbedder(32).embed(texts)
    write_faiss_folder(tmp_path / "good", ids, fresh)
    write_faiss_folder(tmp_path / "buggy", ids, positional_cache_bug(texts, fresh))
    return {"chunks": chunks, "good": tmp_path / "good", "buggy": tmp_path / "buggy"}


@pytest.fixture
def small_kb_questions(small_kb: dict[str, Path], tmp_path: Path) -> Path:
    """12 in-scope questions (each a chunk's own text) and 4 unrelated ones, for small_kb."""
    rows = [json.loads(line) for line in small_kb["chunks"].read_text().splitlines()]
    qs = [
        {"id": f"q{i}", "question": r["text"], "expected": [r["id"]]}
        for i, r in enumerate(rows[:12])
    ]
    qs += [{"id": f"o{i}", "question": f"unrelated {i} zebra", "in_scope": False} for i in range(4)]
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in qs))
    return path


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


@pytest.fixture(scope="session")
def fixture_kb(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The project's fixture KB embedded once with the default model: ids, texts, vectors,
    the questions, their embeddings, and a correct FAISS folder (inner product)."""
    from indexcheck.embedders.minilm.model import MiniLMEmbedder
    from indexcheck.inputs.corpus import load_chunks
    from indexcheck.inputs.questions import load_questions

    corpus = load_chunks(FIXTURE_CHUNKS)
    questions = load_questions(ROOT / "fixtures" / "questions.jsonl")
    emb = MiniLMEmbedder()
    vectors = emb.embed(corpus.texts)
    qvecs = emb.embed([q.question for q in questions])
    folder = tmp_path_factory.mktemp("kb") / "faiss"
    write_faiss_folder(folder, corpus.ids, vectors, corpus.texts)
    return {
        "corpus": corpus,
        "questions": questions,
        "vectors": vectors,
        "qvecs": qvecs,
        "faiss": folder,
    }


@pytest.fixture(scope="module")
def ray_cluster():  # type: ignore[no-untyped-def]
    """A local two-CPU Ray, started for a test module and stopped after it."""
    ray = pytest.importorskip("ray")
    # address="local": a new Ray of its own, never one another process left on this machine
    ray.init(
        address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
        _node_ip_address="127.0.0.1",
    )  # fmt: skip
    yield ray
    ray.shutdown()


#: the package whose tests share one Ray cluster (its conftest.py)
ENGINES = ROOT / "tests" / "engines"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test that starts or joins Ray (``ray_cluster``, or the engines package) goes to
    one pytest-xdist worker (``--dist loadgroup``): two Rays never compete for two cores."""
    for item in items:
        if "ray_cluster" in getattr(item, "fixturenames", ()) or item.path.is_relative_to(ENGINES):
            item.add_marker(pytest.mark.xdist_group("ray"))


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection imported (frameworks, engines, SDKs: most of the suite's heap) stays
    for the whole run: frozen, it is left out of every later garbage collection, which
    otherwise walks it again each time (a test's gc.collect() took seconds late in a run)."""
    import gc

    gc.collect()
    gc.freeze()
