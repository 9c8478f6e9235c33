"""The Milvus backend against Milvus Lite (milvus-lite 3, pure Python, run in-process).

Lite is reached the two ways a user would: a ``.db`` path (pymilvus starts an in-process
gRPC server) and an ``http://127.0.0.1:PORT`` URI of a loopback Lite gRPC server, which
here also checks the token the way a Milvus proxy does.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from indexcheck.errors import (
    AuthError,
    BackendUnavailableError,
    DataFileError,
    DimensionMismatchError,
    InputError,
    SpecError,
)
from indexcheck.stores import open_store
from tests.builders import milvus as mb
from tests.store_contract import check_store_contract
from tests.util import free_port, tree_digest

N, DIM = 40, 16


def _data(seed: int = 0, n: int = N) -> tuple[list[str], np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    ids = [str(1000 + 7 * i) for i in range(n)]
    vectors = rng.normal(size=(n, DIM)).astype(np.float32)
    texts = [f"chunk number {i}" for i in range(n)]
    return ids, vectors, texts


@pytest.fixture(scope="module")
def lite(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Milvus Lite folders, one collection each (built once: Lite takes a moment)."""
    root = tmp_path_factory.mktemp("milvus")
    ids, vectors, texts = _data()
    big_ids, big_vectors, _ = _data(1, n=400)
    source = [f"file{i % 3}.md" for i in range(N)]
    return {
        "cosine": mb.build(root / "c", ids, vectors, texts, "cosine", extra={"source": source}),
        "ip": mb.build(root / "i", ids, vectors, None, "ip", pk="int"),
        "l2": mb.build(root / "l", ids, vectors, texts, "l2"),
        "ivf": mb.build(root / "v", big_ids, big_vectors, None, "l2", index="IVF_FLAT"),
        "hnsw": mb.build(root / "h", ids, vectors, None, "cosine", index="HNSW"),
        "none": mb.build(root / "n", ids, vectors, None, index=None, pk="int"),
    }


# -- contract -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cosine", "ip", "l2", "none"])
def test_contract(lite: dict[str, str], name: str) -> None:
    ids, vectors, _ = _data()
    store = open_store(lite[name])
    try:
        check_store_contract(store, ids, vectors)  # COSINE vectors come back as stored
    finally:
        store.close()


def test_contract_with_id_field(tmp_path: Path) -> None:
    _, vectors, _ = _data(2)
    docs = [f"doc-{i:03d}" for i in range(N)]
    spec = mb.build(
        tmp_path, [str(i) for i in range(N)], vectors, None, "ip", pk="int", extra={"doc": docs}
    )
    store = open_store(spec + "&id=doc")
    try:
        check_store_contract(store, docs, vectors)
        assert store.info().details["id_field"] == "doc"
    finally:
        store.close()


def test_awkward_varchar_and_int_ids(tmp_path: Path, lite: dict[str, str]) -> None:
    """Ids are quoted safely in filters; ids an INT64 key cannot hold are simply absent."""
    ids, vectors, _ = _data(3, n=8)
    ids[:5] = ['a"b', "back\\slash", "new\nline", "it's", "ünï ⚙"]
    store = open_store(mb.build(tmp_path, ids, vectors, None, "ip"))
    try:
        got = store.fetch(ids[:5] + ['" or 1==1 or "', "missing"])
        assert got.found.tolist() == [True] * 5 + [False, False]
        np.testing.assert_allclose(got.vectors[:5], vectors[:5], rtol=1e-6)
    finally:
        store.close()
    store = open_store(lite["ip"])
    try:
        asked = ["01007", "-5", "abc", "99999999999999999999", "1007"]
        assert store.fetch(asked).found.tolist() == [False, False, False, False, True]
    finally:
        store.close()


# -- scores and exact search ----------------------------------------------------------


def _truth(metric: str, q: np.ndarray, x: np.ndarray) -> np.ndarray:
    if metric == "COSINE":
        return (x / np.linalg.norm(x, axis=1, keepdims=True)) @ (q / np.linalg.norm(q))
    if metric == "IP":
        return x @ q
    return ((x - q) ** 2).sum(axis=1)


@pytest.mark.parametrize(
    ("name", "metric", "score", "higher"),
    [
        ("cosine", "COSINE", "cos", True),
        ("ip", "IP", "dot", True),
        ("l2", "L2", "l2^2", False),
        ("none", "COSINE", "cos", True),
    ],
)
def test_scores_follow_documented_formula(
    lite: dict[str, str], name: str, metric: str, score: str, higher: bool
) -> None:
    """query and exact_query report info().score, computed here in float64 (brute force)."""
    ids, vectors, _ = _data()
    queries = np.random.default_rng(9).normal(size=(6, DIM)).astype(np.float32)
    store = open_store(lite[name])
    try:
        info = store.info()
        assert (info.metric, info.score, info.higher_is_better) == (metric, score, higher)
        assert info.approximate is False and store.has_exact
        k = 7
        for D, I in (store.query(queries, k), store.exact_query(queries, k)):
            assert D.dtype == np.float32 and D.shape == (6, k)
            for qi, q in enumerate(queries.astype(np.float64)):
                truth = _truth(metric, q, vectors.astype(np.float64))
                order = np.argsort(-truth if higher else truth, kind="stable")[:k]
                assert list(I[qi]) == [ids[j] for j in order]
                np.testing.assert_allclose(D[qi], truth[order], rtol=1e-5, atol=1e-5)
    finally:
        store.close()


