"""The Chroma store against the real embedded engine (PersistentClient) and a real
``chroma run`` server on loopback (HttpClient)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from indexcheck.errors import BackendUnavailableError, InputError, SpecError
from indexcheck.stores import open_store
from tests.builders import chroma as builder
from tests.store_contract import check_store_contract
from tests.util import documented_score, free_port, tree_digest

chromadb = pytest.importorskip("chromadb")

N, D = 60, 16


def _data(n: int = N, d: int = D, seed: int = 0) -> tuple[list[str], np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    vectors = (rng.standard_normal((n, d)) * 2.0).astype(np.float32)  # not unit length
    ids = [f"chunk-{i:03d}" for i in range(n)]
    texts = [f"text of chunk {i}" for i in range(n)]
    return ids, vectors, texts


def _use_fully(store: object) -> None:
    """info, fingerprint, fetch all, iterate all, query: everything a check does."""
    s = store  # typed loosely on purpose: any VectorStore
    info = s.info()  # type: ignore[attr-defined]
    s.fingerprint()  # type: ignore[attr-defined]
    ids = [i for b in s.iter_vectors(batch=17) for i in b.ids]  # type: ignore[attr-defined]
    got = s.fetch(ids + ["missing"])  # type: ignore[attr-defined]
    assert got.found[:-1].all()
    s.query(got.vectors[:10], 5)  # type: ignore[attr-defined]
    assert info.count == len(ids)


@pytest.fixture
def built(tmp_path: Path) -> tuple[str, list[str], np.ndarray, list[str]]:
    ids, vectors, texts = _data()
    spec = builder.build(tmp_path, ids, vectors, texts, metric="cosine")
    return spec, ids, vectors, texts


def test_contract_persistent(built: tuple[str, list[str], np.ndarray, list[str]]) -> None:
    spec, ids, vectors, _ = built
    store = open_store(spec)
    try:
        assert store.has_exact is False
        check_store_contract(store, ids, vectors)
        info = store.info()
        assert (info.backend, info.metric, info.score) == ("chroma", "cosine", "1-cos")
        assert info.approximate is True and info.higher_is_better is False
    finally:
        store.close()


@pytest.mark.parametrize(
    ("metric", "legacy", "score"),
    [
        ("cosine", False, "1-cos"),
        ("l2", False, "l2^2"),
        ("ip", False, "1-dot"),
        ("cosine", True, "1-cos"),
        ("ip", True, "1-dot"),
    ],
)
def test_reported_score_is_the_documenteddocumented_score(
    tmp_path: Path, metric: str, legacy: bool, score: str
) -> None:
    ids, vectors, texts = _data()
    spec = builder.build(tmp_path, ids, vectors, texts, metric=metric, legacy_metadata=legacy)
    store = open_store(spec)
    try:
        info = store.info()
        assert (info.metric, info.score) == (metric, score)
        queries = (np.random.default_rng(7).standard_normal((8, D)) * 1.5).astype(np.float32)
        Dm, Im = store.query(queries, 10)
        pos = {v: i for i, v in enumerate(ids)}
        for qi in range(len(queries)):
            rows = vectors[[pos[v] for v in Im[qi]]]
            np.testing.assert_allclose(
                Dm[qi], documented_score(score, rows, queries[qi]), rtol=1e-4, atol=1e-4
            )
            assert np.all(np.diff(Dm[qi]) >= -1e-6)  # ascending: lower is nearer
    finally:
        store.close()


def test_user_files_are_byte_identical_after_full_use(
    built: tuple[str, list[str], np.ndarray, list[str]],
) -> None:
    spec, _, _, _ = built
    path = Path(spec.split(":", 1)[1].split("?")[0])
    before = tree_digest(path)
    store = open_store(spec)
    snapshot = Path(store._snapshot_dir)  # type: ignore[attr-defined]
    _use_fully(store)
    store.close()
    assert tree_digest(path) == before
    assert not snapshot.exists()  # the private copy is removed on close


def test_chroma_itself_writes_on_open(tmp_path: Path) -> None:
    """Why the store reads a snapshot: a plain PersistentClient that only reads still
    changes chroma.sqlite3 (a row in acquire_write) and rewrites HNSW files. If this
    starts failing, Chroma stopped writing on open and the snapshot may be dropped."""
    ids, vectors, texts = _data()
    spec = builder.build(tmp_path, ids, vectors, texts)
    path = Path(spec.split(":", 1)[1].split("?")[0])
    before = tree_digest(path)
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=str(path), settings=Settings(anonymized_telemetry=False)
    )
    col = client.get_collection("docs", embedding_function=None)
    col.get(ids=ids[:1], include=["embeddings"])
    client.close()
    after = tree_digest(path)
    assert after["chroma.sqlite3"] != before["chroma.sqlite3"]


def test_awkward_directory_names(tmp_path: Path) -> None:
    """The SQLite snapshot opens the file through a URI; spaces, %, # and ? must survive."""
    ids, vectors, texts = _data(n=12)
    spec = builder.build(tmp_path / "my kb %41 #1 ?x", ids, vectors, texts)
    store = open_store(spec)
    try:
        check_store_contract(store, ids, vectors)
    finally:
        store.close()


