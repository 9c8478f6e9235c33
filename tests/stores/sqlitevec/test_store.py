"""The sqlite-vec store against the real engine (sqlite-vec through apsw), on files written
as users write them: LangChain's ``SQLiteVec`` on its defaults, an llm collection, and a
plain vec0 table; every command leaves the file byte-identical."""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.commands.check_index import CheckIndexSettings, check_index
from indexcheck.commands.probe_scale import probe_scale
from indexcheck.errors import FilterError, InputError, MissingDependencyError, SpecError
from indexcheck.filters import ENGINE_MISSING, evaluate, parse_filter
from indexcheck.inputs.corpus import corpus_from_pairs
from indexcheck.stores import open_store
from indexcheck.testing import HashEmbedder, positional_cache_bug
from tests.builders import sqlitevec as builder
from tests.store_contract import check_store_contract
from tests.util import documented_score

pytest.importorskip("apsw")
pytest.importorskip("sqlite_vec")

N = 120
EMBEDDER = "py:indexcheck.testing:HASH32"


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("INDEXCHECK_VECTOR_CACHE", str(tmp_path / "vcache"))


def corpus() -> tuple[list[str], list[dict[str, Any]]]:
    """Texts with two repeats (33 = 4, 70 = 8) and metadata of each kind."""
    texts = [f"Section {i}. Fact number {i} about subject {i % 9}." for i in range(N)]
    texts[33], texts[70] = texts[4], texts[8]
    metas = [
        {"topic": f"t{i % 4}", "year": 2000 + i % 25, "draft": i % 5 == 0}
        | ({"lang": "en" if i % 3 else "de"} if i % 7 else {})
        for i in range(N)
    ]
    return texts, metas


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Buggy:
    """The seed bug as a user's embeddings wrapper: a text-hash cache that does not
    advance the position into the fresh embeddings."""

    def __new__(cls, inner: Any) -> Any:
        from langchain_core.embeddings import Embeddings

        class _Buggy(Embeddings):  # type: ignore[misc]
            def embed_documents(self, texts: list[str]) -> list[list[float]]:
                fresh = np.asarray(inner.embed_documents(texts), dtype=np.float32)
                return positional_cache_bug(texts, fresh).tolist()  # type: ignore[no-any-return]

            def embed_query(self, text: str) -> list[float]:
                return inner.embed_query(text)  # type: ignore[no-any-return]

        return _Buggy()


def lc_embeddings() -> Any:
    from indexcheck.integrations.langchain.embeddings import embeddings

    return embeddings(EMBEDDER)


def write(path: Path, statement: str, params: tuple[Any, ...] = ()) -> None:
    """Plant a fault the way a broken writer would (test-only)."""
    conn = builder.apsw_connection(path)
    conn.execute(statement, params)
    conn.close()


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def langchain_db(tmp_path: Path) -> Path:
    texts, metas = corpus()
    path = tmp_path / "vec.db"
    builder.langchain(path, texts, metas, lc_embeddings())
    return path


# -- the Protocol on each layout ----------------------------------------------------------


def test_contract_on_langchain_llm_and_vec0(tmp_path: Path) -> None:
    texts = [f"distinct text {i}" for i in range(40)]
    vectors = HashEmbedder(32).embed(texts)
    lc = builder.langchain(tmp_path / "lc.db", texts, None, lc_embeddings())
    llm = builder.llm_collection(tmp_path / "llm.db", "docs", [f"d{i}" for i in range(40)],
                                 vectors, texts)  # fmt: skip
    vec0 = builder.build(tmp_path / "v", [f"c{i}" for i in range(40)], vectors, texts, "cosine")
    cases = [
        (lc, [str(i + 1) for i in range(40)], ("langchain", "l2", "l2")),
        (llm, [f"d{i}" for i in range(40)], ("llm", "cosine_similarity", "cos")),
        (vec0, [f"c{i}" for i in range(40)], ("vec0", "cosine", "1-cos")),
    ]
    for spec, ids, (layout, metric, score) in cases:
        with open_store(spec) as store:
            check_store_contract(store, ids, vectors)
            info = store.info()
            assert (info.details["layout"], info.metric, info.score) == (layout, metric, score)
            assert info.approximate is False and store.ordered
            batch = next(store.iter_vectors(5))
            assert batch.texts == texts[:5]


