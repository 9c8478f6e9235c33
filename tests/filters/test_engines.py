"""Each engine, built directly with its own SDK, returns under the translated filter
exactly the rows that numpy evaluation of the portable filter says match, with the
missing-field semantics documented for that engine (ENGINE_MISSING)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from indexcheck.errors import FilterError
from indexcheck.filters import (
    ENGINE_MISSING,
    Missing,
    Node,
    Op,
    check_fields,
    evaluate,
    metadata_fields,
    parse_filter,
    translate,
)
from indexcheck.filters.grammar import iter_conds

N, DIM, K = 200, 8, 10


def make_rows(seed: int = 7) -> list[dict[str, Any]]:
    """200 metadata rows: profile (4 values, ~10% missing), year (ints, ~10% missing),
    score (floats, ~5% missing), flag (bool, ~20% missing), lang (always there)."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(N):
        row: dict[str, Any] = {"lang": ["en", "fr"][int(rng.integers(2))]}
        if rng.random() > 0.1:
            row["profile"] = ["ckd", "dm", "htn", "copd"][int(rng.integers(4))]
        if rng.random() > 0.1:
            row["year"] = int(rng.integers(2010, 2025))
        if rng.random() > 0.05:
            row["score"] = round(float(rng.random()), 3)
        if rng.random() > 0.2:
            row["flag"] = bool(rng.integers(2))
        rows.append(row)
    return rows


ROWS = make_rows()
VECS = np.random.default_rng(11).standard_normal((N, DIM)).astype(np.float32)
VECS /= np.linalg.norm(VECS, axis=1, keepdims=True)
QUERY = VECS[3] * 0.5 + VECS[150] * 0.5
FIELDS = ["profile", "year", "score", "flag", "lang"]

FILTERS: list[dict[str, Any]] = [
    {"profile": "ckd"},
    {"profile": {"$ne": "ckd"}},
    {"profile": {"$in": ["ckd", "dm"]}},
    {"profile": {"$nin": ["ckd", "dm"]}},
    {"year": {"$gte": 2020}},
    {"year": {"$gt": 2015, "$lte": 2018}},
    {"year": {"$lt": 2012}},
    {"year": 2020},
    {"year": {"$ne": 2020}},
    {"year": {"$in": [2011, 2013, 2017]}},
    {"year": {"$nin": [2011, 2013]}},
    {"year": {"$gte": 2019.5}},
    {"score": {"$gt": 0.5}},
    {"score": {"$lte": 0.25}},
    {"score": {"$gte": 0.3, "$lt": 0.6}},
    {"score": {"$gt": 2}},
    {"flag": True},
    {"flag": {"$ne": True}},
    {"$or": [{"profile": "ckd"}, {"year": {"$lt": 2012}}]},
    {
        "$and": [
            {"profile": {"$in": ["dm", "htn"]}},
            {"$or": [{"flag": False}, {"score": {"$gt": 0.8}}]},
        ]
    },
    {"profile": "dm", "lang": "fr"},
    {"year": {"$exists": False}},
    {"flag": {"$exists": True}, "profile": {"$ne": "copd"}},
]
IDS = [json.dumps(f) for f in FILTERS]


def uses_exists(f: dict[str, Any]) -> bool:
    return "$exists" in json.dumps(f)


def compares_a_boolean(f: dict[str, Any]) -> bool:
    conds = [c for c in iter_conds(parse_filter(f)) if c.op is not Op.EXISTS]
    return any(isinstance(v, bool) for c in conds for v in np.atleast_1d(c.value).tolist())


def truth(f: dict[str, Any], engine: str) -> set[int]:
    """Exact truth: the matching row numbers under the engine's missing-field semantics."""
    node = parse_filter(f)
    check_fields(node, metadata_fields(ROWS))
    return set(np.flatnonzero(evaluate(node, ROWS, missing=ENGINE_MISSING[engine])).tolist())


def top_k(match: set[int], k: int = K) -> list[int]:
    """Exact top-k by inner product (unit vectors: cosine) over the matching rows only."""
    idx = np.array(sorted(match), dtype=np.int64)
    if idx.size == 0:
        return []
    scores = VECS[idx] @ QUERY
    return idx[np.argsort(-scores, kind="stable")[:k]].tolist()


