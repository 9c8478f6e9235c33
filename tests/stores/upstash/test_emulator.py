"""The Upstash emulator answers the real ``upstash-vector`` SDK the way the Upstash docs say.

Every call the store and the builder make (info, fetch, range, query / batch query, upsert)
goes through the SDK here; raw httpx checks the wire shapes the SDK hides (status codes,
error bodies, Retry-After).
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import numpy as np
import pytest
from upstash_vector import Index, Vector
from upstash_vector.errors import UpstashError

from tests.emulators.upstash_emulator import UpstashEmulator

TOKEN = "fidelity-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def emu() -> Iterator[UpstashEmulator]:
    with UpstashEmulator(token=TOKEN, exact=True) as e:
        yield e


def sdk(emu: UpstashEmulator, dim: int = 3, similarity: str = "COSINE", name: str = "a") -> Index:
    return Index(url=emu.add_index(name, dim, similarity), token=TOKEN, retries=0)


def documented_score(similarity: str, a: np.ndarray, b: np.ndarray) -> float:
    """The formulas on upstash.com/docs/vector/features/similarityfunctions, pair by pair."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if similarity == "COSINE":
        cos = float(a64 @ b64) / float(np.linalg.norm(a64) * np.linalg.norm(b64))
        return (1 + cos) / 2
    if similarity == "EUCLIDEAN":
        return 1 / (1 + float(np.sum((a64 - b64) ** 2)))
    return (1 + float(a64 @ b64)) / 2


def test_upsert_forms_info_and_namespaces(emu: UpstashEmulator) -> None:
    index = sdk(emu)
    assert index.upsert([("t", [1.0, 0.0, 0.0], {"k": "v"}, "data-t")]) == "Success"
    index.upsert([{"id": "d", "vector": [0.0, 1.0, 0.0]}, Vector(id="v", vector=[0.0, 0.0, 1.0])])
    index.upsert([("n", [1.0, 1.0, 0.0])], namespace="ns")
    info = index.info()
    assert (info.vector_count, info.pending_vector_count, info.dimension) == (4, 0, 3)
    assert info.similarity_function == "COSINE"
    assert info.dense_index is not None and info.dense_index.dimension == 3
    assert {k: v.vector_count for k, v in info.namespaces.items()} == {"": 3, "ns": 1}
    assert sorted(index.list_namespaces()) == ["", "ns"]
    assert [r.path for r in emu.requests][-3:] == ["/a/upsert/ns", "/a/info", "/a/list-namespaces"]
    assert all(r.method == "POST" for r in emu.requests)


def test_fetch_keeps_order_nulls_and_include_flags(emu: UpstashEmulator) -> None:
    index = sdk(emu)
    vec = np.array([0.1, -0.2, 0.3], dtype=np.float32)
    index.upsert([("x", vec, {"text": "meta"}, "raw text"), ("y", [0.0, 1.0, 0.0])])
    got = index.fetch(
        ["y", "nope", "x"], include_vectors=True, include_metadata=True, include_data=True
    )
    assert got[1] is None
    assert [g.id for g in got if g] == ["y", "x"] and got[2] is not None
    assert np.array_equal(np.asarray(got[2].vector, dtype=np.float32), vec)  # float32 round trip
    assert (got[2].metadata, got[2].data) == ({"text": "meta"}, "raw text")
    bare = index.fetch(["x"])[0]
    assert bare is not None and (bare.vector, bare.metadata, bare.data) == (None, None, None)
    assert emu.requests[-1].body == {
        "ids": ["x"], "includeVectors": False, "includeMetadata": False, "includeData": False
    }  # fmt: skip


def test_range_pages_with_string_cursor(emu: UpstashEmulator) -> None:
    index = sdk(emu)
    index.upsert([(f"id{i}", [float(i), 1.0, 0.0]) for i in range(5)])
    index.upsert([("other", [1.0, 0.0, 0.0])], namespace="ns")
    seen, cursors, cursor = [], [], "0"
    while True:
        page = index.range(cursor=cursor, limit=2, include_vectors=True)
        seen += [v.id for v in page.vectors]
        assert all(v.vector is not None for v in page.vectors)
        cursors.append(page.next_cursor)
        if not page.next_cursor:
            break
        cursor = page.next_cursor
    assert sorted(seen) == [f"id{i}" for i in range(5)] and cursors == ["2", "4", ""]
    assert [v.id for v in index.range(limit=10).vectors][:1] == ["id0"]  # SDK's default cursor ""
    assert [v.id for v in index.range(limit=10, namespace="ns").vectors] == ["other"]
    assert emu.requests[-1].path == "/a/range/ns"