def test_a_file_with_one_index_needs_no_option(tmp_path: Path) -> None:
    texts = [f"t{i}" for i in range(10)]
    builder.langchain(tmp_path / "lc.db", texts, None, lc_embeddings())
    with open_store(f"sqlitevec:{tmp_path / 'lc.db'}") as store:
        assert store.info().details["layout"] == "langchain"
    with open_store(f"sqlitevec:{tmp_path / 'lc.db'}?table=langchain_vec") as store:
        assert store.info().details["table"] == "langchain"  # the vec0 half names the pair


# -- check-index through the CLI -------------------------------------------------------------


def test_clean_langchain_index_passes_sample_and_all(langchain_db: Path) -> None:
    before = sha(langchain_db)
    spec = f"sqlitevec:{langchain_db}?table=langchain"
    for extra in (["--sample", "40", "--seed", "1"], ["--all"]):
        r = run("check-index", "--store", spec, "--embedder", EMBEDDER, *extra)
        assert r.exit_code == 0, r.output
        assert sha(langchain_db) == before


def test_positional_shift_is_told_as_one_story(tmp_path: Path) -> None:
    texts, metas = corpus()
    path = tmp_path / "bad.db"
    builder.langchain(path, texts, metas, Buggy(lc_embeddings()))
    before = sha(path)
    spec = f"sqlitevec:{path}?table=langchain"
    r = run("check-index", "--store", spec, "--embedder", EMBEDDER, "--all")
    assert r.exit_code == 1, r.output
    assert "shift" in r.stdout
    ids = [str(i + 1) for i in range(N)]
    with open_store(spec) as store:
        result = check_index(
            CheckIndexSettings(sample=None), store, HashEmbedder(32), corpus_from_pairs(ids, texts)
        )
    (shift,) = [f for f in result.findings if f.kind == "shift"]
    assert shift.details["start_id"] == ids[34]
    assert [s["start_id"] for s in shift.details["stretches"]] == [ids[34], ids[71]]
    assert [s["trigger_id"] for s in shift.details["stretches"]] == [ids[33], ids[70]]
    by_id = {c.id: c for c in result.chunks}
    assert by_id[ids[50]].holds_vector_of == ids[49]
    assert sha(path) == before


def test_stale_and_missing_vectors_are_found(langchain_db: Path) -> None:
    # chunk 11's text edited without re-embedding; chunk 21's vector row deleted
    write(langchain_db, "UPDATE langchain SET text = text || ' Revised in 2024, see the '"
          "|| 'new appendix on subject scope.' WHERE rowid = 11")  # fmt: skip
    write(langchain_db, "DELETE FROM langchain_vec WHERE rowid = 21")
    before = sha(langchain_db)
    spec = f"sqlitevec:{langchain_db}"
    out = langchain_db.parent / "r.json"
    r = run("check-index", "--store", spec, "--embedder", EMBEDDER, "--all", "--json", str(out))
    assert r.exit_code == 1, r.output
    with open_store(spec) as store:
        b = [x for x in store.iter_vectors(1000)][0]
        texts = b.texts
        assert texts is not None and b.dims[20] == 0
        result = check_index(
            CheckIndexSettings(sample=None),
            store,
            HashEmbedder(32),
            corpus_from_pairs(b.ids, texts),
        )
    status = {c.id: str(c.status) for c in result.chunks if str(c.status) != "ok"}
    assert status == {"11": "stale_vector", "21": "missing_vector"}
    assert sha(langchain_db) == before


def test_orphan_vectors_are_scanned(langchain_db: Path) -> None:
    write(langchain_db, "DELETE FROM langchain WHERE rowid = 5")  # text gone, vector stays
    with open_store(f"sqlitevec:{langchain_db}") as store:
        ids = [i for b in store.iter_vectors(50) for i in b.ids]
        assert store.info().count == N == len(ids) and ids[-1] == "5"
        assert store.fetch(["5"]).found.tolist() == [True]


# -- probe-scale, compare-ann -------------------------------------------------------------------


def unit_vectors(n: int = 200, d: int = 16) -> np.ndarray:
    x = np.random.default_rng(7).standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize(("metric", "formula"), [("l2", "l2"), ("cosine", "1-cos"), ("llm", "cos")])
