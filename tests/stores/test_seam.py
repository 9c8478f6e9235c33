"""The store seam: BaseStore checks every search once, for every store, and each SDK's error
table keeps the sentences a user read before the tables existed.

- k < 1 and queries of another dimension are refused by the base (InputError, exit 2) for
  query and exact_query on every engine here: faiss, llamaindex, chroma, pgvector, upstash,
  milvus, qdrant, lancedb (before, chroma, pgvector, faiss and llamaindex answered k=0 with
  empty results, milvus's and qdrant's exact_query did not refuse k=0 at all, and
  lancedb's answered it with an empty result).
- An engine without exact search refuses it in its own words, through the base.
- The messages of the Upstash, psycopg and chromadb tables, word for word (recorded from the
  hand-written translators they replaced).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from indexcheck.errors import EXIT_INPUT, InputError
from indexcheck.stores import StoreOptions, open_store
from tests.stores.test_errors import (
    REQUEST,
    _chroma,
    _chroma_cases,
    _outcome,
    _pg_cases,
    _pgvector,
    _upstash,
    _with_status,
)

N, D = 12, 8


def _data() -> tuple[list[str], np.ndarray, list[str]]:
    vectors = np.random.default_rng(3).normal(size=(N, D)).astype(np.float32)
    ids = [f"c{i:02d}" for i in range(N)]
    return ids, vectors, [f"text {i}" for i in ids]


def _faiss(tmp: Path, request: pytest.FixtureRequest) -> str:
    from indexcheck.stores.faiss.store import write_faiss_folder

    ids, vectors, texts = _data()
    write_faiss_folder(tmp / "f", ids, vectors, texts)
    return f"faiss:{tmp / 'f'}"


def _llamaindex(tmp: Path, request: pytest.FixtureRequest) -> str:
    pytest.importorskip("llama_index.core")
    from llama_index.core import MockEmbedding, VectorStoreIndex
    from llama_index.core.schema import TextNode

    ids, vectors, texts = _data()
    nodes = [
        TextNode(id_=i, text=t, embedding=v.tolist())
        for i, t, v in zip(ids, texts, vectors, strict=True)
    ]
    index = VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=D))
    index.storage_context.persist(str(tmp / "li"))
    return f"llamaindex:{tmp / 'li'}"


def _chroma_spec(tmp: Path, request: pytest.FixtureRequest) -> str:
    pytest.importorskip("chromadb")
    from tests.builders import chroma

    ids, vectors, texts = _data()
    return chroma.build(tmp, ids, vectors, texts, metric="cosine")


def _pgvector_spec(tmp: Path, request: pytest.FixtureRequest) -> str:
    pytest.importorskip("psycopg")
    from tests import pg_support
    from tests.builders import pgvector

    server = pg_support.shared_server()
    ids, vectors, texts = _data()
    return pgvector.build(tmp, ids, vectors, texts, metric="cosine", dsn=server.dsn)


def _upstash_spec(tmp: Path, request: pytest.FixtureRequest) -> str:
    from tests.builders import upstash

    ids, vectors, texts = _data()
    return upstash.build(tmp, ids, vectors, texts, metric="cosine")


def _milvus_spec(tmp: Path, request: pytest.FixtureRequest) -> str:
    pytest.importorskip("milvus_lite")
    from tests.builders import milvus

    ids, vectors, texts = _data()
    return milvus.build(tmp, ids, vectors, texts, metric="cosine")


def _qdrant_spec(tmp: Path, request: pytest.FixtureRequest) -> str:
    pytest.importorskip("qdrant_client")
    from tests.builders import qdrant

    ids, vectors, texts = _data()
    return qdrant.build(tmp, [str(i) for i in range(N)], vectors, texts, metric="cosine")


def _lancedb_spec(tmp: Path, request: pytest.FixtureRequest) -> str:
    pytest.importorskip("lancedb")
    from tests.builders import lancedb

    ids, vectors, texts = _data()
    return lancedb.build(tmp, ids, vectors, texts, metric="cosine")


BUILDERS: dict[str, Callable[[Path, pytest.FixtureRequest], str]] = {
    "faiss": _faiss,
    "llamaindex": _llamaindex,
    "chroma": _chroma_spec,
    "pgvector": _pgvector_spec,
    "upstash": _upstash_spec,
    "milvus": _milvus_spec,
    "qdrant": _qdrant_spec,
    "lancedb": _lancedb_spec,
}


@pytest.fixture(params=list(BUILDERS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    spec = BUILDERS[request.param](tmp_path, request)
    # Qdrant's local mode keeps points as pickles, which these tests wrote themselves
    opened = open_store(spec, StoreOptions(trust_pickle=request.param == "qdrant"))
    yield opened
    opened.close()


def _searches(store: Any) -> list[Callable[[np.ndarray, int], Any]]:
    return [store.query, store.exact_query] if store.has_exact else [store.query]


def test_k_below_one_is_refused_by_every_store(store: Any) -> None:
    q = np.ones((2, D), dtype=np.float32)
    for search in _searches(store):
        for k in (0, -3):
            with pytest.raises(InputError, match=f"k must be at least 1 .*got {k}") as info:
                search(q, k)
            assert info.value.exit_code == EXIT_INPUT


def test_queries_of_another_dimension_are_refused_by_every_store(store: Any) -> None:
    q = np.ones((2, D + 1), dtype=np.float32)
    for search in _searches(store):
        with pytest.raises(InputError, match=f"{D + 1}.*{D}|{D}.*{D + 1}") as info:
            search(q, 3)
        assert info.value.exit_code == EXIT_INPUT


def test_an_empty_query_block_gives_an_empty_result(store: Any) -> None:
    for search in _searches(store):
        Dm, Im = search(np.zeros((0, D), dtype=np.float32), 4)
        assert Dm.shape == (0, 4) and Im.shape == (0, 4)


SEAM_WORDING = {
    "faiss": "expected vectors of dimension 8, got 9",
    "llamaindex": "expected vectors of dimension 8, got 9",
    "chroma": "expected vectors of dimension 8, got 9",
    "lancedb": "expected vectors of dimension 8, got 9",
    "pgvector": "query vectors have dimension 9 but pgvector column public.{table}.embedding "
    "has 8; embed with the model that built the index",
    "upstash": "query vectors have dimension 9 but the Upstash index at {host} holds 8; "
    "embed with the index's model",
    "milvus": "query vectors have dimension 9 but collection 'docs' in {where} holds 8; "
    "embed with the model that built the index",
    "qdrant": "query vectors have dimension 9 but {where} holds 8; embed with the model "
    "that built the index",
}


def test_each_store_keeps_its_dimension_sentence(store: Any) -> None:
    fields = {
        "table": getattr(store, "table_name", ""),
        "host": getattr(store, "host", ""),
        "where": getattr(store, "_where", ""),
    }
    for search in _searches(store):
        with pytest.raises(InputError) as info:
            search(np.ones((1, D + 1), dtype=np.float32), 3)
        assert str(info.value) == SEAM_WORDING[store.scheme].format(**fields)


def test_upstash_keeps_its_k_sentence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    store = open_store(_upstash_spec(tmp_path, None))  # type: ignore[arg-type]
    with pytest.raises(InputError) as info:
        store.query(np.ones((1, D), dtype=np.float32), 0)
    assert str(info.value) == "k must be at least 1 for an Upstash query, got 0"


NO_EXACT = {
    "chroma": "chroma offers no exact search; compute the exact neighbours from fetched "
    "vectors instead (has_exact is False)",
    "upstash": "Upstash offers no exact search; use the exact search indexcheck runs over "
    "vectors read with iter_vectors",
}


@pytest.mark.parametrize("scheme", list(NO_EXACT))
def test_no_exact_search_is_refused_in_the_engines_words(scheme: str, tmp_path: Path) -> None:
    store = open_store(BUILDERS[scheme](tmp_path, None))  # type: ignore[arg-type]
    try:
        assert store.has_exact is False
        with pytest.raises(InputError) as info:
            store.exact_query(np.ones((1, D), dtype=np.float32), 3)
        assert str(info.value) == NO_EXACT[scheme]
    finally:
        store.close()


# -- the error tables, word for word ------------------------------------------------------

#: recorded from the hand-written translators the tables replaced: [class name, message]
WORDING = json.loads((Path(__file__).parents[1] / "wording" / "store_errors.json").read_text())
UPSTASH_WORDING = [tuple(row) for row in WORDING["upstash"]]
PGVECTOR_WORDING = [tuple(row) for row in WORDING["pgvector"]]
CHROMA_WORDING = [tuple(row) for row in WORDING["chroma"]]


def _upstash_cases() -> list[tuple[int | None, BaseException]]:
    from upstash_vector.errors import UpstashError

    return [
        (401, UpstashError("some message")),
        (403, UpstashError("some message")),
        (None, UpstashError("Unauthorized: invalid token tok")),
        (404, UpstashError("some message")),
        (429, UpstashError("some message")),
        (500, UpstashError("some message")),
        (None, httpx.ReadTimeout("timed out", request=REQUEST)),
        (None, httpx.ConnectError("refused", request=REQUEST)),
        (None, httpx.RemoteProtocolError("eof", request=REQUEST)),
        (200, ValueError("Expecting value")),
        (None, KeyError("odd")),
        (None, httpx.LocalProtocolError("Illegal header value b'tok\\n'")),
    ]


@pytest.mark.parametrize("case", range(len(UPSTASH_WORDING)))
def test_upstash_error_sentences(case: int) -> None:
    status, exc = _upstash_cases()[case]
    store = _upstash()
    err = _outcome(store, exc, _with_status(store, status) if status else None)
    assert (type(err).__name__, str(err)) == UPSTASH_WORDING[case]


@pytest.mark.parametrize("case", range(len(PGVECTOR_WORDING)))
def test_psycopg_error_sentences(case: int) -> None:
    connected, exc, _ = _pg_cases()[case]
    err = _outcome(_pgvector(connected), exc)
    assert (type(err).__name__, str(err)) == PGVECTOR_WORDING[case]


@pytest.mark.parametrize("case", range(len(CHROMA_WORDING)))
def test_chromadb_error_sentences(case: int) -> None:
    exc, _ = _chroma_cases()[case]
    err = _outcome(_chroma(), exc)
    assert (type(err).__name__, str(err)) == CHROMA_WORDING[case]


# -- lancedb, milvus and qdrant: recorded from their tables before they moved to ErrorMap ------


def _lancedb_store() -> Any:
    from indexcheck.stores.lancedb.store import LanceDBStore

    store = LanceDBStore.__new__(LanceDBStore)
    store._name = "docs"
    return store


def _milvus_store() -> Any:
    from indexcheck.stores.milvus.store import MilvusStore

    store = MilvusStore.__new__(MilvusStore)
    store._where = "Milvus at http://127.0.0.1:19530"
    return store


def _qdrant_store() -> Any:
    from indexcheck.stores.qdrant.store import QdrantStore

    store = QdrantStore.__new__(QdrantStore)
    store._location, store._collection = "http://127.0.0.1:6333", "docs"
    return store


def _opening_cases(engine: str) -> list[tuple[str, dict[str, str], BaseException]]:
    """(doing, context, exception) of calls made while each store is opened."""
    if engine == "lancedb":
        return [
            ("connect", {"table": "docs", "path": "/data/lance"}, OSError("Permission denied")),
            ("open the table", {"table": "docs", "path": "/data/lance"}, ValueError("bad page")),
            ("list_indices", {"table": "docs", "path": ""}, RuntimeError("lance error: torn")),
        ]
    if engine == "milvus":
        from pymilvus import MilvusException
        from pymilvus.exceptions import ConnectionConfigException

        lite, server = {"where": "Milvus Lite at /x.db"}, {"where": "Milvus at http://h:19530"}
        return [
            ("open Milvus Lite", lite, ConnectionConfigException(message="Open local milvus")),
            ("connect", lite, ConnectionConfigException(message="Open local milvus")),
            ("find the collection", server, MilvusException(code=2, message="Fail connecting")),
            ("list indexes", server, MilvusException(code=1100, message="auth check failure")),
            ("describe the index", server, MilvusException(code=65535, message="internal")),
        ]
    from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

    local, server = (
        {"location": "/data/qdrant", "collection": ""},
        {"location": "http://127.0.0.1:6333", "collection": "docs"},
    )
    locked = RuntimeError("Storage folder /data/qdrant is already accessed by another instance")
    return [
        ("open the local folder", local, locked),
        ("open the local folder", local, ValueError("Expecting value: line 1")),
        ("open the local folder", local, OSError("Permission denied")),
        ("open the local folder", local, RuntimeError("other")),
        ("find the collection", server, UnexpectedResponse(401, "x", b"no", httpx.Headers())),
        ("list aliases", server, ResponseHandlingException(httpx.ConnectError("refused"))),
        ("read the collection", server, UnexpectedResponse(400, "x", b'{"e":1}', httpx.Headers())),
    ]


def _opening(engine: str, doing: str, context: dict[str, str], exc: BaseException) -> Any:
    """What an opener's translated call raises for ``exc`` (or the exception itself)."""
    module = __import__(f"indexcheck.stores.{engine}.opening", fromlist=["x"])
    table = getattr(module, f"{engine.upper()}_ERRORS")
    try:
        table.call(doing, _raise_it(exc), **context)
    except Exception as err:  # noqa: BLE001 - the outcome is what is recorded
        return err
    raise AssertionError("nothing raised")


