"""pgvector: the translated WHERE, run on the PostgreSQL + pgvector the tests start,
selects exactly the rows numpy evaluation says match; values and names never enter the
SQL text, so injection attempts match literally and the table stays intact."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given

from indexcheck.errors import FilterError
from indexcheck.filters import parse_filter, translate
from tests import pg_support
from tests.filters.test_engines import (
    DIM,
    FILTERS,
    FUZZ,
    IDS,
    QUERY,
    RANDOM_FILTERS,
    ROWS,
    VECS,
    K,
    N,
    assert_top_k,
    truth,
)

psycopg = pytest.importorskip("psycopg")
from psycopg import sql  # noqa: E402

pg_server = pg_support.pg_server  # the session fixture (starts/stops the server)

EVIL = "ckd'); DROP TABLE filt_items; --"
EVIL_ROW = N  # one extra row whose profile is the injection text itself


def _vec(v: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.8f}" for x in v) + "]"


@pytest.fixture(scope="module")
def conn(pg_server: pg_support.PgServer) -> Iterator[Any]:
    with psycopg.connect(pg_server.dsn, autocommit=True) as c:
        c.execute("DROP TABLE IF EXISTS filt_items")
        c.execute(
            f"CREATE TABLE filt_items (id int PRIMARY KEY, embedding vector({DIM}), "
            "cmetadata jsonb, profile text)"
        )
        rows = [*ROWS, {"profile": EVIL, "lang": "en"}]
        vecs = np.vstack([VECS, VECS[:1]])
        with c.cursor() as cur:
            cur.executemany(
                "INSERT INTO filt_items VALUES (%s, %s::vector, %s::jsonb, %s)",
                [(i, _vec(vecs[i]), json.dumps(r), r.get("profile")) for i, r in enumerate(rows)],
            )
        yield c
        c.execute("DROP TABLE IF EXISTS filt_items")


def _select(conn: Any, node: Any, **options: Any) -> set[int]:
    fragment, params = translate(node, "pgvector", **options)
    query = sql.SQL("SELECT id FROM filt_items WHERE {} AND id < %s").format(fragment)
    return {r[0] for r in conn.execute(query, [*params, N]).fetchall()}


@pytest.mark.parametrize("f", FILTERS, ids=IDS)
def test_pgvector_where_on_jsonb(conn: Any, f: dict[str, Any]) -> None:
    node = parse_filter(f)
    want = truth(f, "pgvector")
    assert _select(conn, node) == want
    fragment, params = translate(node, "pgvector")
    # no index on the table: ORDER BY distance is exact search over the matching rows
    query = sql.SQL(
        "SELECT id FROM filt_items WHERE {} AND id < %s "
        "ORDER BY embedding <#> %s::vector, id LIMIT %s"
    ).format(fragment)
    got = [r[0] for r in conn.execute(query, [*params, N, _vec(QUERY), K]).fetchall()]
    assert_top_k(got, want)


@pytest.mark.parametrize("f", [f for f in FILTERS if "profile" in json.dumps(f)][:6])
def test_pgvector_where_on_a_plain_column(conn: Any, f: dict[str, Any]) -> None:
    """profile read from its own text column: SQL NULL rules, the same rows as jsonb."""
    node = parse_filter(f)
    assert _select(conn, node, columns={"profile": "profile"}) == truth(f, "pgvector")


def test_injection_in_a_value_matches_literally(conn: Any) -> None:
    for options in ({}, {"columns": {"profile": "profile"}}):
        node = parse_filter({"profile": {"$in": [EVIL, "nope"]}})
        fragment, params = translate(node, "pgvector", **options)
        text = fragment.as_string(conn)
        assert "DROP" not in text and EVIL not in text  # the value is a parameter only
        got = conn.execute(sql.SQL("SELECT id FROM filt_items WHERE {}").format(fragment), params)
        assert [r[0] for r in got.fetchall()] == [EVIL_ROW]
        node = parse_filter({"profile": {"$ne": EVIL}})
        fragment, params = translate(node, "pgvector", **options)
        got = conn.execute(
            sql.SQL("SELECT count(*) FROM filt_items WHERE {}").format(fragment), params
        )
        assert got.fetchone()[0] == sum("profile" in r for r in ROWS)
    # the table is intact: every row is still there
    assert conn.execute("SELECT count(*) FROM filt_items").fetchone()[0] == N + 1


@pytest.mark.parametrize(
    ("build", "needle"),
    [
        (
            lambda: parse_filter({"profile') OR 1=1; DROP TABLE filt_items; --": "x"}),
            "plain identifier",
        ),
        (lambda: parse_filter({'profile"': "x"}), "plain identifier"),
        (
            lambda: translate(
                parse_filter({"a": 1}), "pgvector", metadata_column="x; DROP TABLE t"
            ),
            "plain identifier",
        ),
        (
            lambda: translate(parse_filter({"a": 1}), "pgvector", columns={"a": 'a" = 1 OR "b'}),
            "plain identifier",
        ),
    ],
    ids=["field", "quote-in-field", "metadata-column", "column-name"],
)
def test_injection_in_names_is_refused_before_sql(conn: Any, build: Any, needle: str) -> None:
    with pytest.raises(FilterError, match=needle) as info:
        build()
    assert info.value.exit_code == 2 and "\n" not in str(info.value)
    assert conn.execute("SELECT count(*) FROM filt_items").fetchone()[0] == N + 1


def test_float_bounds_are_exact_decimals(conn: Any) -> None:
    """0.1 + 0.2 has 17 significant digits; a float8 -> numeric cast keeps 15 and would
    call it equal to 0.3. The bound travels as an exact decimal instead."""
    conn.execute(
        "INSERT INTO filt_items VALUES (%s, %s::vector, %s::jsonb, NULL)",
        (N + 1, _vec(VECS[0]), json.dumps({"x": 0.30000000000000004})),
    )
    try:
        assert _select_all(conn, {"x": {"$gt": 0.3}}) == {N + 1}
        assert _select_all(conn, {"x": {"$lte": 0.30000000000000004}}) == {N + 1}
        assert _select_all(conn, {"x": {"$gt": 0.30000000000000004}}) == set()
    finally:
        conn.execute("DELETE FROM filt_items WHERE id = %s", (N + 1,))


def _select_all(conn: Any, f: dict[str, Any]) -> set[int]:
    fragment, params = translate(parse_filter(f), "pgvector")
    query = sql.SQL("SELECT id FROM filt_items WHERE {}").format(fragment)
    return {r[0] for r in conn.execute(query, params).fetchall()}


def test_dotted_paths_into_nested_jsonb(conn: Any) -> None:
    from tests.filters.test_engines import NESTED, NESTED_FILTERS, _nested_truth

    conn.execute("CREATE TEMP TABLE filt_nested (id int, cmetadata jsonb)")
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO filt_nested VALUES (%s, %s::jsonb)",
            [(i, json.dumps(r)) for i, r in enumerate(NESTED)],
        )
    for f in NESTED_FILTERS:
        fragment, params = translate(parse_filter(f), "pgvector")
        query = sql.SQL("SELECT id FROM filt_nested WHERE {}").format(fragment)
        assert {r[0] for r in conn.execute(query, params).fetchall()} == _nested_truth(
            f, "pgvector"
        )


@FUZZ
@given(RANDOM_FILTERS)
def test_random_filters_pgvector(conn: Any, f: dict[str, Any]) -> None:
    node = parse_filter(f)
    assert _select(conn, node) == truth(f, "pgvector")
    assert _select(conn, node, columns={"profile": "profile"}) == truth(f, "pgvector")