def test_probe_scale_names_the_transform(tmp_path: Path, metric: str, formula: str) -> None:
    vecs = unit_vectors()
    ids = [f"doc-{i:03d}" for i in range(len(vecs))]
    if metric == "llm":
        spec = builder.llm_collection(tmp_path / "llm.db", "docs", ids, vecs, None)
    else:
        spec = builder.build(tmp_path, ids, vecs, None, metric)
    path = Path(spec.split(":", 1)[1].split("?")[0])
    before = sha(path)
    with open_store(spec) as store:
        r = probe_scale(store)
        assert store.info().score == formula
    assert r.ok, r.message
    assert (r.transform, r.search) == (formula, "query")
    out = run("probe-scale", "--store", spec, "--json", "-")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["transform"] == formula
    assert sha(path) == before


def test_own_search_scores_are_the_documented_distance(tmp_path: Path) -> None:
    vecs = (np.random.default_rng(1).standard_normal((80, 8)) * 2).astype(np.float32)
    ids = [f"r{i}" for i in range(80)]
    for metric, score in (("l2", "l2"), ("cosine", "1-cos")):
        with open_store(builder.build(tmp_path / metric, ids, vecs, None, metric)) as store:
            queries = vecs[:5] + 0.3
            for fn in (store.query, store.exact_query):
                D, I = fn(queries, 6)
                for qi in range(5):
                    want = documented_score(score, vecs, queries[qi])
                    rows = [ids.index(v) for v in I[qi]]
                    np.testing.assert_allclose(D[qi], want[rows], rtol=1e-4, atol=1e-4)
                    assert rows == list(np.argsort(want, kind="stable")[:6])


def test_compare_ann_runs_on_the_engines_knn(langchain_db: Path) -> None:
    before = sha(langchain_db)
    spec = f"sqlitevec:{langchain_db}"
    r = run("compare-ann", "--store", spec, "--queries", "30", "-k", "4", "--json", "-")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["manifest"]["store"]["backend"] == "sqlitevec"
    assert sha(langchain_db) == before


# -- filters ---------------------------------------------------------------------------------------


def random_filter(rng: random.Random, vec0: bool) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["topic", "year", "yearin"] + ([] if vec0 else ["draft", "lang", "or"]))
        if kind == "topic":
            parts.append({"topic": {rng.choice(["$eq", "$ne"]): f"t{rng.randrange(5)}"}})
        elif kind == "year":
            op = rng.choice(["$gt", "$gte", "$lt", "$lte"])
            parts.append({"year": {op: 2000 + rng.randrange(25)}})
        elif kind == "yearin":
            vals = rng.sample(range(2000, 2025), 3)
            parts.append({"year": {rng.choice(["$in", "$nin"]): vals}})
        elif kind == "draft":
            parts.append({"draft": rng.choice([True, False])})
        elif kind == "lang":
            exists = {"lang": {"$exists": rng.random() < 0.5}}
            parts.append(rng.choice([exists, {"lang": {"$ne": "en"}}, {"lang": {"$nin": ["de"]}}]))
        else:
            parts.append({"$or": [{"topic": "t1"}, {"year": {"$lt": 2005}}]})
    return parts[0] if len(parts) == 1 else {"$and": parts}


def exact_truth(vecs: np.ndarray, metas: list[dict[str, Any]], ids: list[str],
                q: np.ndarray, flt: dict[str, Any], score: str, k: int) -> list[str]:  # fmt: skip
    mask = evaluate(parse_filter(flt), metas, missing=ENGINE_MISSING["sqlitevec"])
    d = documented_score(score, vecs, q)
    order = [i for i in np.argsort(d, kind="stable") if mask[i]]
    return [ids[i] for i in order[:k]]


