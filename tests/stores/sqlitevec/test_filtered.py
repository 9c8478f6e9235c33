"""sqlite-vec filtered search on the real engine: 200 seeded random portable filters per
layout (LangChain's JSON ``metadata``, vec0 metadata columns pushed into sqlite-vec's own KNN,
and an llm collection's ``embeddings`` table) return exactly numpy's rows and top-k."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from indexcheck.filters import ENGINE_MISSING, evaluate, parse_filter
from indexcheck.stores import open_store
from indexcheck.testing import HashEmbedder
from tests.builders import sqlitevec as builder
from tests.util import documented_score

pytest.importorskip("apsw")
pytest.importorskip("sqlite_vec")

N, K = 150, 5


def corpus() -> tuple[list[str], list[dict[str, Any]]]:
    texts = [f"item {i} of the catalogue, part {i % 11}" for i in range(N)]
    metas = [
        {"topic": f"t{i % 5}", "year": 2000 + i % 25, "draft": i % 5 == 0}
        | ({"lang": "en" if i % 3 else "de"} if i % 7 else {})  # rows that lack 'lang'
        for i in range(N)
    ]
    return texts, metas


def random_filter(rng: random.Random, vec0: bool) -> dict[str, Any]:
    """What each layout can express: vec0 columns take a flat AND of comparisons and $in."""
    parts: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 3)):
        kinds = ["topic", "year", "yearin"] + ([] if vec0 else ["draft", "lang", "or", "nin"])
        kind = rng.choice(kinds)
        if kind == "topic":
            parts.append({"topic": {rng.choice(["$eq", "$ne"]): f"t{rng.randrange(6)}"}})
        elif kind == "year":
            op = rng.choice(["$gt", "$gte", "$lt", "$lte"])
            parts.append({"year": {op: 2000 + rng.randrange(25) + rng.choice([0, 0.5])}})
        elif kind == "yearin":
            parts.append({"year": {"$in": rng.sample(range(2000, 2025), rng.randint(1, 5))}})
        elif kind == "nin":
            parts.append({"year": {"$nin": rng.sample(range(2000, 2025), 4)}})
        elif kind == "draft":
            parts.append({"draft": rng.choice([True, False])})
        elif kind == "lang":
            exists = {"lang": {"$exists": rng.random() < 0.5}}
            parts.append(rng.choice([exists, {"lang": {"$ne": "en"}}, {"lang": {"$nin": ["de"]}}]))
        else:
            parts.append({"$or": [{"topic": f"t{rng.randrange(5)}"}, {"year": {"$lt": 2006}}]})
    return parts[0] if len(parts) == 1 else {"$and": parts}


@pytest.mark.parametrize("layout", ["langchain", "vec0", "llm"])
def test_200_seeded_filters_return_numpys_rows_and_top_k(tmp_path: Path, layout: str) -> None:
    texts, metas = corpus()
    vecs = HashEmbedder(32).embed(texts)
    if layout == "langchain":
        from indexcheck.integrations.langchain.embeddings import embeddings

        spec = builder.langchain(tmp_path / "f.db", texts, metas,
                                 embeddings("py:indexcheck.testing:HASH32"))  # fmt: skip
        ids, order_by = [str(i + 1) for i in range(N)], "l2"
    elif layout == "llm":
        ids, order_by = [f"x{i}" for i in range(N)], "1-cos"  # cos, nearest first
        spec = builder.llm_collection(tmp_path / "f.db", "c", ids, vecs, texts, metas)
    else:
        cols = {"topic": "text", "year": "integer"}
        metas = [{c: m[c] for c in cols} for m in metas]
        ids, order_by = [f"x{i}" for i in range(N)], "1-cos"
        spec = builder.build(tmp_path, ids, vecs, texts, "cosine", metadatas=metas, columns=cols)
    rng = random.Random(17)
    queries = vecs[rng.sample(range(N), 20)] + np.float32(0.05)
    nonempty = 0
    with open_store(spec) as store:
        for n in range(200):
            flt = random_filter(rng, layout == "vec0")
            mask = evaluate(parse_filter(flt), metas, missing=ENGINE_MISSING["sqlitevec"])
            q = queries[n % len(queries)]
            d = documented_score(order_by, vecs, q)
            rows = [i for i in np.argsort(d, kind="stable") if mask[i]]
            _, I = store.query(q[None], K, filter=flt)
            assert [i for i in I[0] if i is not None] == [ids[i] for i in rows[:K]], flt
            if n % 10 == 0:  # every matching row, not only the top k
                _, every = store.query(q[None], N, filter=flt)
                assert {i for i in every[0] if i is not None} == {ids[i] for i in rows}, flt
            nonempty += bool(rows)
    assert nonempty > 120


def test_a_fractional_bound_on_an_integer_column_keeps_its_meaning(tmp_path: Path) -> None:
    """sqlite-vec truncates a fraction compared with an integer vec0 column (``year < 2020.5``
    reads as ``year < 2020``); the translation sends the integer bound that means the same."""
    ids = [f"x{i}" for i in range(50)]
    vecs = HashEmbedder(8).embed([f"t{i}" for i in range(50)])
    metas = [{"year": 2000 + i % 25} for i in range(50)]
    spec = builder.build(tmp_path, ids, vecs, None, "l2", metadatas=metas,
                         columns={"year": "integer"})  # fmt: skip
    conn = builder.apsw_connection(tmp_path / "vec.db")
    raw = list(conn.execute("SELECT year FROM chunks WHERE embedding MATCH ? AND k = 50 "
                            "AND year < ?", (vecs[0].tobytes(), 2020.5)))  # fmt: skip
    conn.close()
    assert len(raw) == 40  # the engine's own reading: 2020 left out
    with open_store(spec) as store:
        for flt in ({"year": {"$lt": 2020.5}}, {"year": {"$gte": 2020.5}},
                    {"year": {"$lte": 2003.5}}, {"year": {"$gt": 2003.5}},
                    {"year": {"$ne": 2020.5}}, {"year": {"$in": [2020.5, 2021]}},
                    {"year": {"$nin": [2020.5, 2021]}}, {"year": {"$gte": 2020.0}}):  # fmt: skip
            mask = evaluate(parse_filter(flt), metas, missing=ENGINE_MISSING["sqlitevec"])
            _, I = store.query(vecs[:1], 50, filter=flt)
            assert {i for i in I[0] if i is not None} == {ids[i] for i in np.flatnonzero(mask)}
        from indexcheck.errors import FilterError

        with pytest.raises(FilterError, match="never equals a fraction"):
            store.query(vecs[:1], 5, filter={"year": 2020.5})
