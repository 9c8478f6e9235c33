"""The same filters on every local engine, through the store seam: Chroma, Qdrant local,
LanceDB, Milvus Lite, Parquet and FAISS. On each, exact truth under the filter (one
streamed pass, grouped by distinct filter) equals numpy over the matching rows, the
store's filtered search returns only matching rows (and, where the search is exact, the
same top-k), and compare-ann runs with per-query filters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from indexcheck.commands.compare_ann import CompareAnnSettings, compare_ann
from indexcheck.commands.kit.filtered_truth import filtered_ground_truth
from indexcheck.errors import FilterError
from indexcheck.filters import ENGINE_MISSING, evaluate, parse_filter
from indexcheck.stores import StoreOptions, open_store

N, D, K = 300, 8, 5
PROFILES = ["ckd", "dm", "htn", "copd"]
FILTERS: list[dict[str, Any]] = [
    {"profile": "ckd"},
    {"year": {"$gte": 2018}},
    {"$or": [{"profile": "dm"}, {"year": {"$lt": 2012}}]},
    {"profile": {"$in": ["ckd", "htn"]}, "lang": "fr"},
    {"profile": {"$ne": "copd"}, "year": {"$lte": 2015}},
]
IDS = [json.dumps(f) for f in FILTERS]
#: (store scheme, search is exact): an exact one returns numpy's top-k under the filter
ENGINES = [
    ("chroma", False),
    ("qdrant", True),
    ("lancedb", True),
    ("milvus", True),
    ("parquet", True),
]


def _data() -> tuple[list[str], np.ndarray, list[dict[str, Any]], np.ndarray]:
    rng = np.random.default_rng(5)
    vecs = rng.standard_normal((N, D)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    meta = [
        {
            "profile": PROFILES[int(rng.integers(4))],
            "year": int(rng.integers(2010, 2025)),
            "lang": ["en", "fr"][int(rng.integers(2))],
        }
        for _ in range(N)
    ]
    queries = rng.standard_normal((12, D)).astype(np.float32)
    return [str(i) for i in range(N)], vecs, meta, queries


def _build(scheme: str, root: Path) -> str:
    ids, vecs, meta, _ = _data()
    texts = [f"text {i}" for i in ids]
    if scheme == "chroma":
        from tests.builders.chroma import build

        return build(root, ids, vecs, texts, "cosine", metadatas=meta)
    if scheme == "qdrant":
        from tests.builders.qdrant import build as build_qdrant

        return build_qdrant(root, ids, vecs, texts, "cosine", payload=meta)
    if scheme == "milvus":
        from tests.builders.milvus import build as build_milvus

        extra = {k: [m[k] for m in meta] for k in ("profile", "year", "lang")}
        return build_milvus(root, ids, vecs, texts, "cosine", extra=extra)
    if scheme == "lancedb":
        import lancedb

        db = lancedb.connect(str(root / "lancedb"))
        cols: dict[str, Any] = {
            "id": pa.array(ids),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), D),
            "text": pa.array(texts),
            **{k: pa.array([m[k] for m in meta]) for k in ("profile", "year", "lang")},
        }
        db.create_table("chunks", pa.table(cols))
        return f"lancedb:{root / 'lancedb'}?table=chunks&metric=cosine"
    assert scheme == "parquet"
    path = root / "v.parquet"
    table = pa.table(
        {
            "id": pa.array(ids),
            "vector": pa.array(vecs.tolist(), pa.list_(pa.float32())),
            "text": pa.array(texts),
            "metadata": pa.array(meta),
        }
    )
    pq.write_table(table, path)
    return f"parquet:{path}?metric=cosine"


@pytest.fixture(scope="module", params=ENGINES, ids=[e[0] for e in ENGINES])
def engine(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    scheme, exact = request.param
    root = tmp_path_factory.mktemp(scheme)
    spec = _build(scheme, root)
    store = open_store(spec, StoreOptions(trust_pickle=True))  # qdrant local pickles points
    yield scheme, exact, store
    store.close()


def _numpy_topk(f: dict[str, Any], scheme: str, k: int) -> tuple[list[list[str]], int]:
    ids, vecs, meta, queries = _data()
    rows = np.flatnonzero(evaluate(parse_filter(f), meta, missing=ENGINE_MISSING[scheme]))
    qn = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    order = np.argsort(-(qn @ vecs[rows].T), axis=1, kind="stable")[:, :k]
    return [[ids[rows[j]] for j in r] for r in order], int(rows.size)


def test_exact_truth_under_every_filter_in_one_pass(engine: Any) -> None:
    scheme, _, store = engine
    _, _, _, queries = _data()
    # every query carries one of the filters (several share one): one pass for all
    filters = [FILTERS[i % len(FILTERS)] for i in range(len(queries))]
    truth, ft = filtered_ground_truth(store, queries, filters, K, "cos")
    assert len(ft.per_filter) == len(FILTERS)
    for i, f in enumerate(filters):
        want, matching = _numpy_topk(f, scheme, K)
        assert truth.ids[i].tolist() == want[i], (scheme, f)
        assert ft.matching[i] == matching


@pytest.mark.parametrize("f", FILTERS, ids=IDS)
def test_store_search_under_the_filter(engine: Any, f: dict[str, Any]) -> None:
    scheme, exact, store = engine
    ids, _, meta, queries = _data()
    _, Ix = store.query(queries, K, f)
    match = set(np.flatnonzero(evaluate(parse_filter(f), meta, missing=ENGINE_MISSING[scheme])))
    got = [[v for v in row if v is not None] for row in Ix]
    assert all(int(v) in match for row in got for v in row), scheme
    want, _ = _numpy_topk(f, scheme, K)
    if exact:
        assert got == want, scheme
    else:  # HNSW: approximate, but on 300 rows it finds nearly all
        hits = sum(len(set(g) & set(w)) for g, w in zip(got, want, strict=True))
        assert hits >= 0.9 * sum(len(w) for w in want)


def test_compare_ann_with_per_query_filters(engine: Any) -> None:
    scheme, exact, store = engine
    _, _, _, queries = _data()
    filters = [FILTERS[i % len(FILTERS)] for i in range(len(queries))]
    result = compare_ann(CompareAnnSettings(k=K, fetch=[K], filters=filters), store, queries)
    row = result.by_fetch[0]
    assert row.short_result_rate == 0.0
    if exact:
        assert row.recall_at_k == 1.0 and row.best_miss_rate == 0.0
    assert {b["bucket"] for b in row.by_selectivity or []} <= {"10-50%", ">50%"}
    assert result.query_filters is not None and len(set(result.query_filters)) == len(FILTERS)


def test_unknown_field_names_the_known_ones(engine: Any) -> None:
    _, _, store = engine
    _, _, _, queries = _data()
    with pytest.raises(FilterError, match="did you mean 'profile'"):
        filtered_ground_truth(store, queries, [{"profle": "ckd"}] * len(queries), K, "cos")


def test_chroma_refuses_exists_naming_it(tmp_path: Path) -> None:
    with open_store(_build("chroma", tmp_path)) as store:
        with pytest.raises(FilterError, match=r"chroma store cannot express '\$exists'"):
            store.query(_data()[3], K, {"year": {"$exists": True}})


def test_a_store_that_cannot_filter_says_so(tmp_path: Path) -> None:
    from indexcheck.stores.faiss.store import write_faiss_folder

    ids, vecs, _, queries = _data()
    write_faiss_folder(tmp_path / "f", ids, vecs)
    with open_store(f"faiss:{tmp_path / 'f'}") as store:
        with pytest.raises(FilterError, match="holds no metadata"):
            store.query(queries, K, {"profile": "ckd"})


def test_lancedb_postfilter_is_short_and_prefilter_fixes_it(tmp_path: Path) -> None:
    """LanceDB with an IVF_PQ index searched with prefilter=False filters the k nearest
    afterwards: a 2% filter leaves short results, and the recommendation names
    prefiltering; with prefilter=True the same search is full."""
    import lancedb
    from lancedb.index import IvfPq

    rng = np.random.default_rng(3)
    n, d = 1000, 16
    vecs = rng.standard_normal((n, d)).astype(np.float32)
    cols = {
        "id": pa.array([str(i) for i in range(n)]),
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1)), d),
        "profile": pa.array(["rare" if i % 50 == 0 else "common" for i in range(n)]),
    }
    db = lancedb.connect(str(tmp_path / "db"))
    tbl = db.create_table("chunks", pa.table(cols))
    tbl.create_index(
        "vector", config=IvfPq(distance_type="cosine", num_partitions=4, num_sub_vectors=4)
    )
    queries = rng.standard_normal((20, d)).astype(np.float32)
    filters = [{"profile": "rare"}] * len(queries)
    rates = {}
    for pre in ("false", "true"):
        spec = f"lancedb:{tmp_path / 'db'}?table=chunks&prefilter={pre}"
        with open_store(spec) as store:
            result = compare_ann(
                CompareAnnSettings(k=K, fetch=[K], filters=filters), store, queries
            )
        rates[pre] = result.by_fetch[0].short_result_rate
        if pre == "false":
            assert "prefilter=True" in result.recommendation
    assert rates["false"] is not None and rates["false"] > 0.5
    assert rates["true"] == 0.0


def test_a_store_whose_query_takes_no_filter_is_exit_2() -> None:
    from indexcheck.testing import MemoryStore

    ids, vecs, _, queries = _data()
    store = MemoryStore(ids, vecs)
    with pytest.raises(FilterError, match="cannot filter its search") as err:
        compare_ann(
            CompareAnnSettings(k=K, fetch=[K], filters=[{"profile": "ckd"}] * len(queries)),
            store,
            queries,
        )
    assert err.value.exit_code == 2


def test_injection_through_the_milvus_store_matches_literally(tmp_path: Path) -> None:
    store = open_store(_build("milvus", tmp_path))
    evil = 'ckd" or pk != "'
    _, Ix = store.query(_data()[3], K, {"profile": evil})
    assert all(v is None for v in Ix.ravel())  # nothing matches the literal text
    with pytest.raises(FilterError, match="not a plain identifier"):
        store.query(_data()[3], K, {'profile == "x" or pk': "y"})
    store.close()