#: scores closer than this are a tie, which an exact engine may return in either order: the
#: query is the midpoint of rows 3 and 150, a tie that float32 sums break one way on one CPU
#: and the other way on another
TIE = 1e-6


def assert_top_k(got: list[int], match: set[int], k: int = K) -> None:
    """``got`` is an exact top-k of the matching rows by inner product: :func:`top_k` up to
    ties (scores within TIE, in float64): matching rows only, each once, in order of score,
    and no row left out that scores higher than one returned."""
    want = top_k(match, k)
    if got == want:
        return
    s = VECS.astype(np.float64) @ QUERY.astype(np.float64)
    assert len(got) == len(want), f"{len(got)} rows, not {len(want)}: {got}"
    assert len(set(got)) == len(got), f"a row twice: {got}"
    assert set(got) <= match, f"a row the filter excludes: {got} (want {want})"
    g = s[np.asarray(got, dtype=np.int64)]
    assert (np.diff(g) <= TIE).all(), f"not in order of score: {got} (want {want})"
    rest = np.array(sorted(match - set(got)), dtype=np.int64)
    assert rest.size == 0 or s[rest].max() <= g.min() + TIE, f"a better row left out: {got}"


def test_a_top_k_is_checked_up_to_ties_and_no_further() -> None:
    match = set(range(N))
    want = top_k(match)
    assert 3 in want and 150 in want  # the two rows the query is the midpoint of
    swapped = list(want)
    a, b = swapped.index(3), swapped.index(150)
    swapped[a], swapped[b] = swapped[b], swapped[a]
    assert_top_k(swapped, match)  # the tie, either way
    eleventh = top_k(match, K + 1)[-1]
    for bad, why in (
        (want[::-1], "not in order of score"),
        ([*want[:-1], want[0]], "a row twice"),
        ([*want[:-1], eleventh], "a better row left out"),
        (want[:-1], "rows, not"),
    ):
        with pytest.raises(AssertionError, match=why):
            assert_top_k(bad, match)
    with pytest.raises(AssertionError, match="a row the filter excludes"):
        assert_top_k(want, match - {want[4]})


def test_the_table_exercises_both_missing_semantics() -> None:
    differ = [
        f
        for f in FILTERS
        if evaluate(parse_filter(f), ROWS, missing=Missing.INCLUDE).sum()
        != evaluate(parse_filter(f), ROWS, missing=Missing.EXCLUDE).sum()
    ]
    assert len(differ) >= 4  # $ne / $nin on profile, year and flag
    assert all(0 < len(truth(f, "chroma")) < N for f in FILTERS if f != {"score": {"$gt": 2}})


# --- Chroma -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chroma_collection() -> Any:
    chromadb = pytest.importorskip("chromadb")
    client = chromadb.EphemeralClient()
    col = client.get_or_create_collection("filters_test", metadata={"hnsw:space": "cosine"})
    col.add(ids=[str(i) for i in range(N)], embeddings=VECS.tolist(), metadatas=ROWS)
    return col


@pytest.mark.parametrize("f", FILTERS, ids=IDS)
def test_chroma_where(chroma_collection: Any, f: dict[str, Any]) -> None:
    node = parse_filter(f)
    if uses_exists(f):
        with pytest.raises(FilterError, match="chroma store cannot express '\\$exists'"):
            translate(node, "chroma")
        return
    where = translate(node, "chroma", integer_fields={"year"})
    got = chroma_collection.get(where=where)["ids"]
    assert {int(i) for i in got} == truth(f, "chroma")


def test_chroma_truncates_a_fractional_bound_on_integers(chroma_collection: Any) -> None:
    """Why ``integer_fields`` exists: without it Chroma reads ``>= 2019.5`` as ``>= 2019``."""
    f = {"year": {"$gte": 2019.5}}
    raw = {int(i) for i in chroma_collection.get(where=translate(parse_filter(f), "chroma"))["ids"]}
    with_2019 = {i for i, r in enumerate(ROWS) if r.get("year") == 2019}
    assert with_2019 and raw == truth(f, "chroma") | with_2019
    assert translate(parse_filter(f), "chroma", integer_fields={"year"}) == {"year": {"$gte": 2020}}
    with pytest.raises(FilterError, match="'year' holds integers and the value is fractional"):
        translate(parse_filter({"year": 2019.5}), "chroma", integer_fields={"year"})


