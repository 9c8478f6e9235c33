"""A chunk longer than the model reads is named in a ``truncated_text`` warning, in the
sampled and the streamed check; a corpus of short chunks gets no such warning."""

from __future__ import annotations

import numpy as np
import pytest

from indexcheck.commands.check_index import CheckIndexSettings, check_index
from indexcheck.embedders.cache import CachedEmbedder
from indexcheck.inputs.corpus import corpus_from_pairs
from indexcheck.testing import HashEmbedder, MemoryStore


class CuttingEmbedder(HashEmbedder):
    """HashEmbedder that, like MiniLM, records texts longer than it reads (here 50 chars)."""

    def __init__(self) -> None:
        super().__init__(dimension=16)
        self.truncated: set[str] = set()

    def _embed_batch(self, texts: list[str]) -> tuple[np.ndarray, int]:
        from indexcheck.inputs.corpus import text_hash

        for t in texts:
            if len(t) > 50:
                self.truncated.add(text_hash(t))
        return super()._embed_batch([t[:50] for t in texts])


def _case(long: bool) -> tuple[object, object, object]:
    texts = [f"chunk {i} about topic {i}" for i in range(30)]
    if long:
        texts[7] = "a very long chunk " * 20
    ids = [f"c{i}" for i in range(30)]
    embedder = CachedEmbedder(CuttingEmbedder(), None)
    store = MemoryStore(ids, HashEmbedder(dimension=16).embed([t[:50] for t in texts]))
    return corpus_from_pairs(ids, texts), store, embedder


@pytest.mark.parametrize("sample", [None, 30])
def test_long_chunk_is_named_in_a_warning(sample: int | None) -> None:
    corpus, store, embedder = _case(long=True)
    result = check_index(CheckIndexSettings(sample=sample, seed=1), store, embedder, corpus)
    warns = [f for f in result.findings if f.kind == "truncated_text"]
    assert result.ok  # a warning, not a fault: the stored vector is right for what was read
    assert len(warns) == 1 and warns[0].chunk_ids == ["c7"]
    assert warns[0].severity == "warning"


def test_short_chunks_get_no_truncation_warning() -> None:
    corpus, store, embedder = _case(long=False)
    result = check_index(CheckIndexSettings(sample=None, seed=1), store, embedder, corpus)
    assert not [f for f in result.findings if f.kind == "truncated_text"]


def test_password_in_a_store_spec_warns_on_the_cli_without_showing_it() -> None:
    from click.testing import CliRunner

    from indexcheck.cli.app import cli

    spec = "pgvector:postgresql://me:canary-pw-123@127.0.0.1:1/rag?table=chunks"
    res = CliRunner().invoke(cli, ["probe-scale", "--store", spec])
    assert res.exit_code == 3  # nothing listens on port 1: could not finish
    assert "PGPASSWORD" in res.stderr and "warning:" in res.stderr
    assert "canary-pw-123" not in res.stderr + res.stdout


@pytest.mark.parametrize("sample", [None, 30])
def test_truncated_count_is_the_same_cold_and_from_the_cache(tmp_path, sample) -> None:
    """The second run serves every text from --cache; its model reads nothing, yet the
    chunks it would have cut are the same (15 instead of 1,674 on a real corpus before)."""
    from indexcheck.embedders.cache import EmbeddingCache

    texts = [f"chunk {i} about topic {i}" + (" and more words" * 9 if i % 3 else "")
             for i in range(30)]  # fmt: skip
    ids = [f"c{i}" for i in range(30)]
    corpus = corpus_from_pairs(ids, texts)
    store = MemoryStore(ids, HashEmbedder(dimension=16).embed([t[:50] for t in texts]))
    counts = []
    for _run in ("cold", "cached"):
        cache = EmbeddingCache(tmp_path / "cache.sqlite")
        embedder = CachedEmbedder(CuttingEmbedder(), cache)
        result = check_index(CheckIndexSettings(sample=sample, seed=1), store, embedder, corpus)
        cache.close()
        warns = [f for f in result.findings if f.kind == "truncated_text"]
        counts.append(sorted(warns[0].chunk_ids) if warns else [])
    assert len(counts[0]) == 20
    assert counts[1] == counts[0]


def test_a_prefixed_embedder_still_names_the_long_chunk() -> None:
    """With ?prefix= the model records the prefixed text as cut; the warning still names
    the chunk (its hash is of the bare text)."""
    from indexcheck.embedders.prefixes import PrefixedEmbedder

    texts = [f"chunk {i} about topic {i}" for i in range(30)]
    texts[7] = "a very long chunk " * 20
    ids = [f"c{i}" for i in range(30)]
    inner = CuttingEmbedder()
    store = MemoryStore(ids, HashEmbedder(dimension=16).embed([("p: " + t)[:50] for t in texts]))
    embedder = CachedEmbedder(PrefixedEmbedder(inner, "p: "), None)
    result = check_index(
        CheckIndexSettings(sample=None), store, embedder, corpus_from_pairs(ids, texts)
    )
    (warn,) = [f for f in result.findings if f.kind == "truncated_text"]
    assert warn.chunk_ids == ["c7"]