def test_l2_is_squared(lite: dict[str, str]) -> None:
    ids, vectors, _ = _data()
    store = open_store(lite["l2"])
    try:
        q = vectors[0] + 0.5  # plain distance to vectors[0]: 2; squared: 4
        D, I = store.query(q[None, :], N)
        assert D[0, list(I[0]).index(ids[0])] == pytest.approx(4.0, rel=1e-5)
    finally:
        store.close()


def test_ivf_flat_exact_probes_every_list(lite: dict[str, str]) -> None:
    ids, vectors, _ = _data(1, n=400)
    queries = np.random.default_rng(5).normal(size=(30, DIM)).astype(np.float32)
    store = open_store(lite["ivf"])
    try:
        info = store.info()
        assert info.approximate is True and store.has_exact
        assert "nprobe=65536" in info.details["exact_search"]
        D, I = store.exact_query(queries, 10)
        d2 = ((queries[:, None, :].astype(np.float64) - vectors[None]) ** 2).sum(-1)
        order = np.argsort(d2, axis=1, kind="stable")[:, :10]
        assert I.tolist() == [[ids[j] for j in row] for row in order]
        np.testing.assert_allclose(D, np.take_along_axis(d2, order, 1), rtol=1e-5)
        # the normal search (default nprobe) really is approximate on this data
        _, I_ann = store.query(queries, 10)
        assert I_ann.tolist() != I.tolist()
    finally:
        store.close()


def test_hnsw_has_no_exact_mode(lite: dict[str, str]) -> None:
    ids, vectors, _ = _data()
    store = open_store(lite["hnsw"])
    try:
        info = store.info()
        assert (info.approximate, store.has_exact, info.details["index_type"]) == (
            True,
            False,
            "HNSW",
        )
        D, I = store.query(vectors[:3], 2)
        assert list(I[:, 0]) == ids[:3]
        with pytest.raises(InputError, match="no exact search mode"):
            store.exact_query(vectors[:3], 2)
    finally:
        store.close()


def test_k_beyond_count_and_bad_dimension(lite: dict[str, str]) -> None:
    ids, vectors, _ = _data()
    store = open_store(lite["ip"])
    try:
        D, I = store.query(vectors[:2], N + 3)
        assert np.isnan(D[:, N:]).all() and (I[:, N:] == None).all()  # noqa: E711
        assert set(I[0, :N]) == set(ids)
        with pytest.raises(DimensionMismatchError, match="dimension 3"):
            store.query(np.ones((1, 3), dtype=np.float32), 2)
    finally:
        store.close()


# -- texts and metadata ----------------------------------------------------------------


def test_texts_and_metadata(lite: dict[str, str]) -> None:
    ids, _, texts = _data()
    store = open_store(lite["cosine"])
    try:
        assert store.fetch([ids[4], "nope"]).texts == [texts[4], None]
        batches = list(store.iter_vectors(batch=16))
        assert sum(len(b.ids) for b in batches) == N
        b = batches[0]
        assert b.texts is not None and b.metadata is not None
        pos = ids.index(b.ids[0])
        assert b.texts[0] == texts[pos]
        assert b.metadata[0] == {"pk": ids[pos], "source": f"file{pos % 3}.md"}
    finally:
        store.close()


def test_a_block_larger_than_pymilvus_pages_is_read_in_pages(lite: dict[str, str]) -> None:
    """``iter_vectors(batch)`` with a batch above pymilvus's 16,384-row iterator limit reads
    every row (in blocks of at most ``batch``) instead of failing as if the server were down."""
    ids, _, _ = _data()
    store = open_store(lite["cosine"])
    try:
        got = [i for b in store.iter_vectors(batch=20_000) for i in b.ids]
        assert sorted(got) == sorted(ids)
    finally:
        store.close()


# -- read-only ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cosine", "ivf"])
def test_read_only(lite: dict[str, str], name: str) -> None:
    """Open, every read method (incl. load/release) and close leave every file identical."""
    folder = Path(lite[name].split(":", 1)[1].split("?")[0])
    before = tree_digest(folder, mtimes=True, dirs=True)
    store = open_store(lite[name])
    try:
        assert store.info().details["loaded_by_indexcheck"] is True  # Lite starts released
        count, fp = store.info().count, store.fingerprint()
        list(store.iter_vectors(batch=50))
        store.fetch(["1000", "1007"])
        q = np.random.default_rng(0).normal(size=(3, DIM)).astype(np.float32)
        store.query(q, 5)
        store.exact_query(q, 5)
    finally:
        store.close()
    assert tree_digest(folder, mtimes=True, dirs=True) == before
    again = open_store(lite[name])
    try:
        assert (again.info().count, again.fingerprint()) == (count, fp)
    finally:
        again.close()