# --- Qdrant (local mode) --------------------------------------------------------------


@pytest.fixture(scope="module")
def qdrant() -> Any:
    qc = pytest.importorskip("qdrant_client")
    m = qc.models
    client = qc.QdrantClient(":memory:")
    client.create_collection(
        "filters", vectors_config=m.VectorParams(size=DIM, distance=m.Distance.DOT)
    )
    client.upsert(
        "filters",
        points=[m.PointStruct(id=i, vector=VECS[i].tolist(), payload=ROWS[i]) for i in range(N)],
    )
    yield client
    client.close()


@pytest.mark.parametrize("f", FILTERS, ids=IDS)
def test_qdrant_filter(qdrant: Any, f: dict[str, Any]) -> None:
    from qdrant_client import models as m

    flt = translate(parse_filter(f), "qdrant")
    assert isinstance(flt, m.Filter)
    want = truth(f, "qdrant")
    points, _ = qdrant.scroll("filters", scroll_filter=flt, limit=N + 1)
    assert {p.id for p in points} == want
    # local mode searches brute force: exact, as SearchParams(exact=True) asks of a server
    res = qdrant.query_points("filters", query=QUERY.tolist(), query_filter=flt, limit=K)
    assert_top_k([p.id for p in res.points], want)


# --- LanceDB ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lance_table(tmp_path_factory: pytest.TempPathFactory) -> Any:
    lancedb = pytest.importorskip("lancedb")
    pa = pytest.importorskip("pyarrow")
    data = {"id": list(range(N))}
    data |= {k: [r.get(k) for r in ROWS] for k in FIELDS}
    table = pa.table(
        {
            **data,
            "vector": pa.array(VECS.tolist(), type=pa.list_(pa.float32(), DIM)),
            "meta": pa.array([{k: r.get(k) for k in ("profile", "year")} for r in ROWS]),
        }
    )
    db = lancedb.connect(str(tmp_path_factory.mktemp("lance")))
    return db.create_table("filters", table)


@pytest.mark.parametrize("f", FILTERS, ids=IDS)
def test_lancedb_where(lance_table: Any, f: dict[str, Any]) -> None:
    where = translate(parse_filter(f), "lancedb", integer_fields={"year"})
    want = truth(f, "lancedb")
    got = lance_table.search().where(where).limit(N + 1).to_arrow()["id"].to_pylist()
    assert set(got) == want
    # no vector index: a prefiltered search is exact over the matching rows
    hits = (
        lance_table.search(QUERY, vector_column_name="vector")
        .metric("dot")
        .where(where, prefilter=True)
        .limit(K)
        .to_arrow()["id"]
        .to_pylist()
    )
    assert_top_k(hits, want)


def test_lancedb_struct_column(lance_table: Any) -> None:
    f = {"profile": {"$in": ["ckd", "htn"]}, "year": {"$gte": 2015}}
    where = translate(parse_filter(f), "lancedb", struct="meta")
    assert where == "(`meta`.`profile` IN ('ckd', 'htn') AND `meta`.`year` >= 2015)"
    got = lance_table.search().where(where).limit(N + 1).to_arrow()["id"].to_pylist()
    assert set(got) == truth(f, "lancedb")


# --- Milvus Lite ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def milvus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    pymilvus = pytest.importorskip("pymilvus")
    pytest.importorskip("milvus_lite")
    client = pymilvus.MilvusClient(str(tmp_path_factory.mktemp("milvus") / "f.db"))
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", pymilvus.DataType.INT64, is_primary=True)
    schema.add_field("vector", pymilvus.DataType.FLOAT_VECTOR, dim=DIM)
    schema.add_field("metadata", pymilvus.DataType.JSON)
    schema.add_field("lang", pymilvus.DataType.VARCHAR, max_length=8)
    client.create_collection("filters", schema=schema)
    client.insert(
        "filters",
        [
            {"id": i, "vector": VECS[i].tolist(), "metadata": ROWS[i], "lang": ROWS[i]["lang"]}
            for i in range(N)
        ],
    )
    params = client.prepare_index_params()
    params.add_index("vector", index_type="FLAT", metric_type="IP")
    client.create_index("filters", params)
    client.load_collection("filters")
    yield client
    client.close()