def test_missing_path_is_refused_and_not_created(tmp_path: Path) -> None:
    path = tmp_path / "nowhere"
    with pytest.raises(InputError, match="no such directory"):
        open_store(f"chroma:{path}?collection=docs")
    assert not path.exists()


def test_folder_without_database_is_refused_and_left_empty(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a Chroma database"):
        open_store(f"chroma:{tmp_path}?collection=docs")
    assert list(tmp_path.iterdir()) == []


def test_missing_collection_names_it_and_lists_existing(
    built: tuple[str, list[str], np.ndarray, list[str]],
) -> None:
    spec, _, _, _ = built
    with pytest.raises(InputError) as err:
        open_store(spec.replace("collection=docs", "collection=nope"))
    assert "'nope'" in str(err.value) and "docs" in str(err.value)
    assert err.value.exit_code == 2


def test_spec_without_collection_is_a_spec_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="collection"):
        open_store(f"chroma:{tmp_path}")


def test_unreachable_server_is_backend_unavailable() -> None:
    port = free_port()  # nothing listens there
    with pytest.raises(BackendUnavailableError) as err:
        open_store(f"chroma:http://127.0.0.1:{port}?collection=docs")
    assert err.value.exit_code == 3


def test_credentials_in_url_are_refused() -> None:
    with pytest.raises(SpecError, match="credentials") as err:
        open_store("chroma:http://user:s3cret@127.0.0.1:8000?collection=docs")
    assert "s3cret" not in str(err.value)


@pytest.mark.parametrize("default_ef", [False, True])
def test_no_embedding_function_runs_and_nothing_is_downloaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, default_ef: bool
) -> None:
    """Also for a collection whose configuration records Chroma's default (ONNX MiniLM)
    embedding function: it is neither called nor downloaded, and no socket leaves loopback."""
    from chromadb.api.types import DefaultEmbeddingFunction
    from chromadb.utils.embedding_functions import onnx_mini_lm_l6_v2 as onnx

    ids, vectors, texts = _data()
    spec = builder.build(tmp_path, ids, vectors, texts, default_ef=default_ef)

    def boom(*_a: object, **_k: object) -> None:
        raise AssertionError("chroma tried to embed or download a model")

    monkeypatch.setattr(onnx.ONNXMiniLM_L6_V2, "__call__", boom)
    monkeypatch.setattr(onnx.ONNXMiniLM_L6_V2, "_download_model_if_not_exists", boom)
    monkeypatch.setattr(onnx.ONNXMiniLM_L6_V2, "_download", boom)
    monkeypatch.setattr(DefaultEmbeddingFunction, "__call__", boom)
    real_connect = socket.socket.connect

    def loopback_only(self: socket.socket, address: object) -> None:
        host = address[0] if isinstance(address, tuple) else ""
        if host not in {"127.0.0.1", "::1", "localhost"}:
            raise AssertionError(f"network access to {address!r}")
        real_connect(self, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", loopback_only)
    store = open_store(spec)
    try:
        col = store._col  # type: ignore[attr-defined]
        assert col._embedding_function is None
        recorded = (col.configuration_json.get("embedding_function") or {}).get("name")
        assert recorded == ("default" if default_ef else None)
        _use_fully(store)
    finally:
        store.close()


def test_texts_and_metadata(tmp_path: Path) -> None:
    ids, vectors, texts = _data()
    metas = [{"n": i, "src": "kb"} for i in range(N)]
    spec = builder.build(tmp_path / "a", ids, vectors, texts, metadatas=metas)
    store = open_store(spec)
    try:
        got = store.fetch([ids[5], "missing", ids[2]])
        assert got.texts == [texts[5], None, texts[2]]
        blocks = list(store.iter_vectors(batch=25))
        assert [len(b.ids) for b in blocks] == [25, 25, 10]
        flat_ids = [i for b in blocks for i in b.ids]
        flat_texts = [t for b in blocks for t in (b.texts or [])]
        flat_meta = [m for b in blocks for m in (b.metadata or [])]
        assert flat_texts == [texts[ids.index(i)] for i in flat_ids]
        assert flat_meta[0] == {"n": ids.index(flat_ids[0]), "src": "kb"}
    finally:
        store.close()
    spec2 = builder.build(tmp_path / "b", ids, vectors, None)
    store2 = open_store(spec2)
    try:
        assert store2.fetch(ids[:3]).texts is None
    finally:
        store2.close()


def test_paging_order_is_stable_across_batch_sizes(
    built: tuple[str, list[str], np.ndarray, list[str]],
) -> None:
    spec, ids, _, _ = built
    store = open_store(spec)
    try:
        orders = [[i for b in store.iter_vectors(batch=bs) for i in b.ids] for bs in (1, 7, 1000)]
        assert orders[0] == orders[1] == orders[2]
        assert sorted(orders[0]) == sorted(ids)
    finally:
        store.close()


def test_a_block_above_sqlite_variable_limit_is_read_in_pages(tmp_path: Path) -> None:
    """Chroma's local engine fails on a ``get`` page of more than 32,766 rows ("too many
    SQL variables"); ``iter_vectors`` with a larger batch still reads every row."""
    n = 32_800
    _, vectors, _ = _data(n, 4)
    ids = [f"c{i}" for i in range(n)]
    store = open_store(builder.build(tmp_path, ids, vectors, None, metric="l2"))
    try:
        blocks = [len(b.ids) for b in store.iter_vectors(batch=40_000)]
        assert sum(blocks) == n and max(blocks) <= 40_000
    finally:
        store.close()


def test_fingerprint_follows_content(tmp_path: Path) -> None:
    ids, vectors, texts = _data(n=600, d=4)  # more rows than the sampled first/last 256
    spec = builder.build(tmp_path, ids, vectors, texts)
    path = Path(spec.split(":", 1)[1].split("?")[0])

    def fp() -> str:
        s = open_store(spec)
        try:
            return s.fingerprint()
        finally:
            s.close()

    first = fp()
    assert fp() == first  # stable across opens
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=str(path), settings=Settings(anonymized_telemetry=False)
    )
    col = client.get_collection("docs", embedding_function=None)
    # a row in the middle, outside the sampled rows: only the log sequence id sees it
    col.update(ids=[ids[300]], embeddings=vectors[301:302])
    client.close()
    assert fp() != first