def test_fingerprint_changes_with_content(tmp_path: Path) -> None:
    ids, vectors, _ = _data(7)
    changed = vectors.copy()
    changed[-1, 0] += 1e-3
    a = open_store(mb.build(tmp_path / "a", ids, vectors, None, "ip"))
    b = open_store(mb.build(tmp_path / "b", ids, changed, None, "ip"))
    try:
        assert a.fingerprint() == a.fingerprint()
        assert a.fingerprint() != b.fingerprint()
    finally:
        a.close()
        b.close()


# -- errors ---------------------------------------------------------------------------


def test_missing_collection_lists_existing(lite: dict[str, str]) -> None:
    spec = lite["l2"].replace("collection=docs", "collection=dcos")
    with pytest.raises(InputError, match=r"no Milvus collection 'dcos'.*collections there: docs"):
        open_store(spec)
    open_store(lite["l2"]).close()  # the server and its folder lock were released


def test_bad_paths(tmp_path: Path) -> None:
    with pytest.raises(DataFileError, match="no Milvus Lite data"):
        open_store(f"milvus:{tmp_path / 'absent.db'}?collection=docs")
    assert not (tmp_path / "absent.db").exists()
    (tmp_path / "plain.db").mkdir()
    with pytest.raises(DataFileError, match="not a milvus-lite 3 data folder"):
        open_store(f"milvus:{tmp_path / 'plain.db'}?collection=docs")
    assert list((tmp_path / "plain.db").iterdir()) == []
    with pytest.raises(SpecError, match="ending in .db"):
        open_store(f"milvus:{tmp_path}?collection=docs")


def test_folder_held_by_another_milvus_lite(lite: dict[str, str]) -> None:
    from milvus_lite import MilvusLite

    folder = lite["hnsw"].split(":", 1)[1].split("?")[0]
    holder = MilvusLite(folder)  # takes the folder's flock, as another process would
    try:
        with pytest.raises(BackendUnavailableError, match="one process hold a .db"):
            open_store(lite["hnsw"])
    finally:
        holder.close()


def test_unreachable_server() -> None:
    port = free_port()
    with pytest.raises(
        BackendUnavailableError, match=f"cannot reach Milvus at http://127.0.0.1:{port}"
    ):
        open_store(f"milvus:http://127.0.0.1:{port}?collection=docs")


TOKEN = "root:Milvus"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Milvus Lite behind a loopback gRPC server that checks the token like a Milvus proxy."""
    import grpc
    from milvus_lite.adapter.grpc.servicer import MilvusServicer
    from milvus_lite.db import MilvusLite
    from pymilvus.grpc_gen import milvus_pb2_grpc

    ids, vectors, texts = _data(4)
    spec = mb.build(tmp_path_factory.mktemp("served"), ids, vectors, texts, "ip", index="IVF_FLAT")
    expected = base64.b64encode(TOKEN.encode()).decode()

    class Auth(grpc.ServerInterceptor):  # type: ignore[misc]
        def intercept_service(self, continuation: Any, details: Any) -> Any:
            if dict(details.invocation_metadata).get("authorization") == expected:
                return continuation(details)

            def deny(request: Any, context: Any) -> None:
                context.abort(
                    grpc.StatusCode.UNAUTHENTICATED,
                    "auth check failure, please check api key is correct",
                )

            return grpc.unary_unary_rpc_method_handler(deny)

    db = MilvusLite(spec.split(":", 1)[1].split("?")[0])
    grpc_server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), interceptors=[Auth()])
    milvus_pb2_grpc.add_MilvusServiceServicer_to_server(MilvusServicer(db), grpc_server)
    port = grpc_server.add_insecure_port("127.0.0.1:0")
    grpc_server.start()
    yield f"http://127.0.0.1:{port}"
    grpc_server.stop(0)
    db.close()


def test_server_mode(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MILVUS_TOKEN", TOKEN)
    ids, vectors, texts = _data(4)
    store = open_store(f"milvus:{server}?collection=docs")
    try:
        check_store_contract(store, ids, vectors)
        info = store.info()
        assert (info.details["mode"], info.score, info.approximate) == ("server", "dot", True)
        # a server that does not report nlist gets no guessed nprobe
        assert store.has_exact is False
        assert store.fetch([ids[2]]).texts == [texts[2]]
        assert TOKEN not in store.spec and TOKEN not in repr(info)
    finally:
        store.close()
    with pytest.raises(InputError, match="collections there: docs"):
        open_store(f"milvus:{server}?collection=other")


def test_wrong_token_is_auth_error(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MILVUS_TOKEN", "root:guess")
    with pytest.raises(AuthError, match="refused the credentials") as err:
        open_store(f"milvus:{server}?collection=docs")
    assert "guess" not in str(err.value)