@pytest.mark.parametrize("f", FILTERS, ids=IDS)
def test_milvus_expr(milvus: Any, f: dict[str, Any]) -> None:
    node = parse_filter(f)
    want = truth(f, "milvus")
    for columns in ((), ("lang",)):  # lang in the JSON, then as a scalar column
        expr = translate(node, "milvus", columns=columns)
        got = milvus.query("filters", filter=expr, output_fields=["id"], limit=N + 1)
        assert {r["id"] for r in got} == want, expr
    res = milvus.search(
        "filters",
        data=[QUERY.tolist()],
        filter=expr,
        limit=K,
        output_fields=["id"],
        search_params={"metric_type": "IP"},
    )
    assert_top_k([h["id"] for h in res[0]], want)


# --- LlamaIndex SimpleVectorStore ------------------------------------------------------


@pytest.fixture(scope="module")
def simple_store() -> Any:
    pytest.importorskip("llama_index.core")
    from llama_index.core.schema import TextNode
    from llama_index.core.vector_stores import SimpleVectorStore

    store = SimpleVectorStore()
    store.add(
        [
            TextNode(id_=str(i), text=f"chunk {i}", embedding=VECS[i].tolist(), metadata=ROWS[i])
            for i in range(N)
        ]
    )
    return store


def _flat(filters: Any) -> bool:
    from llama_index.core.vector_stores.types import MetadataFilters

    return not any(isinstance(f, MetadataFilters) for f in filters.filters)


@pytest.mark.parametrize("f", FILTERS, ids=IDS)
def test_llamaindex_simple_vector_store(simple_store: Any, f: dict[str, Any]) -> None:
    from llama_index.core.vector_stores.types import MetadataFilters, VectorStoreQuery

    if compares_a_boolean(f):
        with pytest.raises(FilterError, match="llamaindex store cannot express .*no boolean value"):
            translate(parse_filter(f), "llamaindex")
        return
    filters = translate(parse_filter(f), "llamaindex")
    assert isinstance(filters, MetadataFilters)
    if not _flat(filters):  # SimpleVectorStore refuses nested MetadataFilters
        with pytest.raises(ValueError, match="Nested MetadataFilters are not supported"):
            simple_store.query(VectorStoreQuery(query_embedding=QUERY.tolist(), filters=filters))
        return
    want = truth(f, "llamaindex")
    res = simple_store.query(
        VectorStoreQuery(query_embedding=QUERY.tolist(), similarity_top_k=N, filters=filters)
    )
    assert {int(i) for i in res.ids} == want
    res = simple_store.query(
        VectorStoreQuery(query_embedding=QUERY.tolist(), similarity_top_k=K, filters=filters)
    )
    assert_top_k([int(i) for i in res.ids], want)


def test_llamaindex_structure() -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.vector_stores.types import (
        FilterCondition,
        FilterOperator,
        MetadataFilter,
        MetadataFilters,
    )

    node: Node = parse_filter(
        {
            "$or": [
                {"profile": {"$in": ["dm", "htn"]}, "year": {"$gt": 2015}},
                {"d": {"$exists": True}},
            ]
        }
    )
    assert translate(node, "llamaindex") == MetadataFilters(
        condition=FilterCondition.OR,
        filters=[
            MetadataFilters(
                condition=FilterCondition.AND,
                filters=[
                    MetadataFilter(key="profile", value=["dm", "htn"], operator=FilterOperator.IN),
                    MetadataFilter(key="year", value=2015, operator=FilterOperator.GT),
                ],
            ),
            MetadataFilters(
                condition=FilterCondition.NOT,
                filters=[MetadataFilter(key="d", value=None, operator=FilterOperator.IS_EMPTY)],
            ),
        ],
    )
    assert translate(parse_filter({"a": "x"}), "llamaindex") == MetadataFilters(
        condition=FilterCondition.AND,
        filters=[MetadataFilter(key="a", value="x", operator=FilterOperator.EQ)],
    )