@pytest.mark.parametrize("similarity", ["COSINE", "EUCLIDEAN", "DOT_PRODUCT"])
def test_query_scores_follow_the_documented_formula(emu: UpstashEmulator, similarity: str) -> None:
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(30, 6)).astype(np.float32)
    index = sdk(emu, dim=6, similarity=similarity)
    index.upsert([(f"v{i}", vectors[i], {"i": i}, f"text {i}") for i in range(30)])
    q = rng.normal(size=6).astype(np.float32)
    hits = index.query(q, top_k=5, include_vectors=True, include_metadata=True, include_data=True)
    assert len(hits) == 5
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    for h in hits:
        i = int(h.id[1:])
        assert h.score == pytest.approx(documented_score(similarity, q, vectors[i]), abs=1e-6)
        assert (h.metadata, h.data) == ({"i": i}, f"text {i}")
    best = max(range(30), key=lambda i: documented_score(similarity, q, vectors[i]))
    assert hits[0].id == f"v{best}"
    assert emu.requests[-1].body["topK"] == 5 and emu.requests[-1].body["includeData"] is True


def test_batch_query_shapes(emu: UpstashEmulator) -> None:
    index = sdk(emu)
    index.upsert([("x", [1.0, 0.0, 0.0]), ("y", [0.0, 1.0, 0.0])])
    many = index.query_many(
        queries=[{"vector": [1.0, 0.0, 0.0], "top_k": 1}, {"vector": [0.0, 1.0, 0.0], "top_k": 2}]
    )
    assert [[h.id for h in hits] for hits in many] == [["x"], ["y", "x"]]
    assert isinstance(emu.requests[-1].body, list)
    one = httpx.post(emu.url("a") + "/query", headers=AUTH, json=[{"vector": [1, 0, 0], "topK": 1}])
    assert one.json()["result"][0]["id"] == "x"  # an array of one answers one result list


def test_writes_are_recorded_as_writes(emu: UpstashEmulator) -> None:
    index = sdk(emu)
    index.upsert([("x", [1.0, 0.0, 0.0]), ("y", [0.0, 1.0, 0.0])])
    index.info()
    index.fetch(["x"])
    index.range(limit=1)
    index.query([1.0, 0.0, 0.0])
    assert [r.command for r in emu.writes()] == ["upsert"]
    assert index.update("x", metadata={"a": 1}) is True
    assert index.delete(["y"]).deleted == 1
    index.reset()
    assert [r.command for r in emu.writes()] == ["upsert", "update", "delete", "reset"]
    assert index.info().vector_count == 0


def test_auth_errors_have_the_documented_shape(emu: UpstashEmulator) -> None:
    url = emu.add_index("a", 3)
    with pytest.raises(UpstashError, match="Unauthorized"):
        Index(url=url, token="wrong", retries=0).info()
    raw = httpx.post(url + "/info")
    assert raw.status_code == 401
    assert raw.json() == {"error": "Unauthorized: Invalid auth token", "status": 401}


def test_fault_knobs(emu: UpstashEmulator) -> None:
    index = sdk(emu)
    url = emu.url("a")
    emu.fail_next(2, 429, retry_after=3)
    for _ in range(2):
        r = httpx.post(url + "/info", headers=AUTH)
        assert (r.status_code, r.headers["Retry-After"], r.json()["status"]) == (429, "3", 429)
    assert httpx.post(url + "/info", headers=AUTH).status_code == 200
    emu.fail_next(1, 503)
    assert httpx.post(url + "/info", headers=AUTH).status_code == 503
    emu.truncate_next(1)
    with pytest.raises(ValueError):  # the SDK cannot decode half a JSON document
        index.info()
    index.upsert([("x", [1.0, 0.0, 0.0])])
    emu.short_next(1)
    assert index.fetch(["x", "missing"]) == [index.fetch(["x"])[0]]
    emu.delay = 0.3
    with pytest.raises(httpx.TimeoutException):
        httpx.post(url + "/info", headers=AUTH, timeout=0.05)


def test_limits_and_validation(emu: UpstashEmulator) -> None:
    index = sdk(emu)
    with pytest.raises(UpstashError, match="at most 1000"):
        index.fetch([str(i) for i in range(1001)])
    with pytest.raises(UpstashError, match="limit"):
        index.range(limit=1001)
    with pytest.raises(UpstashError, match="Invalid vector dimension"):
        index.upsert([("x", [1.0, 2.0])])
    r = httpx.post(emu.url("a") + "/query", headers=AUTH, json={"vector": [1, 2], "topK": 1})
    assert r.status_code == 400 and r.json()["status"] == 400


def test_approximate_search_misses_true_neighbours_and_exact_never() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    queries = rng.normal(size=(60, 16)).astype(np.float32)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    truth = [f"v{int(np.argmax(unit @ q))}" for q in queries]
    misses = {}
    for exact in (False, True):
        with UpstashEmulator(token=TOKEN, exact=exact, nlist=16, nprobe=1) as emu:
            index = sdk(emu, dim=16)
            index.upsert([(f"v{i}", vectors[i]) for i in range(300)])
            top1 = [index.query(q, top_k=1)[0].id for q in queries]
            misses[exact] = sum(a != b for a, b in zip(top1, truth, strict=True))
            # a stored vector always finds itself, even with one probe
            assert [index.query(vectors[i], top_k=1)[0].id for i in range(20)] == [
                f"v{i}" for i in range(20)
            ]
    assert misses[True] == 0
    assert misses[False] >= 5
