"""The Qdrant backend against qdrant-client's local mode (a real engine, in-process).

Server mode is exercised for its error paths only, against a loopback stub that answers
the REST endpoints involved (no Qdrant server binary runs here).
"""

from __future__ import annotations

import http.server
import json
import os
import threading
import uuid
from collections.abc import Iterator
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
)
from indexcheck.stores import StoreOptions, VectorStore, open_store
from tests.builders import qdrant as qb
from tests.store_contract import check_store_contract
from tests.util import free_port, tree_digest

TRUST = StoreOptions(trust_pickle=True)
N, DIM = 40, 16


def _data(seed: int = 0) -> tuple[list[str], np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    ids = [str(1000 + 7 * i) for i in range(N)]
    vectors = rng.normal(size=(N, DIM)).astype(np.float32)
    texts = [f"chunk number {i}" for i in range(N)]
    return ids, vectors, texts


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _open(spec: str) -> VectorStore:
    return open_store(spec, TRUST)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One local folder per metric (module-scoped: building takes a moment)."""
    ids, vectors, texts = _data()
    specs = {}
    for metric in ("cosine", "dot", "l2", "l1"):
        root = tmp_path_factory.mktemp(f"qd_{metric}")
        specs[metric] = qb.build(root, ids, vectors, texts, metric=metric)
    return specs


# -- contract -------------------------------------------------------------------------


@pytest.mark.parametrize("metric", ["cosine", "dot", "l2"])
def test_contract(tmp_path: Path, metric: str) -> None:
    ids, vectors, texts = _data(1)
    if metric == "cosine":
        vectors = _unit(vectors)  # Qdrant stores Cosine vectors normalised
    store = _open(qb.build(tmp_path, ids, vectors, texts, metric=metric))
    try:
        check_store_contract(store, ids, vectors)
    finally:
        store.close()


@pytest.mark.parametrize("id_mode", ["uuid", "payload"])
def test_contract_uuid_and_payload_ids(tmp_path: Path, id_mode: str) -> None:
    _, vectors, texts = _data(2)
    rng = np.random.default_rng(2)
    if id_mode == "uuid":
        ids = [str(uuid.UUID(bytes=rng.bytes(16), version=4)) for _ in range(N)]
    else:
        ids = [f"doc-{i:03d}" for i in range(N)]
    store = _open(qb.build(tmp_path, ids, vectors, texts, metric="dot", id_mode=id_mode))
    try:
        check_store_contract(store, ids, vectors)
        # a UUID spelled differently is not the stored id; garbage is simply not found
        asked = [ids[1].upper(), "not-an-id", "12", ids[2]]
        got = store.fetch(asked)
        assert got.found.tolist() == [id_mode == "payload" and False, False, False, True]
    finally:
        store.close()


def test_payload_ids_that_look_numeric(tmp_path: Path) -> None:
    """With &id_field=, payload ids stored as integers are found by their decimal string."""
    _, vectors, _ = _data(3)
    ids = [str(i) for i in range(N)]
    payload = [{"n": int(i)} for i in ids]
    spec = qb.build(tmp_path, ids, vectors, None, metric="dot", id_mode="int", payload=payload)
    store = _open(spec + "&id_field=n")
    try:
        got = store.fetch(["5", "39", "40"])
        assert got.found.tolist() == [True, True, False]
        np.testing.assert_allclose(got.vectors[0], vectors[5], rtol=1e-6)
        assert got.texts is None
    finally:
        store.close()


def test_alias(tmp_path: Path) -> None:
    """A collection alias opens like the collection (fingerprint then samples points)."""
    from qdrant_client import QdrantClient, models

    ids, vectors, texts = _data(8)
    spec = qb.build(tmp_path, ids, vectors, texts, metric="dot")
    writer = QdrantClient(path=str(tmp_path / "qdrant"))  # test-only write: add the alias
    op = models.CreateAliasOperation(
        create_alias=models.CreateAlias(collection_name="docs", alias_name="live")
    )
    writer.update_collection_aliases(change_aliases_operations=[op])
    writer.close()
    store = _open(spec.replace("collection=docs", "collection=live"))
    try:
        check_store_contract(store, ids, vectors)
    finally:
        store.close()


def test_named_vector(tmp_path: Path) -> None:
    ids, vectors, texts = _data(4)
    spec = qb.build(
        tmp_path, ids, vectors, texts, metric="l2", vector_name="dense", extra_vectors={"tiny": 3}
    )
    bare = spec.split("&vector=")[0]
    with pytest.raises(InputError, match=r"several named vectors \(dense, tiny\)"):
        _open(bare)
    with pytest.raises(InputError, match="no vector named 'nope'; use one of: dense, tiny"):
        _open(bare + "&vector=nope")
    store = _open(spec)
    try:
        check_store_contract(store, ids, vectors)
        assert store.info().details["vector"] == "dense"
    finally:
        store.close()


# -- scores ---------------------------------------------------------------------------

FORMULAS = {
    "cosine": (
        "Cosine",
        "cos",
        True,
        lambda q, x: (x / np.linalg.norm(x, axis=1, keepdims=True)) @ (q / np.linalg.norm(q)),
    ),
    "dot": ("Dot", "dot", True, lambda q, x: x @ q),
    "l2": ("Euclid", "l2", False, lambda q, x: np.sqrt(((x - q) ** 2).sum(axis=1))),
    "l1": ("Manhattan", "l1", False, lambda q, x: np.abs(x - q).sum(axis=1)),
}


@pytest.mark.parametrize("metric", list(FORMULAS))
def test_scores_follow_documented_formula(built: dict[str, str], metric: str) -> None:
    """query and exact_query report the formula in info().score, computed here in float64."""
    name, score, higher, formula = FORMULAS[metric]
    ids, vectors, _ = _data()
    queries = np.random.default_rng(9).normal(size=(6, DIM)).astype(np.float32)
    store = _open(built[metric])
    try:
        info = store.info()
        assert (info.metric, info.score, info.higher_is_better) == (name, score, higher)
        assert info.approximate is False and store.has_exact  # local mode is brute force
        k = 7
        for D, I in (store.query(queries, k), store.exact_query(queries, k)):
            assert D.dtype == np.float32 and D.shape == (6, k)
            for qi, q in enumerate(queries.astype(np.float64)):
                truth = formula(q, vectors.astype(np.float64))
                order = np.argsort(-truth if higher else truth, kind="stable")[:k]
                assert list(I[qi]) == [ids[j] for j in order]
                np.testing.assert_allclose(D[qi], truth[order], rtol=1e-5, atol=1e-5)
    finally:
        store.close()


def test_euclid_is_plain_not_squared(built: dict[str, str]) -> None:
    ids, vectors, _ = _data()
    store = _open(built["l2"])
    try:
        q = vectors[0] + 0.5  # distance to vectors[0]: sqrt(16 * 0.25) = 2; squared: 4
        D, I = store.query(q[None, :], N)
        row = list(I[0])
        assert D[0, row.index(ids[0])] == pytest.approx(2.0, rel=1e-5)
    finally:
        store.close()


def test_cosine_stores_normalised_vectors(built: dict[str, str]) -> None:
    ids, vectors, _ = _data()
    store = _open(built["cosine"])
    try:
        got = store.fetch(ids[:5])
        np.testing.assert_allclose(got.vectors, _unit(vectors[:5]), rtol=1e-5, atol=1e-6)
        assert not np.allclose(got.vectors, vectors[:5], atol=1e-3)
        assert "normalised" in store.info().details["stored_vectors"]
        # local mode renormalises its in-memory copy during a search; reads stay the same
        store.query(vectors[:3], 5)
        again = store.fetch(ids[:5])
        np.testing.assert_allclose(again.vectors, got.vectors, rtol=1e-6, atol=1e-7)
    finally:
        store.close()


def test_k_beyond_count_pads_with_nan(built: dict[str, str]) -> None:
    ids, vectors, _ = _data()
    store = _open(built["dot"])
    try:
        D, I = store.query(vectors[:2], N + 3)
        assert np.isnan(D[:, N:]).all() and (I[:, N:] == None).all()  # noqa: E711
        assert set(I[0, :N]) == set(ids)
        with pytest.raises(DimensionMismatchError, match="dimension 3"):
            store.query(np.ones((1, 3), dtype=np.float32), 2)
    finally:
        store.close()


# -- texts and metadata ----------------------------------------------------------------


def test_texts_and_metadata(tmp_path: Path) -> None:
    ids, vectors, texts = _data(5)
    payload = [{"source": f"file{i % 3}.md"} for i in range(N)]
    store = _open(qb.build(tmp_path, ids, vectors, texts, metric="dot", payload=payload))
    try:
        got = store.fetch([ids[4], "nope"])
        assert got.texts == [texts[4], None]
        batches = list(store.iter_vectors(batch=16))
        assert [len(b.ids) for b in batches] == [16, 16, 8]
        first = batches[0]
        assert first.texts is not None and first.texts[0] == texts[0]
        assert first.metadata is not None and first.metadata[0] == {"source": "file0.md"}
    finally:
        store.close()


# -- read-only ------------------------------------------------------------------------


def test_read_only_files_untouched(tmp_path: Path) -> None:
    """Opening, every read method, and closing leave every file byte- and mtime-identical."""
    ids, vectors, texts = _data(6)
    spec = qb.build(tmp_path, ids, vectors, texts, metric="dot")
    folder = tmp_path / "qdrant"
    before = tree_digest(folder, mtimes=True)
    assert {".lock", "meta.json", "collection/docs/storage.sqlite"} <= set(before)
    store = _open(spec)
    assert tree_digest(folder, mtimes=True) == before  # open alone rewrites nothing
    try:
        check_store_contract(store, ids, vectors)
        store.exact_query(vectors[:3], 5)
        store.info()
        list(store.iter_vectors(batch=5))
    finally:
        store.close()
    assert tree_digest(folder, mtimes=True) == before


def test_missing_lock_file_is_the_only_write(tmp_path: Path) -> None:
    """Documented: qdrant-client creates ``.lock`` when absent; nothing else is written."""
    ids, vectors, texts = _data(6)
    spec = qb.build(tmp_path, ids, vectors, texts, metric="dot")
    folder = tmp_path / "qdrant"
    (folder / ".lock").unlink()
    before = tree_digest(folder, mtimes=True)
    store = _open(spec)
    store.query(vectors[:2], 3)
    store.close()
    after = tree_digest(folder, mtimes=True)
    assert set(after) - set(before) == {".lock"}
    assert {k: after[k] for k in before} == before


def test_fingerprint_changes_with_content(tmp_path: Path) -> None:
    ids, vectors, texts = _data(7)
    a = _open(qb.build(tmp_path / "a", ids, vectors, texts, metric="dot"))
    changed = vectors.copy()
    changed[-1, 0] += 1.0
    b = _open(qb.build(tmp_path / "b", ids, changed, texts, metric="dot"))
    try:
        assert a.fingerprint() == a.fingerprint()
        assert a.fingerprint() != b.fingerprint()
    finally:
        a.close()
        b.close()


# -- errors ---------------------------------------------------------------------------


def test_missing_collection_lists_existing(built: dict[str, str]) -> None:
    spec = built["dot"].replace("collection=docs", "collection=dcos")
    with pytest.raises(InputError, match=r"no Qdrant collection 'dcos'.*collections there: docs"):
        _open(spec)
    # the lock was released: the folder opens again
    _open(built["dot"]).close()


def test_missing_folder_is_not_created(tmp_path: Path) -> None:
    where = tmp_path / "nowhere"
    with pytest.raises(DataFileError, match="no Qdrant local storage"):
        _open(f"qdrant:{where}?collection=docs")
    assert not where.exists()


def test_local_mode_needs_trust_pickle(built: dict[str, str]) -> None:
    with pytest.raises(InputError, match="--trust-pickle"):
        open_store(built["dot"], StoreOptions())


def test_locked_folder(built: dict[str, str]) -> None:
    first = _open(built["dot"])
    try:
        with pytest.raises(BackendUnavailableError, match="locked by another process"):
            _open(built["dot"])
    finally:
        first.close()


def test_unreachable_server() -> None:
    port = free_port()
    with pytest.raises(
        BackendUnavailableError, match=f"cannot reach Qdrant at http://127.0.0.1:{port}"
    ):
        open_store(f"qdrant:http://127.0.0.1:{port}?collection=docs")


class _Stub(http.server.BaseHTTPRequestHandler):
    """Answers the few Qdrant REST routes the open path uses; 401 when the key is wrong."""

    key = "right-key"

    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        if self.headers.get("api-key") != self.key:
            self._send(
                401,
                {"status": {"error": "Must provide an API key or an Authorization bearer token"}},
            )
        elif self.path.endswith("/exists"):
            self._send(200, {"result": {"exists": False}, "status": "ok", "time": 0})
        elif self.path.rstrip("/") == "/aliases":
            self._send(200, {"result": {"aliases": []}, "status": "ok", "time": 0})
        elif self.path.rstrip("/") == "/collections":
            names = [{"name": "alpha"}, {"name": "beta"}]
            self._send(200, {"result": {"collections": names}, "status": "ok", "time": 0})
        else:
            self._send(404, {"status": {"error": "Not found"}})

    def _send(self, code: int, body: dict[str, Any]) -> None:
        raw = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def stub_url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")
def test_wrong_api_key_is_auth_error(stub_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QDRANT_API_KEY", "s3cret-wrong")
    with pytest.raises(AuthError, match="HTTP 401") as err:
        open_store(f"qdrant:{stub_url}?collection=docs")
    assert "s3cret-wrong" not in str(err.value)


@pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")
def test_server_missing_collection(stub_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QDRANT_API_KEY", "right-key")
    with pytest.raises(InputError, match=r"collections there: alpha, beta"):
        open_store(f"qdrant:{stub_url}?collection=docs")


def test_spec_keeps_no_secrets(built: dict[str, str]) -> None:
    with pytest.raises(InputError, match="no credentials in the qdrant URL") as err:
        open_store("qdrant:http://user:pw123@127.0.0.1:1?collection=docs")
    assert "pw123" not in str(err.value)
    store = _open(built["dot"] + "&text_field=body")
    try:
        assert store.spec == built["dot"] + "&text_field=body"
        assert os.environ.get("QDRANT_API_KEY", "\0") not in store.spec
    finally:
        store.close()
