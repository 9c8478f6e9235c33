"""Ids that do not match (issue 17, items 4 and 5): exit 2 with one line, before embedding.

The index is built the way a user builds it: LangChain ``FAISS.from_documents`` with its
default ids (uuid4), then checked with the user's own chunks file, whose ids are the
chunks' own. The store holds every vector and every text, under other ids.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.commands.diagnose import DiagnoseSettings, diagnose
from indexcheck.commands.sweep_threshold import SweepThresholdSettings, sweep_threshold
from indexcheck.errors import InputError
from indexcheck.inputs.corpus import corpus_from_pairs
from indexcheck.inputs.questions import Question
from indexcheck.testing import HashEmbedder, MemoryStore
from tests.builders.framework_corpus import framework_corpus, langchain_embeddings

EMB = ["--embedder", "minilm", "--trust-pickle"]


@pytest.fixture(scope="module")
def uuid_index(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """LangChain FAISS.from_documents with default (uuid4) ids; chunks.jsonl and
    questions.jsonl with the chunks' own ids."""
    pytest.importorskip("langchain_community")
    from langchain_community.vectorstores import FAISS
    from langchain_core.documents import Document

    root = tmp_path_factory.mktemp("uuid-index")
    c = framework_corpus()
    docs = [Document(page_content=t, metadata=m) for t, m in zip(c.texts, c.metadata, strict=True)]
    FAISS.from_documents(docs, langchain_embeddings("correct")).save_local(str(root / "idx"))
    chunks = root / "chunks.jsonl"
    pairs = zip(c.ids, c.texts, strict=True)
    chunks.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in pairs))
    questions = root / "questions.jsonl"
    rows = [{"id": f"q{i}", "question": c.texts[i][:200], "expected": [c.ids[i]]}
            for i in range(0, 40, 4)]  # fmt: skip
    rows.append({"id": "out0", "question": "the ferry timetable", "in_scope": False})
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return {"spec": f"faiss:{root / 'idx'}", "chunks": chunks, "questions": questions,
            "n": len(c.ids)}  # fmt: skip


def one_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize("mode", [[], ["--all"]])
def test_uuid_ids_checked_with_own_chunks_exit_2(uuid_index: dict, mode: list[str]) -> None:
    r = CliRunner().invoke(
        cli,
        ["check-index", "--store", uuid_index["spec"], "--chunks", str(uuid_index["chunks"]),
         *EMB, *mode],
    )  # fmt: skip
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr)
    line = one_line(r.stderr)
    n = uuid_index["n"]
    assert f"the store holds {n} ids" in line and f"{n} chunk ids, 0 of them shared" in line
    assert f"but {n} chunks pair with a stored text by content hash" in line
    assert "drop --chunks" in line and "--id-column" in line
    assert "?id=" not in line  # faiss takes no id key: advice it would refuse is not given
    assert "missing_vector" not in r.stdout + r.stderr


@pytest.mark.parametrize("mode", [[], ["--all"]])
def test_uuid_ids_on_a_store_without_texts_exit_2(tmp_path, mode: list[str]) -> None:
    """No stored text to pair by, and not one id shared: an id scheme mismatch. Before,
    every chunk was 'missing_vector ... index them' and every vector 'orphan ... delete'."""
    import uuid

    from indexcheck.stores.faiss.store import write_faiss_folder

    texts = [f"Fact {i} about topic {i % 7}." for i in range(60)]
    own = [f"doc#{i:03d}" for i in range(60)]
    built = [str(uuid.UUID(int=i + 1)) for i in range(60)]
    write_faiss_folder(tmp_path / "ix", built, HashEmbedder(32).embed(texts))  # no texts
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text(
        "".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in zip(own, texts, strict=True))
    )
    args = ["check-index", "--store", f"faiss:{tmp_path / 'ix'}", "--chunks", str(chunks)]
    hashed = ["--embedder", "py:indexcheck.testing:HASH32"]
    r = CliRunner().invoke(cli, [*args, *hashed, "--sample", "20", *mode])
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr)
    line = one_line(r.stderr)
    assert "the store holds 60 vectors" in line and "60 chunks, only 0 ids shared" in line
    assert "'doc#000'" in line and "keeps no texts" in line and "--id-column" in line
    assert "missing_vector" not in r.stdout + r.stderr
    # an index that really lacks most of its vectors is still told to index them
    write_faiss_folder(tmp_path / "part", own[:5], HashEmbedder(32).embed(texts[:5]))
    args[2] = f"faiss:{tmp_path / 'part'}"
    r = CliRunner().invoke(cli, [*args, *hashed, "--all"])
    assert r.exit_code == 1 and "missing_vector" in r.stdout, (r.stdout, r.stderr)


