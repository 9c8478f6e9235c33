"""The pgvector store against a real PostgreSQL 16 + pgvector 0.6.2 server (pgserver's).

The server is started once for the session by ``tests/pg_support.py`` on 127.0.0.1 with
password auth; tables are written by ``tests/builders/pgvector.py`` through a separate
read-write connection.
"""

from __future__ import annotations

import pathlib
import struct
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from indexcheck.errors import (
    AuthError,
    BackendUnavailableError,
    DimensionMismatchError,
    InputError,
    SpecError,
)
from indexcheck.stores import StoreSpec, open_store
from indexcheck.stores.pgvector.store import PgvectorStore, decode_vectors
from tests import pg_support
from tests.builders import pgvector as builder
from tests.store_contract import check_store_contract
from tests.util import free_port

psycopg = pytest.importorskip("psycopg")

pg_server = pg_support.pg_server  # the session fixture (starts/stops the server)

N, D = 300, 16  # from ~300 rows up the planner picks the HNSW index for k=10


def make_data(n: int = N, d: int = D, seed: int = 0) -> tuple[list[str], np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, d)).astype(np.float32)
    ids = [f"doc-{i:04d}" for i in range(n)]
    texts = [f"chunk number {i}" for i in range(n)]
    return ids, vectors, texts


