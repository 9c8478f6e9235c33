"""The Upstash store, against the loopback emulator through the real ``upstash-vector`` SDK."""

from __future__ import annotations

import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from upstash_vector import Index

from indexcheck.errors import (
    AuthError,
    BackendUnavailableError,
    DimensionMismatchError,
    IncompleteResultError,
    IndexcheckError,
    InputError,
    MissingDependencyError,
    RateLimitError,
    SpecError,
)
from indexcheck.stores import StoreSpec, open_store
from indexcheck.stores.upstash.store import TOKEN_ENV, URL_ENV, UpstashStore
from tests.builders.upstash import build
from tests.emulators.upstash_emulator import UpstashEmulator
from tests.store_contract import check_store_contract

TOKEN = "tok-SECRET-1234567890"
FAST = "retries=2&retry_interval=0.001&timeout=5"


@pytest.fixture
def emu(monkeypatch: pytest.MonkeyPatch) -> Iterator[UpstashEmulator]:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    monkeypatch.delenv(URL_ENV, raising=False)
    with UpstashEmulator(token=TOKEN, exact=True) as e:
        yield e


def data(
    n: int = 40, d: int = 8, seed: int = 0, unit: bool = False
) -> tuple[list[str], np.ndarray]:
    vectors = np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)
    if unit:
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [f"chunk-{i:03d}" for i in range(n)], vectors


def make(
    emu: UpstashEmulator, n: int = 40, metric: str = "cosine", **kw: Any
) -> tuple[str, list[str], np.ndarray]:
    ids, vectors = data(n, unit=metric == "dot")
    texts = [f"text of {i}" for i in ids]
    spec = build(Path(), ids, vectors, texts, metric, emulator=emu, params=FAST, **kw)
    return spec, ids, vectors


def documented(similarity: str, q: np.ndarray, v: np.ndarray) -> float:
    """Upstash's documented score for one pair, computed here independently of the emulator."""
    q64, v64 = q.astype(np.float64), v.astype(np.float64)
    if similarity == "COSINE":
        return (1 + float(q64 @ v64) / float(np.linalg.norm(q64) * np.linalg.norm(v64))) / 2
    if similarity == "EUCLIDEAN":
        return 1 / (1 + float(((q64 - v64) ** 2).sum()))
    return (1 + float(q64 @ v64)) / 2


def fails(fn: Callable[[], object]) -> IndexcheckError:
    with pytest.raises(IndexcheckError) as info:
        fn()
    return info.value


