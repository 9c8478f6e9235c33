"""``--out pgvector:DSN?table=NEW``: a new table in the source's database, written as a
staging table and renamed at the end (dropped on failure), proved by check-index --all on
the table itself; the source table's rows are identical after (a dump compared), also
after a failed write; a target table that exists or is the source is exit 2 before any
work."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from indexcheck import api
from indexcheck.cli.app import cli
from indexcheck.errors import OutputError
from tests.builders import pgvector as pg_builder
from tests.builders.repeat_corpus import hash_embed, repeat_corpus, seed_bug_vectors
from tests.commands.repair.helpers import CountingEmbedder, write_chunks

pytest.importorskip("psycopg")
HASH32 = "py:indexcheck.testing:HASH32"
N = 160


def _dsn(spec: str) -> str:
    return spec.split(":", 1)[1].split("?", 1)[0]


def _tables(dsn: str) -> list[str]:
    import psycopg

    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return sorted(r[0] for r in rows.fetchall())


def _dump(dsn: str, table: str) -> str:
    import psycopg

    with psycopg.connect(dsn) as conn:
        rows = conn.execute(f'SELECT * FROM "{table}" ORDER BY id').fetchall()  # noqa: S608
    return hashlib.sha256(repr(rows).encode()).hexdigest()


@pytest.fixture
def source(tmp_path: Path) -> tuple[str, Path]:
    c = repeat_corpus(N, 20)
    spec = pg_builder.build(tmp_path, c.ids, seed_bug_vectors(c.texts, hash_embed(32)), c.texts)
    return spec, write_chunks(tmp_path / "chunks.jsonl", c.ids, c.texts)


def test_a_new_table_is_written_and_proved_on_the_table_itself(
    source: tuple[str, Path],
) -> None:
    spec, chunks = source
    dsn, table = _dsn(spec), spec.split("table=", 1)[1].split("&", 1)[0]
    before = _dump(dsn, table)
    new = f"{table}_fixed"
    r = api.repair(spec, out=f"pgvector:{dsn}?table={new}", chunks=chunks,
                   embedder=CountingEmbedder(32))  # fmt: skip
    assert r.ok, r.problems
    assert r.reading == "skip_repeat" and r.target_kind == "pgvector"
    assert r.target_check is not None and r.target_check["checked"] == N
    assert (
        r.target_check["store"].startswith("pgvector:")
        and ":"
        not in (
            r.target_check["store"].split("//", 1)[1].split("@", 1)[0]  # no password shown
        )
    )
    assert new in _tables(dsn) and not [t for t in _tables(dsn) if "__indexcheck_" in t]
    assert _dump(dsn, table) == before


def test_the_source_table_or_an_existing_one_is_exit_2_before_any_work(
    source: tuple[str, Path],
) -> None:
    spec, chunks = source
    dsn, table = _dsn(spec), spec.split("table=", 1)[1].split("&", 1)[0]
    for name, says in ((table, "source table"), ("pg_class_copy", None)):
        if says is None:  # an existing table that is not the source
            import psycopg

            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute("CREATE TABLE IF NOT EXISTS pg_class_copy (id text)")
            says = "already exists"
        emb = CountingEmbedder(32)
        r = CliRunner().invoke(cli, ["repair", "--store", spec, "--chunks", str(chunks),
                                     "--embedder", HASH32,
                                     "--out", f"pgvector:{dsn}?table={name}"])  # fmt: skip
        assert r.exit_code == 2, r.output
        assert says in " ".join(r.output.split()) and "Traceback" not in r.output
        assert emb.sent == []


def test_a_failed_write_leaves_no_table_and_the_source_intact(
    source: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg

    from indexcheck.commands.repair.targets.pgvector import PgvectorWriter

    spec, chunks = source
    dsn, table = _dsn(spec), spec.split("table=", 1)[1].split("&", 1)[0]
    before, tables = _dump(dsn, table), _tables(dsn)
    real = PgvectorWriter.write

    def dies(self: PgvectorWriter, batch: Any) -> None:
        real(self, batch)  # the rows are in the staging table...
        raise psycopg.OperationalError("the server closed the connection")  # ...then it goes

    monkeypatch.setattr(PgvectorWriter, "write", dies)
    with pytest.raises(OutputError, match="nothing was left"):
        api.repair(spec, out=f"pgvector:{dsn}?table={table}_fixed", chunks=chunks,
                   embedder=CountingEmbedder(32))  # fmt: skip
    assert _tables(dsn) == tables  # no target, no staging table
    assert _dump(dsn, table) == before
