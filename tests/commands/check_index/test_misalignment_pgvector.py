"""One story per misalignment bug on pgvector: the founding bug (a positional cache that
skips repeats), a dropped item and a cache returning its hits first, each replayed
through LangChain's ``PGVector`` into its shared ``langchain_pg_embedding`` table on the
session's PostgreSQL server. With ``--chunks`` (the build order) the first lines are the
same as on FAISS (misalignment_story.py); read from the store alone (rows sorted by id,
no build order) the shifted chunks are ONE finding that says how to name the bug, not
one per holds_vector_of chain."""

from __future__ import annotations

import pytest

from tests import pg_support
from tests.builders.misaligned_index import (
    BATCH,
    CACHE_HITS_FIRST,
    DROPPED,
    SKIP_REPEAT,
    build_pgvector,
    embedding_identity,
    manpage_corpus,
)
from tests.commands.check_index.misalignment_story import (
    TERMINAL_LINES,
    check_replay,
    chunks_file,
    run_check,
)

pytest.importorskip("langchain_postgres")
pg_server = pg_support.pg_server
PG_BUGS = (SKIP_REPEAT, DROPPED, CACHE_HITS_FIRST)


@pytest.fixture(scope="module")
def built(pg_server, tmp_path_factory):  # type: ignore[no-untyped-def]
    c = manpage_corpus()
    root = tmp_path_factory.mktemp("pg-kinds")
    chunks = chunks_file(root, c.ids, c.texts)
    specs = {bug: build_pgvector(pg_server, c, bug, BATCH.get(bug, 64)) for bug in PG_BUGS}
    return c, embedding_identity(c.texts), chunks, specs


@pytest.mark.parametrize("mode", ["--all", "--sample"])
@pytest.mark.parametrize("bug", PG_BUGS)
def test_one_story_per_bug_on_pgvector(bug, mode, built, tmp_path) -> None:  # type: ignore[no-untyped-def]
    check_replay(bug, mode, built, tmp_path, BATCH.get(bug, 64))


def test_without_build_order_one_finding_says_how_to_name_the_bug(built, tmp_path) -> None:  # type: ignore[no-untyped-def]
    c, same, _, specs = built
    spec, source = specs[SKIP_REPEAT]
    output, data = run_check(spec, None, tmp_path, "--all")
    shifts = [f for f in data["findings"] if f["kind"] == "shift"]
    assert len(shifts) == 1, [f["message"][:150] for f in shifts]
    (f,) = shifts
    moved = {c.ids[p] for p in range(len(c.ids)) if same[source[p]] != same[p]}
    assert set(f["chunk_ids"]) == moved
    assert f["details"]["chains_total"] > 3 and len(f["details"]["chains"]) > 3
    assert "rerun with --chunks" in f["message"]
    assert len(output.splitlines()) <= TERMINAL_LINES