@pytest.mark.parametrize("layout", ["langchain", "vec0", "llm"])
def test_seeded_filters_return_exactly_numpys_rows(tmp_path: Path, layout: str) -> None:
    texts = [f"item {i} of the catalogue, part {i % 11}" for i in range(N)]
    _, metas = corpus()
    ids = [str(i + 1) for i in range(N)] if layout == "langchain" else [f"x{i}" for i in range(N)]
    vecs = HashEmbedder(32).embed(texts)
    if layout == "langchain":
        spec, score = builder.langchain(tmp_path / "f.db", texts, metas, lc_embeddings()), "l2"
    elif layout == "llm":
        spec = builder.llm_collection(tmp_path / "f.db", "c", ids, vecs, texts, metas)
        score = "cos"
    else:
        cols = {"topic": "text", "year": "integer"}
        metas = [{c: m[c] for c in cols} for m in metas]
        spec = builder.build(tmp_path, ids, vecs, texts, "cosine", metadatas=metas, columns=cols)
        score = "1-cos"
    rng = random.Random(3)
    queries = vecs[rng.sample(range(N), 10)] + 0.05
    higher = score == "cos"
    with open_store(spec) as store:
        for n in range(60):
            flt = random_filter(rng, layout == "vec0")
            qi = n % len(queries)
            D, I = store.query(queries[qi : qi + 1], 5, filter=flt)
            got = [i for i in I[0] if i is not None]
            order_by = "1-cos" if higher else score  # cos, nearest first, is 1-cos ascending
            want = exact_truth(vecs, metas, ids, queries[qi], flt, order_by, 5)
            assert got == want, flt


def test_filters_sqlite_vec_cannot_express_are_refused_by_name(tmp_path: Path) -> None:
    vecs = unit_vectors(20, 8)
    metas = [{"topic": f"t{i % 3}", "user": i % 4} for i in range(20)]
    cols = {"topic": "text", "user": "integer partition key"}
    ids = [f"x{i}" for i in range(20)]
    spec = builder.build(tmp_path, ids, vecs, None, "l2", metadatas=metas, columns=cols)
    with open_store(spec) as store:
        for flt, op in (
            ({"$or": [{"topic": "t1"}, {"user": 2}]}, "'$or'"),
            ({"topic": {"$exists": True}}, "'$exists'"),
            ({"user": {"$in": [1, 2]}}, "'$in' on 'user'"),
            ({"topic": 3}, "'$eq' on 'topic'"),
        ):
            with pytest.raises(FilterError, match=re.escape(op)) as err:
                store.query(vecs[:1], 3, filter=flt)
            assert err.value.exit_code == 2
        D, I = store.query(vecs[:1], 3, filter={"user": {"$ne": 1}})  # partition keys filter
        assert all(int(i[1:]) % 4 != 1 for i in I[0])


# -- errors --------------------------------------------------------------------------------


def test_clean_errors_with_one_sentence_to_fix(tmp_path: Path, langchain_db: Path) -> None:
    r = run("check-index", "--store", f"sqlitevec:{tmp_path / 'nope.db'}", "--embedder", EMBEDDER)
    assert r.exit_code == 2 and "no such file" in r.output
    assert not (tmp_path / "nope.db").exists()
    with pytest.raises(InputError, match="no table 'chunks'.*langchain.*pass one"):
        open_store(f"sqlitevec:{langchain_db}?table=chunks")
    (tmp_path / "junk.db").write_bytes(b"not a database at all" * 50)
    with pytest.raises(InputError, match="not an SQLite database"):
        open_store(f"sqlitevec:{tmp_path / 'junk.db'}").info()
    with pytest.raises(SpecError, match="metric"):
        open_store(f"sqlitevec:{langchain_db}?metric=cosine")
    with pytest.raises(SpecError, match="unknown option"):
        open_store(f"sqlitevec:{langchain_db}?tabel=x")
    with pytest.raises(InputError, match="at most 4096"):
        with open_store(f"sqlitevec:{langchain_db}") as store:
            store.query(np.ones((1, 32), np.float32), 5000)


def test_an_ambiguous_file_names_the_option_that_picks(tmp_path: Path) -> None:
    path = tmp_path / "both.db"
    texts = [f"t{i}" for i in range(10)]
    builder.langchain(path, texts, None, lc_embeddings())
    builder.llm_collection(path, "notes", [f"n{i}" for i in range(10)],
                           HashEmbedder(32).embed(texts), texts)  # fmt: skip
    with pytest.raises(SpecError, match="table=langchain, collection=notes.*\\?table= or"):
        open_store(f"sqlitevec:{path}")
    with open_store(f"sqlitevec:{path}?collection=notes") as store:
        assert store.info().details["model"] == "hash-32"


def test_missing_extra_names_the_pip_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "x.db").write_bytes(b"")
    monkeypatch.setitem(sys.modules, "apsw", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'indexcheck\[sqlitevec\]'"):
        open_store(f"sqlitevec:{tmp_path / 'x.db'}")