def _raise_it(exc: BaseException) -> Callable[[], Any]:
    def fn() -> Any:
        raise exc

    return fn


def _sentences(engine: str) -> list[list[str]]:
    from tests.stores.test_errors import _lancedb_cases, _milvus_cases, _qdrant_cases

    store, reads = {
        "lancedb": (_lancedb_store, lambda: [(e, None) for e in _lancedb_cases()]),
        "milvus": (_milvus_store, _milvus_cases),
        "qdrant": (_qdrant_store, _qdrant_cases),
    }[engine]
    rows = [_outcome(store(), exc) for exc, _ in reads()]
    rows += [_opening(engine, *case) for case in _opening_cases(engine)]
    return [[type(err).__name__, str(err)] for err in rows]


OPENED_ENGINES = ("lancedb", "milvus", "qdrant")


@pytest.mark.parametrize("engine", OPENED_ENGINES)
def test_lancedb_milvus_qdrant_error_sentences(engine: str) -> None:
    assert _sentences(engine) == WORDING[engine]


if __name__ == "__main__":  # python -m tests.stores.test_seam: re-record these three engines
    import sys

    path = Path(__file__).parents[1] / "wording" / "store_errors.json"
    recorded = json.loads(path.read_text())
    for name in sys.argv[1:] or OPENED_ENGINES:
        recorded[name] = _sentences(name)
    path.write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n")