def test_engines_really_differ_on_missing_fields(chroma_collection: Any, milvus: Any) -> None:
    """The documented split is measured, not assumed: Chroma keeps rows without the
    field under $ne, Milvus drops them, and numpy says which is which."""
    f = {"profile": {"$ne": "ckd"}}
    node = parse_filter(f)
    chroma = {int(i) for i in chroma_collection.get(where=translate(node, "chroma"))["ids"]}
    mil = {r["id"] for r in milvus.query("filters", filter=translate(node, "milvus"), limit=N)}
    lacking = {i for i, r in enumerate(ROWS) if "profile" not in r}
    assert lacking and lacking <= chroma and not lacking & mil
    assert chroma - mil == lacking


# --- injection attempts: Milvus expr and LanceDB where -----------------------------------

HOSTILE = [
    'ckd" or metadata["year"] > 0 or metadata["profile"] == "',
    "ckd' OR 1=1 OR profile = '",
    "back\\slash\\",
    'quo"te\\"',
    "tab\tnew\nline\rend",
    "o'brien",
    "ckd",
]


@pytest.fixture(scope="module")
def hostile_milvus(milvus: Any) -> Any:
    import pymilvus

    schema = milvus.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", pymilvus.DataType.INT64, is_primary=True)
    schema.add_field("vector", pymilvus.DataType.FLOAT_VECTOR, dim=DIM)
    schema.add_field("metadata", pymilvus.DataType.JSON)
    milvus.create_collection("hostile", schema=schema)
    milvus.insert(
        "hostile",
        [
            {"id": i, "vector": VECS[i].tolist(), "metadata": {"profile": v, "year": 2020}}
            for i, v in enumerate(HOSTILE)
        ],
    )
    params = milvus.prepare_index_params()
    params.add_index("vector", index_type="FLAT", metric_type="IP")
    milvus.create_index("hostile", params)
    milvus.load_collection("hostile")
    return milvus


@pytest.mark.parametrize("i", range(len(HOSTILE)))
def test_milvus_hostile_values_match_literally(hostile_milvus: Any, i: int) -> None:
    for f in ({"profile": HOSTILE[i]}, {"profile": {"$in": [HOSTILE[i], "zzz"]}}):
        expr = translate(parse_filter(f), "milvus")
        got = hostile_milvus.query("hostile", filter=expr, output_fields=["id"], limit=100)
        assert [r["id"] for r in got] == [i], expr
    expr = translate(parse_filter({"profile": {"$ne": HOSTILE[i]}}), "milvus")
    got = hostile_milvus.query("hostile", filter=expr, output_fields=["id"], limit=100)
    assert sorted(r["id"] for r in got) == [j for j in range(len(HOSTILE)) if j != i]
    assert hostile_milvus.get_collection_stats("hostile")["row_count"] == len(HOSTILE)


@pytest.fixture(scope="module")
def hostile_lance(tmp_path_factory: pytest.TempPathFactory) -> Any:
    lancedb = pytest.importorskip("lancedb")
    pa = pytest.importorskip("pyarrow")
    db = lancedb.connect(str(tmp_path_factory.mktemp("lance_hostile")))
    return db.create_table(
        "hostile",
        pa.table(
            {
                "id": list(range(len(HOSTILE))),
                "profile": HOSTILE,
                "vector": pa.array(VECS[: len(HOSTILE)].tolist(), type=pa.list_(pa.float32(), DIM)),
            }
        ),
    )


@pytest.mark.parametrize("i", range(len(HOSTILE)))
def test_lancedb_hostile_values_match_literally(hostile_lance: Any, i: int) -> None:
    for f in ({"profile": HOSTILE[i]}, {"profile": {"$in": [HOSTILE[i], "zzz"]}}):
        where = translate(parse_filter(f), "lancedb")
        got = hostile_lance.search().where(where).limit(100).to_arrow()["id"].to_pylist()
        assert got == [i], where
    where = translate(parse_filter({"profile": {"$nin": [HOSTILE[i]]}}), "lancedb")
    got = hostile_lance.search().where(where).limit(100).to_arrow()["id"].to_pylist()
    assert sorted(got) == [j for j in range(len(HOSTILE)) if j != i]
    assert hostile_lance.count_rows() == len(HOSTILE)


