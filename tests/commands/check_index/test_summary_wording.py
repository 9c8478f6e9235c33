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
