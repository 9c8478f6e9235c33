"""Indexes built by LangChain and LlamaIndex on their defaults, judged by the pure parts.

For every layout: the correct build matches its texts; the positional-cache build is one
chain per repeat, naming that repeat (and, in build order, one stretch per repeat, +1 then
+2, blamed on the right repeat); the foreign-model build is model_mismatch. LlamaIndex's
metadata header gives embedded_text_differs on bare texts and passes with its reader or
with ``--embed-template``.
"""

from __future__ import annotations

import numpy as np
import pytest

from indexcheck.commands.check_index.shift.chains import blame_stretches, shift_chains, stretches_of
from indexcheck.commands.check_index.text_differs import LowCosineVerdict, explain_low_cosines
from indexcheck.inputs.embed_text import EmbedTemplate
from tests.builders.framework_corpus import framework_corpus
from tests.frameworks.readers import compare, read_rows, repeated_groups

ALL = [
    ("langchain", "faiss"),
    ("langchain", "chroma"),
    ("langchain", "pgvector"),
    ("langchain", "pgvectorstore"),
    ("llamaindex", "simple"),
    ("llamaindex", "faiss"),
    ("llamaindex", "chroma"),
    ("llamaindex", "pgvector"),
]
THRESHOLD = 0.999


def texts_as_embedded(framework: str, rows) -> list[str]:
    """What the framework sent to the model: LlamaIndex's reader output, else the text."""
    if framework == "llamaindex":
        assert rows.embedded is not None
        return rows.embedded
    return rows.texts


def verdict(framework_index, framework: str, layout: str, mode: str, bare: bool = False):
    rows = read_rows(framework_index(framework, layout, mode))
    texts = rows.texts if bare else texts_as_embedded(framework, rows)
    got = compare(rows, texts, THRESHOLD)
    return rows, got, explain_low_cosines(got.cosines, THRESHOLD, len(got.holds), got.own_nearest)


@pytest.mark.parametrize(("framework", "layout"), ALL)
def test_correct_index_passes(framework_index, framework: str, layout: str) -> None:
    rows, got, why = verdict(framework_index, framework, layout, "correct")
    assert rows.ids == framework_corpus().ids
    assert why.verdict is LowCosineVerdict.OK, why.details
    assert float(got.cosines.min()) >= THRESHOLD


@pytest.mark.parametrize(("framework", "layout"), ALL)
def test_positional_cache_shift_is_one_chain_per_repeat(
    framework_index, framework: str, layout: str
) -> None:
    rows, got, why = verdict(framework_index, framework, layout, "shifted")
    assert why.verdict is LowCosineVerdict.SHIFT
    corpus = framework_corpus()
    result = shift_chains(got.holds, repeated_groups())
    assert len(result.chains) == 2
    named = [ch.before.ids for ch in result.chains if ch.before is not None]
    repeats = sorted(
        tuple(sorted([corpus.ids[f], corpus.ids[r]])) for r, f in corpus.repeat_of.items()
    )
    assert sorted(named) == repeats
    # chains run in build order (the ids are not sorted that way)
    pos = {cid: p for p, cid in enumerate(corpus.ids)}
    for ch in result.chains:
        p = [pos[c] for c in ch.ids]
        assert p == sorted(p)
    # with the build order known: +1 then +2, blamed on the 1st and the 2nd repeat
    offsets = {pos[h]: pos[t] - pos[h] for h, t in got.holds.items()}
    runs = stretches_of(offsets)
    assert [r[2] for r in runs] == [1, 2]
    blamed = blame_stretches(runs, corpus.repeat_of)
    assert [s.repeat_position for s in blamed] == sorted(corpus.repeat_of)


@pytest.mark.parametrize(("framework", "layout"), ALL)
def test_foreign_model_is_model_mismatch(framework_index, framework: str, layout: str) -> None:
    _, got, why = verdict(framework_index, framework, layout, "foreign")
    assert not got.holds
    assert why.verdict is LowCosineVerdict.MODEL_MISMATCH, why.details


@pytest.mark.parametrize("layout", ["simple", "faiss", "chroma", "pgvector"])
def test_llamaindex_metadata_header_is_embedded_text_differs(framework_index, layout: str) -> None:
    _, got, why = verdict(framework_index, "llamaindex", layout, "correct", bare=True)
    assert 0.8 < float(np.median(got.cosines)) < THRESHOLD
    assert why.verdict is LowCosineVerdict.EMBEDDED_TEXT_DIFFERS, why.details
    assert why.details["own_text_nearest_share"] == 1.0
    assert "--embed-template" in why.advice and "--embedder" in why.advice


@pytest.mark.parametrize("layout", ["simple", "faiss", "chroma", "pgvector"])
def test_llamaindex_passes_with_embed_template(framework_index, layout: str) -> None:
    rows = read_rows(framework_index("llamaindex", layout, "correct"))
    corpus = framework_corpus()
    template = EmbedTemplate.parse(r"{metadata}\n\n{text}")
    texts = template.render_all(rows.ids, rows.texts, corpus.metadata)
    got = compare(rows, texts, THRESHOLD)
    assert float(got.cosines.min()) >= THRESHOLD