# -- the contract and the score scale ------------------------------------------------------
@pytest.mark.parametrize(
    "metric,similarity,score",
    [
        ("cosine", "COSINE", "(1+cos)/2"),
        ("l2", "EUCLIDEAN", "1/(1+l2^2)"),
        ("dot", "DOT_PRODUCT", "(1+dot)/2"),
    ],
)
def test_contract_and_documented_score(
    emu: UpstashEmulator, metric: str, similarity: str, score: str
) -> None:
    spec, ids, vectors = make(emu, metric=metric)
    store = open_store(spec)
    check_store_contract(store, ids, vectors)
    info = store.info()
    assert (info.backend, info.metric, info.score) == ("upstash", similarity, score)
    assert info.higher_is_better is True and info.approximate is True and not store.has_exact
    queries = np.random.default_rng(5).normal(size=(6, vectors.shape[1])).astype(np.float32)
    D, I = store.query(queries, 4)
    pos = {v: i for i, v in enumerate(ids)}
    for qi in range(6):
        expected = [documented(similarity, queries[qi], vectors[pos[v]]) for v in I[qi]]
        np.testing.assert_allclose(D[qi], expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(InputError, match="no exact search"):
        store.exact_query(queries, 4)


def test_query_pads_with_nan_and_checks_dimension(emu: UpstashEmulator) -> None:
    spec, ids, vectors = make(emu, n=5)
    store = open_store(spec)
    D, I = store.query(vectors[:2], 8)
    assert D.shape == (2, 8) and np.isnan(D[:, 5:]).all() and (I[:, 5:] == None).all()  # noqa: E711
    with pytest.raises(DimensionMismatchError, match="Upstash"):
        store.query(np.zeros((1, 3), dtype=np.float32), 2)


# -- texts, metadata, namespaces, batching ------------------------------------------------
def test_texts_from_data_or_metadata(emu: UpstashEmulator) -> None:
    spec, ids, _ = make(emu, n=10)
    assert open_store(spec).fetch(ids[:2]).texts == [f"text of {i}" for i in ids[:2]]
    spec, ids, _ = make(emu, n=10, text_in="metadata")
    store = open_store(spec)
    assert store.fetch([ids[3], "nope"]).texts == [f"text of {ids[3]}", None]
    batch = next(iter(store.iter_vectors(batch=4)))
    assert batch.texts == [f"text of {i}" for i in batch.ids]
    assert batch.metadata is not None and batch.metadata[0]["text"] == batch.texts[0]
    assert open_store(spec + "&text_field=title").fetch(ids[:1]).texts is None


def test_namespace_reads_only_its_vectors(emu: UpstashEmulator) -> None:
    spec, ids, vectors = make(emu, n=12, namespace="docs")
    Index(url=spec.split("?")[0][len("upstash:") :], token=TOKEN, retries=0).upsert(
        [("default-only", vectors[0].tolist())]
    )
    store = open_store(spec)
    assert "namespace=docs" in store.spec
    check_store_contract(store, ids, vectors)
    assert {r.namespace for r in emu.requests if r.command in ("fetch", "range", "query")} == {
        "docs"
    }
    assert store.info().details["index_vector_count"] == 13
    with pytest.raises(InputError, match="no namespace 'nope'.*'docs'"):
        open_store(spec.replace("namespace=docs", "namespace=nope")).info()


def test_requests_respect_the_read_limit(emu: UpstashEmulator) -> None:
    spec, ids, _ = make(emu, n=2100)
    store = open_store(spec)
    before = len(emu.requests)
    assert store.fetch(ids + ["missing"]).found.sum() == 2100
    fetches = [r for r in emu.requests[before:] if r.command == "fetch"]
    assert [len(r.body["ids"]) for r in fetches] == [1000, 1000, 101]
    assert sum(len(b.ids) for b in store.iter_vectors(batch=5000)) == 2100
    assert max(r.body["limit"] for r in emu.requests if r.command == "range") <= 1000
    small = open_store(spec + "&batch=7")
    before = len(emu.requests)
    small.fetch(ids[:20])
    assert sum(r.command == "fetch" for r in emu.requests[before:]) == 3


# -- failures -----------------------------------------------------------------------------
def test_429_a_few_times_then_completes(emu: UpstashEmulator) -> None:
    spec, ids, vectors = make(emu)
    store = open_store(spec)
    assert isinstance(store, UpstashStore)
    emu.fail_next(2, 429)
    assert store.info().count == 40
    assert store.retries == 2
    emu.fail_next(2, 503)
    assert store.fetch(ids[:3]).found.all()
    emu.truncate_next(1)
    assert store.query(vectors[:1], 1)[1][0, 0] == ids[0]


def test_retry_after_is_honoured(emu: UpstashEmulator) -> None:
    spec, _, _ = make(emu)
    slept: list[float] = []
    store = UpstashStore.from_spec(StoreSpec.parse(spec), sleep=slept.append)
    emu.fail_next(1, 429, retry_after=7)
    store.info()
    assert slept == [7.0]


def test_429_forever_is_a_rate_limit_error(emu: UpstashEmulator) -> None:
    spec, _, _ = make(emu)
    emu.fail_next(100, 429)
    err = fails(open_store(spec).info)
    assert isinstance(err, RateLimitError) and "Upstash" in str(err) and "retries" in str(err)
    assert sum(r.command == "info" for r in emu.requests) == 3  # 1 try + 2 retries


@pytest.mark.parametrize("status", [500, 503])
def test_5xx_forever_is_backend_unavailable(emu: UpstashEmulator, status: int) -> None:
    spec, _, _ = make(emu)
    emu.fail_next(100, status)
    err = fails(open_store(spec).info)
    assert type(err) is BackendUnavailableError and f"HTTP {status}" in str(err)


def test_401_and_403_are_auth_errors_without_retries(
    emu: UpstashEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, _, _ = make(emu)
    monkeypatch.setenv(TOKEN_ENV, "wrong-token")
    before = len(emu.requests)
    err = fails(open_store(spec).info)
    assert isinstance(err, AuthError) and TOKEN_ENV in str(err)
    assert len(emu.requests) == before + 1
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    emu.fail_next(1, 403)
    assert isinstance(fails(open_store(spec).info), AuthError)


def test_connection_refused_is_backend_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    err = fails(open_store(f"upstash:http://127.0.0.1:{port}?{FAST}").info)
    assert type(err) is BackendUnavailableError and "could not connect" in str(err)


def test_slow_reply_times_out(emu: UpstashEmulator) -> None:
    spec, _, _ = make(emu)
    emu.delay = 0.5
    slow = spec.replace("retries=2", "retries=0").replace("timeout=5", "timeout=0.1")
    err = fails(open_store(slow).info)
    assert type(err) is BackendUnavailableError and "no reply within 0.1 s" in str(err)


def test_truncated_body_forever_is_backend_unavailable(emu: UpstashEmulator) -> None:
    spec, _, _ = make(emu)
    emu.truncate_next(100)
    err = fails(open_store(spec).info)
    assert type(err) is BackendUnavailableError and "not valid JSON" in str(err)


def test_short_fetch_is_incomplete(emu: UpstashEmulator) -> None:
    spec, ids, _ = make(emu)
    store = open_store(spec)
    store.info()
    emu.short_next(1)
    err = fails(lambda: store.fetch(ids[:5]))
    assert isinstance(err, IncompleteResultError) and "4 entries for 5 ids" in str(err)


def test_missing_sdk_names_the_extra(emu: UpstashEmulator, monkeypatch: pytest.MonkeyPatch) -> None:
    spec, _, _ = make(emu)
    monkeypatch.setitem(sys.modules, "upstash_vector", None)
    with pytest.raises(MissingDependencyError, match=r"indexcheck\[upstash\]"):
        open_store(spec)


def test_spec_and_environment_errors(emu: UpstashEmulator, monkeypatch: pytest.MonkeyPatch) -> None:
    spec, _, _ = make(emu)
    url = spec.split("?")[0][len("upstash:") :]
    monkeypatch.setenv(URL_ENV, url)
    assert open_store(f"upstash:?{FAST}").info().count == 40  # URL from the environment
    monkeypatch.delenv(URL_ENV)
    with pytest.raises(InputError, match=URL_ENV):
        open_store("upstash:")
    with pytest.raises(SpecError, match="unknown option.*token") as info:
        open_store(f"upstash:{url}?token={TOKEN}")
    assert TOKEN not in str(info.value)
    with pytest.raises(SpecError, match="retries"):
        open_store(f"upstash:{url}?retries=many")
    with pytest.raises(SpecError, match="URL"):
        open_store("upstash:ftp://example.com")
    monkeypatch.delenv(TOKEN_ENV)
    with pytest.raises(InputError, match=TOKEN_ENV):
        open_store(spec)


# -- read-only and secrets ----------------------------------------------------------------
def test_store_never_writes(emu: UpstashEmulator) -> None:
    spec, ids, vectors = make(emu)
    writes_after_build = len(emu.writes())
    reads_from = len(emu.requests)
    store = open_store(spec)
    check_store_contract(store, ids, vectors)
    store.fingerprint()
    list(store.iter_vectors(batch=3))
    store.query(vectors, 10)
    store.fetch(ids)
    store.close()
    assert len(emu.writes()) == writes_after_build
    assert {r.command for r in emu.requests[reads_from:]} == {"info", "fetch", "range", "query"}


def test_fingerprint_follows_content(emu: UpstashEmulator) -> None:
    spec, ids, vectors = make(emu)
    store = open_store(spec)
    fp = store.fingerprint()
    assert store.fingerprint() == fp
    writer = Index(url=spec.split("?")[0][len("upstash:") :], token=TOKEN, retries=0)
    writer.upsert([(ids[0], (vectors[0] + 1).tolist())])  # same count, changed vector
    assert store.fingerprint() != fp


def test_token_never_appears_in_messages_or_spec(
    emu: UpstashEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, ids, _ = make(emu)
    store = open_store(spec)
    errors = []
    for status, n in [(429, 100), (500, 100), (401, 1), (400, 1)]:
        emu.fail_next(n, status, message=f"echo Bearer {TOKEN}")
        errors.append(fails(store.info))
        emu.clear_faults()
    emu.truncate_next(100)
    errors.append(fails(store.info))
    emu.clear_faults()
    emu.short_next(1)
    errors.append(fails(lambda: store.fetch(ids)))
    monkeypatch.setenv(TOKEN_ENV, "another-secret-token")
    wrong = open_store(spec)
    errors.append(fails(wrong.info))
    assert len(errors) == 7
    for err in errors:
        text = f"{err} {err!r} {err.args}"
        assert TOKEN not in text and "another-secret-token" not in text
        assert "Upstash" in str(err)
    for s in (store, wrong):
        shown = f"{s.spec} {s!r}"
        assert TOKEN not in shown and "another-secret-token" not in shown
    assert TOKEN not in str(store.info().details)


def test_ann_comparator_finds_misses_only_in_approximate_mode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    ids, vectors = data(300, 16, seed=3)
    queries = np.random.default_rng(4).normal(size=(50, 16)).astype(np.float32)
    misses = {}
    for exact in (False, True):
        with UpstashEmulator(token=TOKEN, exact=exact, nlist=16, nprobe=1) as emu:
            store = open_store(build(Path(), ids, vectors, None, emulator=emu, params=FAST))
            stored = {v: b.vectors[i] for b in store.iter_vectors() for i, v in enumerate(b.ids)}
            mat = np.stack([stored[i] for i in ids])
            unit = mat / np.linalg.norm(mat, axis=1, keepdims=True)
            truth = [ids[int(np.argmax(unit @ q))] for q in queries]
            _, I = store.query(queries, 1)
            misses[exact] = sum(I[qi, 0] != truth[qi] for qi in range(len(queries)))
    assert misses[True] == 0
    assert misses[False] >= 5


@pytest.mark.parametrize("how", ["gzip", "encoding"])
def test_an_unreadable_reply_is_retried_like_a_5xx(emu: UpstashEmulator, how: str) -> None:
    """A 200 whose gzip header lies (httpx DecodingError) or whose bytes are not UTF-8: retried
    within the same budget, then exit 3 naming the service, never the catch-all."""
    spec, _, _ = make(emu)
    emu.garble_next(1, how)
    before = len(emu.requests)
    assert open_store(spec).info().count > 0  # the retry got a good reply
    assert len(emu.requests) == before + 2
    emu.garble_next(100, how)
    err = fails(open_store(spec).info)
    assert type(err) is BackendUnavailableError and "upstash" in str(err).lower(), err
