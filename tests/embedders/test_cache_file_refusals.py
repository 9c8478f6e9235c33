"""The ``--cache`` file: another application's SQLite database is refused read-only before any
write, and a cache holding wrong vectors under the right model id is caught by the audit."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.embedders.cache import APPLICATION_ID, CachedEmbedder, EmbeddingCache, audit_size
from indexcheck.errors import DataFileError
from indexcheck.inputs.corpus import text_hash
from indexcheck.judges.cache import JudgementCache
from indexcheck.stores.files.store import write_vectors_file
from indexcheck.testing import HashEmbedder, positional_cache_bug
from tests.commands.check_index.test_planted_faults import make_corpus
from tests.util import tree_digest

EMB = ["--embedder", "py:indexcheck.testing:HASH32"]
LEGACY_VECTORS = (
    "CREATE TABLE vectors (model TEXT NOT NULL, hash TEXT NOT NULL, dim INTEGER NOT NULL, "
    "vec BLOB NOT NULL, PRIMARY KEY (model, hash))"
)
LEGACY_JUDGEMENTS = (
    "CREATE TABLE judgements (key TEXT PRIMARY KEY, model TEXT NOT NULL, prompt_version TEXT "
    "NOT NULL, reply TEXT NOT NULL, created TEXT NOT NULL)"
)


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEXCHECK_QUIET", "1")


def _write_chunks(path: Path, ids: list[str], texts: list[str]) -> None:
    rows = [json.dumps({"id": i, "text": t}) + "\n" for i, t in zip(ids, texts, strict=True)]
    path.write_text("".join(rows))


def _db(path: Path, *sql: str, wal: bool = False) -> Path:
    db = sqlite3.connect(path)
    if wal:
        db.execute("PRAGMA journal_mode=WAL")
    for s in sql:
        db.execute(s)
    db.commit()
    db.close()
    return path


def _app_db(path: Path, wal: bool = False) -> Path:
    return _db(
        path,
        "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)",
        "INSERT INTO users (name) VALUES ('ana'), ('ben')",
        wal=wal,
    )


def _both_caches(path: Path) -> None:
    for opener in (EmbeddingCache, JudgementCache):
        with pytest.raises(DataFileError, match=f"--cache {path} ") as err:
            opener(path)
        assert "\n" not in str(err.value)


FOREIGN = {
    "an application's database": lambda p: _app_db(p),
    "an application's database in WAL mode": lambda p: _app_db(p, wal=True),
    "our tables beside another": lambda p: _db(p, LEGACY_VECTORS, "CREATE TABLE notes (x)"),
    "a 'vectors' table of another schema": lambda p: _db(
        p, "CREATE TABLE vectors (id TEXT, embedding BLOB)"
    ),
    "our schema under another application_id": lambda p: _db(
        p, LEGACY_VECTORS, "PRAGMA application_id = 1234"
    ),
    "our tables plus a trigger": lambda p: _db(
        p,
        LEGACY_VECTORS,
        "CREATE TABLE log (x)",
        "CREATE TRIGGER t AFTER INSERT ON vectors BEGIN INSERT INTO log VALUES (1); END",
    ),
    "not SQLite at all": lambda p: p.write_text("my notes, not a database\n" * 50),
}


@pytest.mark.parametrize("make", FOREIGN.values(), ids=list(FOREIGN))
def test_a_file_that_is_not_an_indexcheck_cache_is_refused_unchanged(tmp_path, make) -> None:
    folder = tmp_path / "app"
    folder.mkdir()
    path = folder / "app.db"
    make(path)
    before = tree_digest(folder, mtimes=True, dirs=True)
    _both_caches(path)
    assert tree_digest(folder, mtimes=True, dirs=True) == before  # no table, no -wal, no -shm


def test_chroma_sqlite3_as_cache_is_refused_before_any_work(tmp_path) -> None:
    pytest.importorskip("chromadb")
    from tests.builders import chroma

    ids, texts = make_corpus(30, {})
    spec = chroma.build(tmp_path, ids, HashEmbedder(32).embed(texts), texts)
    store = tmp_path / "chroma"
    before = tree_digest(store, mtimes=True, dirs=True)
    r = CliRunner().invoke(
        cli, ["check-index", "--store", spec, *EMB, "--cache", str(store / "chroma.sqlite3")]
    )
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.strip().splitlines()
    # the output guard sees it first: the cache would lie inside the store's own folder
    assert "--cache" in line and "chroma.sqlite3" in line and "Traceback" not in r.output
    assert tree_digest(store, mtimes=True, dirs=True) == before
    # a copy of Chroma's database outside the store reaches the cache check, read-only
    copy = tmp_path / "elsewhere" / "chroma.sqlite3"
    copy.parent.mkdir()
    copy.write_bytes((store / "chroma.sqlite3").read_bytes())
    held = copy.read_bytes()
    r = CliRunner().invoke(cli, ["check-index", "--store", spec, *EMB, "--cache", str(copy)])
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.strip().splitlines()
    assert "is not an indexcheck cache" in line and "chroma.sqlite3" in line
    assert copy.read_bytes() == held and sorted(copy.parent.iterdir()) == [copy]
    assert tree_digest(store, mtimes=True, dirs=True) == before


def test_cli_refuses_an_application_database_with_one_line(tmp_path) -> None:
    ids, texts = make_corpus(40, {})
    write_vectors_file(tmp_path / "v.parquet", ids, HashEmbedder(32).embed(texts))
    chunks = tmp_path / "chunks.jsonl"
    _write_chunks(chunks, ids, texts)
    app = _app_db(tmp_path / "app.db")
    before = app.read_bytes()
    args = ["--store", f"parquet:{tmp_path / 'v.parquet'}", "--chunks", str(chunks), *EMB]
    r = CliRunner().invoke(cli, ["check-index", *args, "--cache", str(app)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    (line,) = r.stderr.strip().splitlines()
    assert f"--cache {app} is not an indexcheck cache" in line and "users" in line
    assert app.read_bytes() == before and not Path(f"{app}-wal").exists()


def test_a_new_cache_carries_the_application_id(tmp_path) -> None:
    path = tmp_path / "c" / "new.sqlite"
    EmbeddingCache(path).close()
    JudgementCache(path).close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert names == {"vectors", "truncated", "judgements"}
    # and it opens again
    EmbeddingCache(path).close()
    JudgementCache(path).close()


@pytest.mark.parametrize("tables", [[LEGACY_VECTORS], [LEGACY_JUDGEMENTS],
                                    [LEGACY_VECTORS, LEGACY_JUDGEMENTS]])  # fmt: skip
def test_a_cache_from_an_earlier_version_is_accepted_and_stamped(tmp_path, tables) -> None:
    path = _db(tmp_path / "old.sqlite", *tables, wal=True)
    emb = HashEmbedder(16)
    if LEGACY_VECTORS in tables:
        v = emb.embed(["kept text"])[0]
        db = sqlite3.connect(path)
        db.execute("INSERT INTO vectors VALUES (?, ?, ?, ?)",
                   (emb.model_id, text_hash("kept text"), 16, v.tobytes()))  # fmt: skip
        db.commit()
        db.close()
    EmbeddingCache(path).close()
    JudgementCache(path).close()
    assert sqlite3.connect(path).execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    if LEGACY_VECTORS in tables:
        cached = CachedEmbedder(HashEmbedder(16), EmbeddingCache(path))
        cached.embed(["kept text"])
        assert cached.hits == 1


def test_an_empty_file_becomes_a_cache(tmp_path) -> None:
    path = tmp_path / "empty.sqlite"
    path.touch()
    EmbeddingCache(path).close()
    assert sqlite3.connect(path).execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID


# -- the audit of cache hits -----------------------------------------------------------------


def _poisoned(tmp_path: Path, n: int = 300) -> tuple[list[str], Path, Path]:
    """A shifted index (the positional-cache bug) as a Parquet store, its chunks, and a cache
    filled with the store's own (wrong) vectors under the right model id."""
    ids, texts = make_corpus(n, {60: 20, 61: 21, 200: 5})
    fresh = HashEmbedder(32).embed(texts)
    stored = positional_cache_bug(texts, fresh)
    write_vectors_file(tmp_path / "v.parquet", ids, stored)
    chunks = tmp_path / "chunks.jsonl"
    _write_chunks(chunks, ids, texts)
    cache = EmbeddingCache(tmp_path / "cache.sqlite")
    wrong: dict[str, np.ndarray] = {}
    for t, v in zip(texts, stored, strict=True):
        wrong.setdefault(text_hash(t), v)
    cache.put_many("hash:32", wrong)
    cache.close()
    return texts, chunks, tmp_path / "cache.sqlite"


