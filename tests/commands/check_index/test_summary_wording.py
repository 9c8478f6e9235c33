"""check-index's terminal summary says only what is true of the run it summarises."""

from __future__ import annotations

import numpy as np

from indexcheck.commands.check_index import CheckIndexSettings, check_index
from indexcheck.commands.check_index.report import check_index_summary
from indexcheck.inputs.corpus import corpus_from_pairs
from indexcheck.output.model import Text
from indexcheck.testing import HashEmbedder, MemoryStore


def _lines(result) -> list[str]:
    return [b.text for s in check_index_summary(result) for b in s.blocks if isinstance(b, Text)]


def test_rows_cut_from_the_json_do_not_claim_a_rows_file_was_written() -> None:
    ids = [f"c{i}" for i in range(20)]
    texts = [f"text {i}" for i in range(20)]
    store = MemoryStore(ids, HashEmbedder(16).embed(texts), texts)
    result = check_index(CheckIndexSettings(sample=None), store, HashEmbedder(16), None)
    result.chunks_truncated = True  # as above 100,000 chunks, with no --rows given
    said = "\n".join(_lines(result))
    assert "every row is in --rows" not in said
    assert "--rows FILE writes every row" in said


def test_rows_cut_from_the_json_say_none_when_every_chunk_is_ok() -> None:
    ids = [f"c{i}" for i in range(20)]
    texts = [f"text {i}" for i in range(20)]
    store = MemoryStore(ids, HashEmbedder(16).embed(texts), texts)
    result = check_index(CheckIndexSettings(sample=None), store, HashEmbedder(16), None)
    assert result.ok
    result.chunks, result.chunks_truncated = [], True  # as above 100,000 chunks, all ok
    said = "\n".join(_lines(result))
    assert "the 0 rows" not in said
    assert "chunks in the JSON: none, every chunk is ok" in said


def test_rows_cut_from_the_json_name_the_rows_file_given(tmp_path) -> None:
    from indexcheck import api

    ids = [f"c{i}" for i in range(20)]
    texts = [f"text {i}" for i in range(20)]
    vecs = HashEmbedder(16).embed(texts)
    vecs[3] = vecs[4]  # one row that is not ok
    rows = tmp_path / "rows.parquet"
    result = api.check_index(
        MemoryStore(ids, vecs, texts), corpus_from_pairs(ids, texts), HashEmbedder(16),
        sample=None, stream=True, rows=rows,
    )  # fmt: skip
    assert rows.exists() and not result.ok
    result.chunks = [c for c in result.chunks if c.status != "ok"]
    result.chunks_truncated = True  # as above 100,000 chunks
    said = "\n".join(_lines(result))
    assert f"only the {len(result.chunks)} rows that are not ok" in said
    assert f"every row is in {rows}" in said and "--rows FILE" not in said


def test_a_passing_index_with_repeats_gets_a_risk_note_not_a_warning() -> None:
    ids = [f"c{i}" for i in range(20)]
    texts = [f"text {i % 15}" for i in range(20)]
    vecs = HashEmbedder(16).embed(texts)
    result = check_index(
        CheckIndexSettings(sample=None), MemoryStore(ids, vecs, texts), HashEmbedder(16),
        corpus_from_pairs(ids, texts),
    )  # fmt: skip
    assert result.ok and np.isclose(result.min_cosine or 0, 1.0)
    (dup,) = [f for f in result.findings if f.kind == "duplicate_text"]
    assert dup.severity == "info" and "misaligns every vector" not in dup.message