def scores(metric: str, q: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The documented pgvector operator value, computed here in float64: (nq, n)."""
    q64, x64 = q.astype(np.float64), x.astype(np.float64)
    if metric == "cosine":
        qn = q64 / np.linalg.norm(q64, axis=1, keepdims=True)
        xn = x64 / np.linalg.norm(x64, axis=1, keepdims=True)
        return 1.0 - qn @ xn.T
    if metric == "l2":
        return np.sqrt(((q64[:, None, :] - x64[None, :, :]) ** 2).sum(-1))
    return -(q64 @ x64.T)


def open_spec(spec: str) -> PgvectorStore:
    store = open_store(spec)
    assert isinstance(store, PgvectorStore)
    return store


@pytest.fixture
def store_factory(pg_server: pg_support.PgServer) -> Iterator[Any]:
    opened: list[PgvectorStore] = []

    def make(spec: str) -> PgvectorStore:
        store = open_spec(spec)
        opened.append(store)
        return store

    yield make
    for s in opened:
        s.close()


def admin(server: pg_support.PgServer) -> Any:
    return psycopg.connect(server.dsn, autocommit=True)


def content_hash(server: pg_support.PgServer, table: str) -> tuple[int, str]:
    with admin(server) as conn:
        row = conn.execute(
            f"SELECT count(*), md5(string_agg(id::text || embedding::text || "
            f"coalesce(content, ''), '|' ORDER BY id)) FROM {table}"
        ).fetchone()
    return int(row[0]), str(row[1])


def table_of(spec: str) -> str:
    return spec.split("table=", 1)[1].split("&", 1)[0]


# ---- contract --------------------------------------------------------------------------


def test_contract_text_ids_with_texts(tmp_path: pathlib.Path, store_factory: Any) -> None:
    ids, vectors, texts = make_data()
    store = store_factory(builder.build(tmp_path, ids, vectors, texts, "cosine"))
    check_store_contract(store, ids, vectors)
    got = store.fetch([ids[5], "nope"])
    assert got.texts == [texts[5], None]
    batch = next(iter(store.iter_vectors(batch=3)))
    assert batch.ids == sorted(ids)[:3] and batch.texts == [texts[0], texts[1], texts[2]]


@pytest.mark.parametrize("id_type", ["bigint", "uuid"])
def test_contract_typed_ids(tmp_path: pathlib.Path, store_factory: Any, id_type: str) -> None:
    _, vectors, texts = make_data(60)
    if id_type == "bigint":
        ids = [str(i * 7) for i in range(60)]
    else:
        ids = [f"00000000-0000-4000-8000-{i:012x}" for i in range(60)]
    spec = builder.build(tmp_path, ids, vectors, texts, "l2", id_type=id_type)
    store = store_factory(spec)
    check_store_contract(store, ids, vectors)
    # ids come back as str, iter in the column's own order (numeric for bigint)
    seen = [i for b in store.iter_vectors(batch=16) for i in b.ids]
    assert seen == ids
    assert store.fetch(["-1", "9" * 30, ids[2]]).found.tolist() == [False, False, True]


def test_contract_without_unique_id_uses_cursor(tmp_path: pathlib.Path, store_factory: Any) -> None:
    ids, vectors, texts = make_data(50)
    spec = builder.build(tmp_path, ids, vectors, texts, "ip", primary_key=False)
    store = store_factory(spec)
    assert store._id_unique is False
    check_store_contract(store, ids, vectors)


# ---- metrics and score scale -----------------------------------------------------------


@pytest.mark.parametrize(("metric", "score"), [("cosine", "1-cos"), ("l2", "l2"), ("ip", "-dot")])
def test_hnsw_opclass_gives_documented_score(
    tmp_path: pathlib.Path, store_factory: Any, metric: str, score: str
) -> None:
    ids, vectors, texts = make_data()
    store = store_factory(builder.build(tmp_path, ids, vectors, texts, metric))
    info = store.info()
    assert (info.metric, info.score, info.higher_is_better) == (metric, score, False)
    assert info.approximate is True
    assert info.details["opclass"] == builder.OPCLASS[metric]
    assert info.details["plan"].startswith("Index Scan using")
    assert info.details["metric_source"].startswith("opclass")

    rng = np.random.default_rng(1)
    queries = rng.standard_normal((6, D)).astype(np.float32)
    Dm, Im = store.query(queries, 5)
    assert Dm.dtype == np.float32 and Dm.shape == (6, 5) and Im.shape == (6, 5)
    truth = scores(metric, queries, vectors)
    pos = {v: i for i, v in enumerate(ids)}
    for qi in range(6):
        want = [truth[qi, pos[v]] for v in Im[qi]]
        np.testing.assert_allclose(Dm[qi], want, rtol=1e-5, atol=1e-5)
        assert np.all(np.diff(Dm[qi]) >= -1e-6)

    # exact_query equals brute force, ids and scores
    De, Ie = store.exact_query(queries, 7)
    order = np.argsort(truth, axis=1, kind="stable")[:, :7]
    assert [[ids[j] for j in row] for row in order] == Ie.tolist()
    np.testing.assert_allclose(De, np.take_along_axis(truth, order, 1), rtol=1e-5, atol=1e-5)


def test_ivfflat_opclass(tmp_path: pathlib.Path, store_factory: Any) -> None:
    ids, vectors, texts = make_data()
    store = store_factory(builder.build(tmp_path, ids, vectors, texts, "l2", index="ivfflat"))
    info = store.info()
    assert (info.metric, info.score, info.details["index_type"]) == ("l2", "l2", "ivfflat")
    assert info.details["ivfflat.probes"] == "1"


def test_exact_query_bypasses_the_index(tmp_path: pathlib.Path, store_factory: Any) -> None:
    """With hnsw.ef_search=1 the index returns one row per query; exact_query returns k."""
    ids, vectors, texts = make_data()
    spec = builder.build(tmp_path, ids, vectors, texts, "cosine")
    store = store_factory(spec + "&ef_search=1")
    assert store.info().details["hnsw.ef_search"] == "1"
    Da, Ia = store.query(vectors[:4], 5)
    assert all(v is not None for v in Ia[:, 0]) and all(v is None for v in Ia[:, 1:].ravel())
    assert np.isnan(Da[:, 1:]).all()
    De, Ie = store.exact_query(vectors[:4], 5)
    assert not np.isnan(De).any() and Ie[:, 0].tolist() == ids[:4]


def test_no_index_defaults_to_cosine_and_says_so(
    tmp_path: pathlib.Path, store_factory: Any
) -> None:
    ids, vectors, texts = make_data(40)
    spec = builder.build(tmp_path, ids, vectors, texts, "l2", index=None)
    store = store_factory(spec.replace("&metric=l2", ""))
    info = store.info()
    assert (info.metric, info.score, info.approximate) == ("cosine", "1-cos", False)
    assert info.details["metric_source"].startswith("default")
    assert info.details["index"] is None and info.details["plan"] == "Seq Scan"


def test_metric_param_overrides_index(tmp_path: pathlib.Path, store_factory: Any) -> None:
    ids, vectors, texts = make_data(40)
    spec = builder.build(tmp_path, ids, vectors, texts, "cosine")
    store = store_factory(spec + "&metric=l2")
    info = store.info()
    assert (info.metric, info.score, info.approximate) == ("l2", "l2", False)
    assert info.details["ann_indexes"]  # the cosine index is listed, but not used
    Dm, Im = store.query(vectors[:2], 3)
    pos = {v: i for i, v in enumerate(ids)}
    truth = scores("l2", vectors[:2], vectors)
    np.testing.assert_allclose(Dm[1], [truth[1, pos[v]] for v in Im[1]], rtol=1e-5, atol=1e-5)


def test_ragged_and_null_vectors(
    tmp_path: pathlib.Path, pg_server: pg_support.PgServer, store_factory: Any
) -> None:
    ids, vectors, texts = make_data(20)
    spec = builder.build(tmp_path, ids, vectors, texts, "cosine", index=None, typed_dimension=False)
    table = table_of(spec)
    with admin(pg_server) as conn:
        conn.execute(f"INSERT INTO {table} (id, embedding) VALUES ('z-short', '[1,2,3]')")
        conn.execute(f"INSERT INTO {table} (id, embedding) VALUES ('z-null', NULL)")
    store = store_factory(spec)
    info = store.info()
    assert (info.count, info.dimension, info.details["null_vectors"]) == (22, D, 1)
    got = store.fetch(["z-short", "z-null", ids[1]])
    assert got.found.tolist() == [True, True, True]
    assert got.dims.tolist() == [3, 0, D]
    np.testing.assert_allclose(got.vectors[2], vectors[1], rtol=1e-6)
    last = list(store.iter_vectors(batch=8))[-1]
    assert last.ids[-2:] == ["z-null", "z-short"] and last.dims[-2:].tolist() == [0, 3]
    # exact search ranks the rows of the right dimension; a NULL vector is never a hit
    _, Im = store.exact_query(vectors[:1], 25)
    assert Im[0, 0] == ids[0] and sorted(Im[0, :20].tolist()) == ids
    assert Im[0, 20:].tolist() == [None] * 5
    # the application's own query fails in pgvector on the short row: said so plainly
    with pytest.raises(DimensionMismatchError, match="not 16"):
        store.query(vectors[:1], 3)


def test_query_dimension_mismatch(tmp_path: pathlib.Path, store_factory: Any) -> None:
    ids, vectors, texts = make_data(20)
    store = store_factory(builder.build(tmp_path, ids, vectors, texts))
    with pytest.raises(DimensionMismatchError, match="dimension 8"):
        store.query(np.zeros((1, 8), dtype=np.float32), 3)


# ---- read-only -------------------------------------------------------------------------


def test_read_only_proof(
    tmp_path: pathlib.Path, pg_server: pg_support.PgServer, store_factory: Any
) -> None:
    ids, vectors, texts = make_data()
    spec = builder.build(tmp_path, ids, vectors, texts, "cosine")
    table = table_of(spec)
    before = content_hash(pg_server, table)
    store = store_factory(spec)
    store.info()
    fp = store.fingerprint()
    store.fetch(ids[:50])
    list(store.iter_vectors(batch=64))
    store.query(vectors[:3], 4)
    store.exact_query(vectors[:3], 4)
    assert content_hash(pg_server, table) == before
    assert store.fingerprint() == fp

    conn = store.conn
    assert conn.execute("SHOW default_transaction_read_only").fetchone() == ("on",)
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        conn.execute(f"DELETE FROM {table}")
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction), conn.transaction():
        conn.execute(f"INSERT INTO {table} (id) VALUES ('intruder')")
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        conn.execute("CREATE TABLE sneaky (x int)")
    assert content_hash(pg_server, table) == before


def test_fingerprint_sees_an_update(
    tmp_path: pathlib.Path, pg_server: pg_support.PgServer, store_factory: Any
) -> None:
    ids, vectors, texts = make_data(30)
    spec = builder.build(tmp_path, ids, vectors, texts)
    store = store_factory(spec)
    fp = store.fingerprint()
    with admin(pg_server) as conn:
        conn.execute(
            f"UPDATE {table_of(spec)} SET embedding = %s::vector WHERE id = %s",
            (builder.vector_text(vectors[0] * 2), ids[3]),
        )
    assert store.fingerprint() != fp


# ---- errors and secrets ----------------------------------------------------------------


def test_wrong_port_is_unavailable(pg_server: pg_support.PgServer) -> None:
    port = free_port()
    dsn = pg_server.dsn.replace(f":{pg_server.port}/", f":{port}/")
    with pytest.raises(BackendUnavailableError) as err:
        open_store(f"pgvector:{dsn}?table=x")
    assert f"127.0.0.1:{port}" in str(err.value)
    assert pg_server.password not in str(err.value)


def test_wrong_password_is_auth_error(
    tmp_path: pathlib.Path, pg_server: pg_support.PgServer
) -> None:
    ids, vectors, texts = make_data(10)
    spec = builder.build(tmp_path, ids, vectors, texts)
    bad = spec.replace(f":{pg_server.password}@", ":wrong-pass-123@")
    with pytest.raises(AuthError) as err:
        open_store(bad)
    assert "wrong-pass-123" not in str(err.value) and "postgres" in str(err.value)


def test_no_select_privilege_is_auth_error(
    tmp_path: pathlib.Path, pg_server: pg_support.PgServer
) -> None:
    ids, vectors, texts = make_data(10)
    spec = builder.build(tmp_path, ids, vectors, texts)
    with admin(pg_server) as conn:
        conn.execute("DROP ROLE IF EXISTS reader")
        conn.execute("CREATE ROLE reader LOGIN PASSWORD 'reader-pw-77'")
    reader = spec.replace(f"{pg_server.user}:{pg_server.password}@", "reader:reader-pw-77@")
    store = open_spec(reader)
    try:
        with pytest.raises(AuthError, match="GRANT SELECT"):
            store.info()
    finally:
        store.close()


def test_missing_table_and_columns_are_input_errors(
    tmp_path: pathlib.Path, pg_server: pg_support.PgServer
) -> None:
    ids, vectors, texts = make_data(10)
    spec = builder.build(tmp_path, ids, vectors, texts)
    table = table_of(spec)
    base = spec.split("?", 1)[0]
    with pytest.raises(InputError) as err:
        open_store(f"{base}?table=no_such_table")
    msg = str(err.value)
    assert "no_such_table" in msg and "?table=" in msg
    assert "tables with vector columns: public.t_" in msg and table.startswith("t_")
    assert pg_server.password not in msg
    with pytest.raises(InputError, match="&vector=COLUMN"):
        open_store(f"{spec}&vector=vec")
    with pytest.raises(InputError, match="not vector or halfvec"):
        open_store(f"{spec}&vector=content")
    with pytest.raises(InputError, match="&id=COLUMN"):
        open_store(f"{spec}&id=chunk_id")
    with pytest.raises(InputError, match="&text=COLUMN"):
        open_store(f"{spec}&text=body")
    with pytest.raises(InputError, match="no database 'nodb'"):
        open_store(spec.replace("/indexcheck?", "/nodb?"))


def test_spec_errors_and_password_never_shown(
    tmp_path: pathlib.Path, pg_server: pg_support.PgServer, store_factory: Any
) -> None:
    ids, vectors, texts = make_data(10)
    spec = builder.build(tmp_path, ids, vectors, texts)
    assert pg_server.password in spec
    store = store_factory(spec)
    assert pg_server.password not in store.spec and pg_server.password not in repr(store)
    assert store.spec.startswith(f"pgvector:postgresql://postgres@127.0.0.1:{pg_server.port}/")
    assert f"table={table_of(spec)}" in store.spec
    assert pg_server.password not in str(store.info())
    with pytest.raises(SpecError, match=r"\?table="):
        open_store(spec.split("?", 1)[0])
    with pytest.raises(SpecError, match="metric"):
        open_store(spec + "&metric=dot")
    with pytest.raises(SpecError, match="postgresql://"):
        open_store("pgvector:localhost:5432/db?table=t")


# ---- decoding --------------------------------------------------------------------------


def test_decode_vectors_vector_and_halfvec() -> None:
    vals = [0.5, -1.25, 3.0]
    vec = struct.pack(">hh3f", 3, 0, *vals)
    half = struct.pack(">hh3e", 3, 0, *vals)
    short = struct.pack(">hh2f", 2, 0, 1.0, 2.0)
    out, dims = decode_vectors([vec, vec], 3)
    np.testing.assert_array_equal(out, [vals, vals])
    assert out.dtype == np.float32 and dims.tolist() == [3, 3]
    out, dims = decode_vectors([half, None], 3, ">f2")
    np.testing.assert_array_equal(out, [vals, [0, 0, 0]])
    assert dims.tolist() == [3, 0]
    out, dims = decode_vectors([short, vec], 3)
    assert dims.tolist() == [2, 3] and out[0].tolist() == [0, 0, 0]


def test_spec_parse_keeps_libpq_options_but_hides_secrets() -> None:
    parsed = StoreSpec.parse(
        "pgvector:postgresql://u:p%40ss@db.example:6543/app?table=t&sslmode=require"
        "&sslpassword=hush"
    )
    store = PgvectorStore.__new__(PgvectorStore)
    store._parse(parsed)
    assert store.spec == "pgvector:postgresql://u@db.example:6543/app?table=t&sslmode=require"
    assert store._password == "p@ss" and store._libpq == {
        "sslmode": "require",
        "sslpassword": "hush",
    }
    assert store._where == "db.example:6543"