@pytest.mark.parametrize(
    ("engine", "f", "options", "needle"),
    [
        (
            "milvus",
            {"p": "a\x01b"},
            {},
            "the milvus store cannot quote 'a\\\\x01b': control character U\\+0001",
        ),
        (
            "milvus",
            {"p": 1},
            {"json_field": 'metadata["p"] or 1 == 1 or metadata'},
            "plain identifier",
        ),
        ("milvus", {"p": 1}, {"columns": ["p or 1 == 1"]}, "plain identifier"),
        ("lancedb", {"p": "a\x00b"}, {}, "the lancedb store cannot quote .* NUL"),
        ("lancedb", {"p": 1}, {"struct": "m` OR 1=1 OR `m"}, "plain identifier"),
    ],
    ids=["milvus-control", "milvus-json-field", "milvus-column", "lance-nul", "lance-struct"],
)
def test_unquotable_values_and_hostile_names_are_refused(
    engine: str, f: dict[str, Any], options: dict[str, Any], needle: str
) -> None:
    with pytest.raises(FilterError, match=needle) as info:
        translate(parse_filter(f), engine, **options)
    assert info.value.exit_code == 2 and "\n" not in str(info.value)


# --- dotted paths into nested metadata ------------------------------------------------------

NESTED = [
    {"src": {"page": i % 5, "kind": ["pdf", "html"][i % 2]}} if i % 7 else {"other": 1}
    for i in range(40)
]
NESTED_FILTERS = [
    {"src.page": {"$gte": 3}},
    {"src.kind": "pdf", "src.page": {"$ne": 0}},
    {"src.kind": {"$nin": ["html"]}},
    {"src.page": {"$exists": False}},
]


def _nested_truth(f: dict[str, Any], engine: str) -> set[int]:
    node = parse_filter(f)
    check_fields(node, metadata_fields(NESTED))
    mask = evaluate(node, NESTED, missing=ENGINE_MISSING[engine])
    return set(np.flatnonzero(mask).tolist())


def test_dotted_paths_in_qdrant_and_milvus(qdrant: Any, milvus: Any) -> None:
    import pymilvus
    from qdrant_client import models as m

    qdrant.create_collection(
        "nested", vectors_config=m.VectorParams(size=DIM, distance=m.Distance.DOT)
    )
    qdrant.upsert(
        "nested",
        points=[
            m.PointStruct(id=i, vector=VECS[i].tolist(), payload=r) for i, r in enumerate(NESTED)
        ],
    )
    schema = milvus.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", pymilvus.DataType.INT64, is_primary=True)
    schema.add_field("vector", pymilvus.DataType.FLOAT_VECTOR, dim=DIM)
    schema.add_field("metadata", pymilvus.DataType.JSON)
    milvus.create_collection("nested", schema=schema)
    milvus.insert(
        "nested",
        [{"id": i, "vector": VECS[i].tolist(), "metadata": r} for i, r in enumerate(NESTED)],
    )
    params = milvus.prepare_index_params()
    params.add_index("vector", index_type="FLAT", metric_type="IP")
    milvus.create_index("nested", params)
    milvus.load_collection("nested")
    for f in NESTED_FILTERS:
        node = parse_filter(f)
        points, _ = qdrant.scroll("nested", scroll_filter=translate(node, "qdrant"), limit=100)
        assert {p.id for p in points} == _nested_truth(f, "qdrant"), f
        expr = translate(node, "milvus")
        got = milvus.query("nested", filter=expr, output_fields=["id"], limit=100)
        assert {r["id"] for r in got} == _nested_truth(f, "milvus"), expr
    assert translate(parse_filter({"src.page": 1}), "milvus") == 'metadata["src"]["page"] == 1'
    assert translate(parse_filter({"src.page": 1}), "milvus", json_field=None) == 'src["page"] == 1'


# --- random filters: every engine agrees with numpy ------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_YEARS = st.one_of(st.integers(2009, 2025), st.sampled_from([2014.5, 2019.5]))
_SCORES = st.floats(0, 1, allow_nan=False).map(lambda x: round(x, 3))
_PROFILES = st.sampled_from(["ckd", "dm", "htn", "copd", "none"])