def test_exact_query_is_not_offered(
    built: tuple[str, list[str], np.ndarray, list[str]],
) -> None:
    spec, _, vectors, _ = built
    store = open_store(spec)
    try:
        assert store.has_exact is False
        with pytest.raises(InputError, match="no exact search"):
            store.exact_query(vectors[:1], 3)
    finally:
        store.close()


# -- a real Chroma server on loopback ----------------------------------------------------


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, int, list[str], np.ndarray]]:
    root = tmp_path_factory.mktemp("chroma_server")
    ids, vectors, texts = _data(seed=3)
    builder.build(root, ids, vectors, texts, metric="ip")
    port = free_port()
    chroma_cli = shutil.which("chroma", path=str(Path(sys.executable).parent))
    if chroma_cli is None:
        pytest.skip("the chroma CLI is not installed next to this Python")
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    proc = subprocess.Popen(
        [
            chroma_cli,
            "run",
            "--path",
            str(root / "chroma"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.skip("chroma server did not start")
                time.sleep(0.2)
        yield "127.0.0.1", port, ids, vectors
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_contract_over_http(server: tuple[str, int, list[str], np.ndarray]) -> None:
    host, port, ids, vectors = server
    store = open_store(f"chroma:http://{host}:{port}?collection=docs")
    try:
        check_store_contract(store, ids, vectors)
        info = store.info()
        assert (info.metric, info.score, info.details["mode"]) == ("ip", "1-dot", "http")
        queries = np.random.default_rng(5).standard_normal((4, D)).astype(np.float32)
        Dm, Im = store.query(queries, 5)
        pos = {v: i for i, v in enumerate(ids)}
        for qi in range(4):
            rows = vectors[[pos[v] for v in Im[qi]]]
            np.testing.assert_allclose(
                Dm[qi], documented_score("1-dot", rows, queries[qi]), atol=1e-4
            )
    finally:
        store.close()


def test_missing_collection_over_http(server: tuple[str, int, list[str], np.ndarray]) -> None:
    host, port, _, _ = server
    with pytest.raises(InputError) as err:
        open_store(f"chroma:http://{host}:{port}?collection=absent")
    assert "'absent'" in str(err.value) and "docs" in str(err.value)