@pytest.mark.parametrize("mode", [[], ["--all"]])
def test_a_cache_holding_the_stored_vectors_is_refused_not_passed(tmp_path, mode) -> None:
    _, chunks, cache = _poisoned(tmp_path)
    store = ["--store", f"parquet:{tmp_path / 'v.parquet'}", "--chunks", str(chunks)]
    out = tmp_path / "out.json"
    r = CliRunner().invoke(cli, ["check-index", *store, *EMB, *mode, "--json", str(out)])
    assert r.exit_code == 1  # without the cache the shift is found
    r = CliRunner().invoke(
        cli, ["check-index", *store, *EMB, *mode, "--cache", str(cache), "--json", str(out)]
    )
    assert r.exit_code == 2, r.output  # was 0: a passing check with zero embedding requests
    (line,) = r.stderr.strip().splitlines()
    assert f"--cache {cache}" in line and "do not match" in line
    assert "delete" in line and "--cache" in line
    assert "Traceback" not in r.output


def test_a_clean_cache_passes_its_audit_and_the_manifest_says_so(tmp_path) -> None:
    ids, texts = make_corpus(500, {})
    write_vectors_file(tmp_path / "v.parquet", ids, HashEmbedder(32).embed(texts))
    chunks = tmp_path / "chunks.jsonl"
    _write_chunks(chunks, ids, texts)
    args = ["check-index", "--store", f"parquet:{tmp_path / 'v.parquet'}", "--chunks",
            str(chunks), *EMB, "--all", "--cache", str(tmp_path / "c.sqlite")]  # fmt: skip
    out = tmp_path / "out.json"
    assert CliRunner().invoke(cli, [*args, "--json", str(out)]).exit_code == 0
    first = json.loads(out.read_text())["manifest"]
    assert first["cache_audit"]["sampled"] == 0  # nothing was cached yet
    assert CliRunner().invoke(cli, [*args, "--json", str(out)]).exit_code == 0
    m = json.loads(out.read_text())["manifest"]
    audit = m["cache_audit"]
    assert audit["hits"] == 500 and audit["sampled"] == audit["matched"] == audit_size(500) == 5
    assert audit["mismatched"] == 0 and audit["requests"] >= 1
    assert m["embedding"]["texts"] == 5  # the audit is all this run embedded