def _field_cond(field: str, values: st.SearchStrategy[Any], ranges: bool) -> st.SearchStrategy:
    ops = ["$eq", "$ne"] + (["$gt", "$gte", "$lt", "$lte"] if ranges else [])
    single = st.tuples(st.sampled_from(ops), values)
    many = st.tuples(st.sampled_from(["$in", "$nin"]), st.lists(values, min_size=1, max_size=3))
    exists = st.tuples(st.just("$exists"), st.booleans())
    return st.builds(lambda o: {field: {o[0]: o[1]}}, st.one_of(single, many, exists))


_LEAVES = st.one_of(
    _field_cond("profile", _PROFILES, False),
    _field_cond("year", st.integers(2009, 2025), False),
    st.builds(
        lambda op, v: {"year": {op: v}}, st.sampled_from(["$gt", "$gte", "$lt", "$lte"]), _YEARS
    ),
    _field_cond("score", _SCORES, True),
    _field_cond("flag", st.booleans(), False),
    _field_cond("lang", st.sampled_from(["en", "fr"]), False),
)
RANDOM_FILTERS = st.recursive(
    _LEAVES,
    lambda inner: st.builds(
        lambda k, items: {k: items},
        st.sampled_from(["$and", "$or"]),
        st.lists(inner, min_size=1, max_size=3),
    ),
    max_leaves=5,
)
FUZZ = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@FUZZ
@given(RANDOM_FILTERS)
def test_random_filters_qdrant_lancedb_milvus(
    qdrant: Any, lance_table: Any, milvus: Any, f: dict
) -> None:
    node = parse_filter(f)
    points, _ = qdrant.scroll("filters", scroll_filter=translate(node, "qdrant"), limit=N + 1)
    assert {p.id for p in points} == truth(f, "qdrant")
    where = translate(node, "lancedb", integer_fields={"year"})
    got = lance_table.search().where(where).limit(N + 1).to_arrow()["id"].to_pylist()
    assert set(got) == truth(f, "lancedb"), where
    expr = translate(node, "milvus")
    rows = milvus.query("filters", filter=expr, output_fields=["id"], limit=N + 1)
    assert {r["id"] for r in rows} == truth(f, "milvus"), expr


@FUZZ
@given(RANDOM_FILTERS)
def test_random_filters_chroma_llamaindex(
    chroma_collection: Any, simple_store: Any, f: dict
) -> None:
    from llama_index.core.vector_stores.types import VectorStoreQuery

    node = parse_filter(f)
    if not uses_exists(f):
        where = translate(node, "chroma", integer_fields={"year"})
        got = {int(i) for i in chroma_collection.get(where=where)["ids"]}
        assert got == truth(f, "chroma"), where
    if not compares_a_boolean(f):
        filters = translate(node, "llamaindex")
        if _flat(filters):
            q = VectorStoreQuery(
                query_embedding=QUERY.tolist(), similarity_top_k=N, filters=filters
            )
            assert {int(i) for i in simple_store.query(q).ids} == truth(f, "llamaindex")


@pytest.mark.parametrize(
    "f",
    [
        {"$or": [{"score": {"$ne": 0}}, {"score": {"$nin": [1]}}]},
        {"$or": [{"score": {"$ne": 0.5}}, {"score": {"$ne": 0.25}}]},
        {"$and": [{"year": {"$gte": 2009}}, {"$or": [{"lang": {"$ne": "en"}},
                                                     {"lang": {"$nin": ["fr"]}}]}]},
    ],
)  # fmt: skip
def test_negations_joined_by_or_keep_rows_without_the_field_out_on_lancedb(
    lance_table: Any, f: dict
) -> None:
    """DataFusion folds ``x != a OR x NOT IN (b)`` into ``NOT (x = a AND x IN (b))`` and
    that contradiction into ``true``, so rows where ``x`` is null came back (found by the
    random filters). Each negation carries its own ``IS NOT NULL``."""
    where = translate(parse_filter(f), "lancedb", integer_fields={"year"})
    got = lance_table.search().where(where).limit(N + 1).to_arrow()["id"].to_pylist()
    assert set(got) == truth(f, "lancedb"), where
