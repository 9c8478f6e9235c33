"""Indexes built by LangChain (FAISS, Chroma) and LlamaIndex with the seed's positional-cache
bug, over a corpus with repeats of repeats across embedding batches, are repaired: the copy
passes check-index --all, its vectors equal a clean build's, and the model is sent only the
texts whose vector existed nowhere (from the replayed bug) plus the seeded check sample."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from indexcheck import api
from indexcheck.testing import HashEmbedder
from tests.builders.repeat_corpus import (
    hash_embed,
    langchain_chroma,
    langchain_faiss,
    llamaindex_simple,
    repeat_corpus,
)
from tests.commands.repair.helpers import (
    CountingEmbedder,
    api_sections,
    file_hashes,
    held_nowhere,
    target_rows,
    write_chunks,
)

BUILDERS = {
    "langchain-faiss": langchain_faiss,
    "langchain-chroma": langchain_chroma,
    "llamaindex-simple": llamaindex_simple,
}
VERIFY = 24


@pytest.mark.parametrize("framework", BUILDERS)
def test_the_copy_holds_a_clean_builds_vectors_at_the_cost_of_the_missing_ones(
    tmp_path: Path, framework: str
) -> None:
    corpus = repeat_corpus(480, 60)
    spec = BUILDERS[framework](tmp_path, corpus, hash_embed(32))
    source = Path(spec.split(":", 1)[1].split("?", 1)[0])
    before = file_hashes(source)
    chunks = write_chunks(tmp_path / "chunks.jsonl", corpus.ids, corpus.texts)
    emb = CountingEmbedder(32)
    out = tmp_path / "fixed"

    r = api.repair(spec, out=out, chunks=chunks, embedder=emb, verify=VERIFY, check=False,
                   trust_pickle=True)  # fmt: skip

    lost = held_nowhere(corpus.texts)
    assert lost and r.reading == "skip_repeat"
    assert r.embedded == len(lost)  # chunks whose vector existed nowhere, from the replay
    assert r.reasons == {"shift_tail": len(lost)}
    lost_texts = {corpus.texts[p] for p in lost}
    assert len(emb.sent) == len(set(emb.sent))  # each distinct text once
    assert lost_texts <= set(emb.sent)
    assert len(set(emb.sent) - lost_texts) <= VERIFY  # the rest is the check sample
    assert r.texts_embedded == len(emb.sent)
    lines = " ".join(t.text for sec in api_sections(r) for t in sec.blocks if hasattr(t, "text"))
    # a plain folder from a Chroma source: the line says how to get a Chroma copy
    assert ("--out chroma:DIR?collection=NAME" in lines) == ("chroma" in framework)
    got = target_rows(out)
    assert got["ids"] == corpus.ids and got["texts"] == corpus.texts
    clean = HashEmbedder(32).embed(corpus.texts)
    assert np.abs(got["vectors"] - clean).max() <= 1e-6
    assert file_hashes(source) == before
    proof = api.check_index(f"parquet:{out / 'vectors.parquet'}", None, HashEmbedder(32),
                            sample=None, stream=True)  # fmt: skip
    assert proof.ok and proof.counts == {"ok": len(corpus.ids)}


def test_a_langchain_faiss_source_gets_a_langchain_faiss_copy_that_loads_and_passes(
    tmp_path: Path,
) -> None:
    from langchain_community.vectorstores import FAISS

    from tests.builders.repeat_corpus import buggy_langchain_embeddings

    corpus = repeat_corpus(300, 40)
    spec = langchain_faiss(tmp_path, corpus, hash_embed(32))
    out = tmp_path / "fixed"
    r = api.repair(spec, out=out, embedder=HashEmbedder(32), trust_pickle=True)
    assert r.ok and r.target_check is not None
    assert r.target_check["store"] == f"faiss:{out}" and r.target_check["checked"] == 300
    assert sorted(p.name for p in out.iterdir()) == ["index.faiss", "index.pkl", "vectors.parquet"]
    loaded = FAISS.load_local(str(out), buggy_langchain_embeddings(hash_embed(32)),
                              allow_dangerous_deserialization=True)  # fmt: skip
    clean = HashEmbedder(32).embed(corpus.texts)
    for p in (0, 150, 299):
        doc = loaded.similarity_search_by_vector(clean[p].tolist(), k=1)[0]
        assert doc.id == corpus.ids[p] and doc.page_content == corpus.texts[p]
        assert doc.metadata == {"package": corpus.doc_of[p]}
    again = api.repair(f"parquet:{out / 'vectors.parquet'}", out=tmp_path / "again",
                       embedder=HashEmbedder(32))  # fmt: skip
    assert again.ok and again.ways == {"kept": 300} and again.embedded == 0
    twice = target_rows(tmp_path / "again")
    assert twice["metadata"] == [{"package": d} for d in corpus.doc_of]
    assert np.array_equal(twice["vectors"], target_rows(out)["vectors"])
