"""Upstash through the emulator, which implements the documented filter syntax
(tests/emulators/upstash_filter.py) and refuses what it cannot parse, exercised through the
real ``upstash-vector`` SDK: the store's filtered search returns numpy's top-k over the
matching rows, and exact truth under the filter equals numpy."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from indexcheck.commands.compare_ann import CompareAnnSettings, compare_ann
from indexcheck.commands.kit.filtered_truth import filtered_ground_truth
from indexcheck.errors import FilterError
from indexcheck.filters import ENGINE_MISSING, evaluate, parse_filter
from indexcheck.stores import open_store
from tests.builders.upstash import TEST_PARAMS
from tests.emulators.upstash_emulator import UpstashEmulator
from tests.emulators.upstash_filter import FilterSyntaxError, keep

upstash_vector = pytest.importorskip("upstash_vector")

N, D, K = 200, 8, 5
FILTERS: list[dict[str, Any]] = [
    {"profile": "ckd"},
    {"year": {"$gte": 2018}},
    {"$or": [{"profile": "dm"}, {"year": {"$lt": 2012}}]},
    {"profile": {"$in": ["ckd", "htn"]}, "lang": "fr"},
    {"profile": {"$nin": ["copd"]}, "year": {"$lte": 2015}},
    {"extra": {"$exists": True}},
    {"profile": {"$ne": "dm"}},
]


def _data() -> tuple[list[str], np.ndarray, list[dict[str, Any]], np.ndarray]:
    rng = np.random.default_rng(2)
    vecs = rng.standard_normal((N, D)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    meta: list[dict[str, Any]] = []
    for i in range(N):
        m: dict[str, Any] = {"year": int(rng.integers(2010, 2025)), "lang": ["en", "fr"][i % 2]}
        if i % 10:  # every tenth row has no profile: $ne/$nin there follow Upstash's wording
            m["profile"] = ["ckd", "dm", "htn", "copd"][int(rng.integers(4))]
        if i % 7 == 0:
            m["extra"] = "x"
        meta.append(m)
    return [f"v{i}" for i in range(N)], vecs, meta, rng.standard_normal((6, D)).astype(np.float32)


@pytest.fixture(scope="module")
def store() -> Any:
    ids, vecs, meta, _ = _data()
    with UpstashEmulator(token="tok", exact=True) as emu:
        url = emu.add_index("filtered", D, "COSINE")
        index = upstash_vector.Index(url=url, token="tok", retries=0)
        index.upsert(
            vectors=[
                {"id": ids[i], "vector": vecs[i].tolist(), "metadata": meta[i]} for i in range(N)
            ]
        )
        import os

        os.environ["UPSTASH_VECTOR_REST_TOKEN"] = "tok"
        with open_store(f"upstash:{url}?{TEST_PARAMS}") as s:
            yield s


def _numpy_top(f: dict[str, Any]) -> list[list[str]]:
    ids, vecs, meta, queries = _data()
    rows = np.flatnonzero(evaluate(parse_filter(f), meta, missing=ENGINE_MISSING["upstash"]))
    qn = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    order = np.argsort(-(qn @ vecs[rows].T), axis=1, kind="stable")[:, :K]
    return [[ids[rows[j]] for j in r] for r in order]


@pytest.mark.parametrize("f", FILTERS, ids=[json.dumps(f) for f in FILTERS])
def test_upstash_filter_through_the_sdk(store: Any, f: dict[str, Any]) -> None:
    _, _, _, queries = _data()
    _, I = store.query(queries, K, f)
    assert [[v for v in row if v is not None] for row in I] == _numpy_top(f)
    truth, _ = filtered_ground_truth(store, queries, [f] * len(queries), K, "cos")
    assert truth.ids.tolist() == _numpy_top(f)


def test_compare_ann_on_upstash_with_filters(store: Any) -> None:
    _, _, _, queries = _data()
    filters = [FILTERS[i % len(FILTERS)] for i in range(len(queries))]
    r = compare_ann(CompareAnnSettings(k=K, fetch=[K], filters=filters), store, queries)
    assert r.by_fetch[0].recall_at_k == 1.0 and r.by_fetch[0].short_result_rate == 0.0


@pytest.mark.parametrize(
    "text", ["profile ~ 'x'", "profile = ", "(profile = 'a'", "and = 1", "year > 'a'", "x IN 1"]
)
def test_the_emulator_refuses_what_it_cannot_parse(text: str) -> None:
    with pytest.raises(FilterSyntaxError):
        keep(text, ["a"], {"a": {"metadata": {"profile": "a"}}})


def test_an_unquotable_value_is_refused_before_the_request(store: Any) -> None:
    with pytest.raises(FilterError, match="upstash store cannot quote"):
        store.query(_data()[3], K, {"profile": 'it\'s "both"'})
