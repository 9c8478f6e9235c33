"""200 seeded random portable filters on a collection LangChain wrote (its vector index
declaring the filter paths): the rows Atlas's pre-filter keeps and the top-k it returns
equal numpy's, under MQL's own missing-field rules."""

from __future__ import annotations

import random

import numpy as np
import pytest

from indexcheck.filters import ENGINE_MISSING, evaluate, parse_filter
from indexcheck.stores import open_store
from indexcheck.testing import HashEmbedder
from tests.builders import mongodb as build
from tests.builders.search_engines import lc_embeddings
from tests.emulators.mongodb_emulator import Emulator
from tests.stores.searchengine_support import N, corpus, random_filter, truth

pytest.importorskip("langchain_mongodb")


def test_seeded_filters_return_exactly_numpys_rows_and_top_k() -> None:
    e = Emulator()
    try:
        texts, metas = corpus()
        texts = [f"{t} (copy {i})" for i, t in enumerate(texts)]  # no ties among repeats
        ids = build.langchain_mongo(e.url, "rag", "docs", texts, metas, lc_embeddings(),
                                    filters=["topic", "year", "draft", "lang"])  # fmt: skip
        vecs = HashEmbedder(32).embed(texts)
        rng = random.Random(3)
        queries = vecs[rng.sample(range(N), 10)] + 0.05
        spec = f"mongodb:{e.url}?db=rag&collection=docs&num_candidates={N}"
        with open_store(spec) as store:
            for n in range(200):
                flt = random_filter(rng)
                q = queries[n % 10]
                _, I = store.query(q[None], 5, filter=flt)
                assert [i for i in I[0] if i is not None] == truth(
                    "mongodb", vecs, metas, ids, q, flt, 5
                ), flt
                if n % 10 == 0:  # every row the filter keeps, no other
                    mask = evaluate(parse_filter(flt), metas, missing=ENGINE_MISSING["mongodb"])
                    _, every = store.query(q[None], N, filter=flt)
                    got = {i for i in every[0] if i is not None}
                    assert got == {ids[i] for i in np.flatnonzero(mask)}, flt
    finally:
        e.stop()