def test_audit_size_is_at_least_3_or_1_percent_capped() -> None:
    assert [audit_size(h) for h in (0, 1, 2, 3, 250, 300, 301, 10_000)] == [
        0, 1, 2, 3, 3, 3, 4, 100
    ]  # fmt: skip
    assert audit_size(10**9) == 1000


def test_audit_catches_a_partly_poisoned_cache_across_blocks(tmp_path) -> None:
    emb = HashEmbedder(16)
    texts = [f"text {i}" for i in range(2000)]
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    good = dict(zip((text_hash(t) for t in texts), emb.embed(texts), strict=True))
    bad = {h: -v for h, v in list(good.items())[::2]}  # every other vector is wrong
    cache.put_many(emb.model_id, good | bad)
    cached = CachedEmbedder(HashEmbedder(16), cache)
    with pytest.raises(DataFileError, match=r"of \d+ cached vectors sampled .* do not match"):
        for start in range(0, 2000, 100):
            cached.embed(texts[start : start + 100])


def test_audit_is_seeded_and_counts_only_hits(tmp_path) -> None:
    emb = HashEmbedder(16)
    texts = [f"text {i}" for i in range(400)]
    picks = []
    for run in range(2):
        path = tmp_path / f"c{run}.sqlite"
        CachedEmbedder(HashEmbedder(16), EmbeddingCache(path)).embed(texts[:300])
        inner = HashEmbedder(16)
        cached = CachedEmbedder(inner, EmbeddingCache(path))
        cached.embed(texts)  # 300 hits, 100 misses
        assert cached.audit.hits == 300 and cached.audit.sampled == 3
        assert inner.stats.texts == 100 + 3
        picks.append(cached.audit.sampled_hashes)
    assert picks[0] == picks[1]
    assert emb.model_id == "hash:16"