def test_uuid_index_passes_without_chunks(uuid_index: dict) -> None:
    r = CliRunner().invoke(cli, ["check-index", "--store", uuid_index["spec"], *EMB, "--all"])
    assert r.exit_code == 0, (r.stdout, r.stderr)


@pytest.mark.parametrize("command", ["diagnose", "sweep-threshold"])
def test_expected_ids_from_another_scheme_exit_2(uuid_index: dict, command: str) -> None:
    extra = ["--chunks", str(uuid_index["chunks"])] if command == "diagnose" else []
    r = CliRunner().invoke(
        cli,
        [command, "--store", uuid_index["spec"], "--questions", str(uuid_index["questions"]),
         *EMB, *extra],
    )  # fmt: skip
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr)
    line = one_line(r.stderr)
    assert "10 of 10 in-scope questions" in line and "10 of 10 expected ids absent" in line
    assert "e.g. question 'q0' expects '" in line


def small(ids_in_store: list[str], texts: list[str], with_texts: bool = True):
    emb = HashEmbedder(16)
    vecs = emb.embed(texts)
    return MemoryStore(ids_in_store, vecs, texts if with_texts else None), emb


def test_overlapping_ids_and_stores_without_texts_are_not_refused() -> None:
    texts = [f"text number {i}" for i in range(20)]
    ids = [f"c{i}" for i in range(20)]
    corpus = corpus_from_pairs(ids, texts, "chunks")
    from indexcheck.commands.check_index import CheckIndexSettings, check_index

    store, emb = small(ids, texts)
    assert check_index(CheckIndexSettings(sample=10), store, emb, corpus).ok
    # other ids and no texts in the store: nothing pairs, and not one id is shared: an id
    # scheme mismatch, refused (every chunk "missing", every vector "orphan" was wrong advice)
    store, emb = small([f"u{i}" for i in range(20)], texts, with_texts=False)
    with pytest.raises(InputError, match="only 0 ids shared.*keeps no texts"):
        check_index(CheckIndexSettings(sample=10), store, emb, corpus)
    # a store that lacks most vectors but shares its ids is told what it lacks
    store, emb = small(ids[:15] + [f"u{i}" for i in range(5)], texts, with_texts=False)
    res = check_index(CheckIndexSettings(sample=10), store, emb, corpus)
    assert not res.ok and res.counts.get("missing_vector")
    # other ids with the texts: refused before any embedding
    store, emb = small([f"u{i}" for i in range(20)], texts)
    emb.stats.requests = 0
    with pytest.raises(InputError, match="20 chunks pair with a stored text"):
        check_index(CheckIndexSettings(sample=10), store, emb, corpus)
    assert emb.stats.requests == 0


def test_a_few_lost_chunks_stay_a_diagnosis_not_a_refusal() -> None:
    """One expected chunk the index lost (it is in --chunks): MISALIGNED, not exit 2; an
    expected id that is nowhere is refused before the questions are embedded."""
    texts = [f"fact {i} about the product" for i in range(12)]
    ids = [f"c{i}" for i in range(12)]
    corpus = corpus_from_pairs(ids, texts, "chunks")
    store, emb = small(ids[1:], texts[1:])  # c0 lost
    qs = [Question(f"q{i}", texts[i], [ids[i]]) for i in range(6)]
    res = diagnose(DiagnoseSettings(k=2, fetch=4), store, emb, qs, corpus)
    assert {d.id: d.label for d in res.questions}["q0"] == "MISALIGNED"
    bad = [*qs, Question("typo", "fact 3", ["c-3"])]
    emb.stats.requests = 0
    with pytest.raises(InputError, match="1 of 7 in-scope questions .* 'typo' expects 'c-3'"):
        diagnose(DiagnoseSettings(k=2, fetch=4), store, emb, bad, corpus)
    with pytest.raises(InputError, match="not in the store nor in the chunks"):
        diagnose(DiagnoseSettings(k=2, fetch=4), store, emb, bad, corpus)
    # sweep-threshold has no chunks file: the lost chunk's question is refused too
    with pytest.raises(InputError, match="2 of 7 in-scope questions .* 'q0' expects 'c0'"):
        settings = SweepThresholdSettings(store, bad, k=2, fetch=4, higher_is_better=True)
        sweep_threshold(settings, store, emb, bad)
    assert emb.stats.requests == 0
    assert np.isfinite(res.metrics["exact"].mrr.value)
