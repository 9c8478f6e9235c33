"""The Mistral embedder through the real ``mistralai`` SDK against a loopback emulator."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from indexcheck.embedders.base import RetryPolicy
from indexcheck.embedders.mistral.embedder import MistralEmbedder, from_spec
from indexcheck.errors import (
    AuthError,
    BackendUnavailableError,
    InputError,
    MissingDependencyError,
    RateLimitError,
    SpecError,
)
from tests.emulators.mistral_emulator import MistralEmulator, count_tokens, expected_vector

pytest.importorskip("mistralai.client")

KEY = "sk-test-9f3a51c2e8d74b06"
TEXTS = [
    "Vaccinate puppies at eight weeks.",
    "Cats need taurine in their diet.",
    "Vaccinate puppies at eight weeks.",
    "Rabbits eat hay all day long and then some more",
    "",
]


@pytest.fixture
def emu() -> Iterator[MistralEmulator]:
    with MistralEmulator(api_key=KEY) as server:
        yield server


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MISTRAL_API_KEY", raising=False)
    monkeypatch.delenv("MISTRAL_SERVER_URL", raising=False)
    monkeypatch.delenv("MISTRAL_SA_TOKEN_PATH", raising=False)


class Sleeps(list[float]):
    """A no-op ``sleep`` that records the delays asked for."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make(emu: MistralEmulator, retries: int = 3, **kw: Any) -> tuple[MistralEmbedder, Sleeps]:
    sleeps = Sleeps()
    kw.setdefault("api_key", KEY)
    embedder = MistralEmbedder(
        server_url=emu.url,
        retry=RetryPolicy(max_retries=retries, base_delay=0.001, max_delay=5.0),
        sleep=sleeps,
        **kw,
    )
    return embedder, sleeps


def test_vectors_shape_dtype_order_and_equal_texts(emu: MistralEmulator) -> None:
    embedder, _ = make(emu)
    out = embedder.embed(TEXTS)
    assert out.shape == (len(TEXTS), 1024) and out.dtype == np.float32
    for row, text in zip(out, TEXTS, strict=True):
        np.testing.assert_allclose(row, expected_vector(text), rtol=0, atol=1e-6)
    np.testing.assert_array_equal(out[0], out[2])
    assert not np.allclose(out[0], out[1])
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert embedder.model_id == "mistral:mistral-embed" and embedder.dimension == 1024
    (request,) = emu.requests
    assert request["path"] == "/v1/embeddings"
    assert request["body"] == {"model": "mistral-embed", "input": TEXTS}


def test_rows_are_placed_by_index_not_reply_order(emu: MistralEmulator) -> None:
    emu.shuffle = True  # the emulator answers rows in reverse order, each with its index
    embedder, _ = make(emu)
    out = embedder.embed(TEXTS[:4])
    for row, text in zip(out, TEXTS[:4], strict=True):
        np.testing.assert_allclose(row, expected_vector(text), atol=1e-6)


def test_batching_splits_requests_and_counts_tokens(emu: MistralEmulator) -> None:
    texts = [f"chunk number {i} about dogs" for i in range(10)]
    embedder, _ = make(emu, batch_size=4)
    out = embedder.embed(texts)
    assert [len(r["body"]["input"]) for r in emu.requests] == [4, 4, 2]
    assert embedder.stats.requests == 3 and embedder.stats.texts == 10
    assert embedder.stats.tokens == sum(count_tokens(t) for t in texts) == 50
    np.testing.assert_allclose(out[9], expected_vector(texts[9]), atol=1e-6)


def test_default_batch_size_is_32(emu: MistralEmulator) -> None:
    embedder, _ = make(emu)
    embedder.embed([f"t{i}" for i in range(40)])
    assert embedder.batch_size == 32
    assert [len(r["body"]["input"]) for r in emu.requests] == [32, 8]


def test_429_three_times_then_success_retries_in_base_only(emu: MistralEmulator) -> None:
    emu.fail(429, times=3)
    embedder, sleeps = make(emu, retries=6)
    out = embedder.embed(TEXTS[:2])
    np.testing.assert_allclose(out[1], expected_vector(TEXTS[1]), atol=1e-6)
    assert embedder.stats.retries == 3 and len(sleeps) == 3
    assert embedder.stats.requests == 4 == len(emu.requests)  # the SDK itself sent each once
    assert all(s <= 0.01 for s in sleeps)
    assert embedder.stats.tokens == sum(count_tokens(t) for t in TEXTS[:2])


def test_retry_after_header_sets_the_delay(emu: MistralEmulator) -> None:
    emu.fail(429, times=1, retry_after=2.5)
    embedder, sleeps = make(emu)
    embedder.embed(["hello"])
    assert sleeps == [2.5]


def test_429_forever_raises_rate_limit_error(emu: MistralEmulator) -> None:
    emu.fail(429, times=None)
    embedder, sleeps = make(emu, retries=3)
    with pytest.raises(RateLimitError, match="429"):
        embedder.embed(["hello"])
    assert len(emu.requests) == 4 and len(sleeps) == 3 and embedder.stats.retries == 3


def test_503_forever_raises_backend_unavailable(emu: MistralEmulator) -> None:
    emu.fail(503, times=None)
    embedder, _ = make(emu, retries=2)
    with pytest.raises(BackendUnavailableError, match="503"):
        embedder.embed(["hello"])
    assert len(emu.requests) == 3


@pytest.mark.parametrize("status", [500, 502, 504])
def test_transient_5xx_is_retried(emu: MistralEmulator, status: int) -> None:
    emu.fail(status, times=2)
    embedder, _ = make(emu)
    embedder.embed(["hello"])
    assert embedder.stats.retries == 2 and len(emu.requests) == 3


def test_wrong_key_raises_auth_error_without_the_key(emu: MistralEmulator) -> None:
    wrong = "sk-wrong-7c1e0d9b44aa"
    embedder, sleeps = make(emu, api_key=wrong)
    with pytest.raises(AuthError) as info:
        embedder.embed(["hello"])
    message = str(info.value)
    assert "MISTRAL_API_KEY" in message and "401" in message
    assert wrong not in message and KEY not in message
    assert wrong not in repr(embedder) and wrong not in embedder.model_id
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert len(emu.requests) == 1 and sleeps == []  # never retried


def test_403_is_auth_error(emu: MistralEmulator) -> None:
    emu.fail(403, body={"message": "Forbidden"})
    embedder, _ = make(emu)
    with pytest.raises(AuthError, match="403"):
        embedder.embed(["hello"])


def test_missing_env_key_raises_input_error() -> None:
    with pytest.raises(InputError, match="MISTRAL_API_KEY"):
        MistralEmbedder()
    with pytest.raises(InputError, match="MISTRAL_API_KEY"):
        from_spec("")


def test_from_spec_reads_key_and_server_from_env(
    emu: MistralEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MISTRAL_API_KEY", KEY)
    monkeypatch.setenv("MISTRAL_SERVER_URL", emu.url)
    embedder = from_spec("")
    assert embedder.model_id == "mistral:mistral-embed" and embedder.dimension == 1024
    assert embedder.embed(["hello"]).shape == (1, 1024)
    assert emu.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"
    assert KEY not in repr(embedder)


def test_from_spec_dim_sends_output_dimension(
    emu: MistralEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MISTRAL_API_KEY", KEY)
    monkeypatch.setenv("MISTRAL_SERVER_URL", emu.url)
    embedder = from_spec("codestral-embed?dim=256")
    assert embedder.model_id == "mistral:codestral-embed?dim=256"
    out = embedder.embed(["def f(): pass"])
    assert out.shape == (1, 256)
    assert emu.requests[0]["body"]["output_dimension"] == 256
    np.testing.assert_allclose(out[0], expected_vector("def f(): pass", 256, "codestral-embed"))


@pytest.mark.parametrize("rest", ["codestral-embed", "mistral-embed?dim=x", "x?batch=3"])
def test_bad_specs_raise_spec_error(rest: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MISTRAL_API_KEY", KEY)
    with pytest.raises(SpecError):
        from_spec(rest)


def test_400_carries_the_server_message(emu: MistralEmulator) -> None:
    emu.max_batch_tokens = 5
    embedder, sleeps = make(emu)
    with pytest.raises(InputError, match="Too many tokens in batch. Max is 5 got 9") as info:
        embedder.embed(["one two three", "four five six", "seven eight nine"])
    assert "--batch-size" not in str(info.value) and sleeps == []  # issue 12: no such option


def test_unknown_model_is_input_error(emu: MistralEmulator) -> None:
    embedder, _ = make(emu, model="mistral-embedd", dimension=1024)
    with pytest.raises(InputError, match="Invalid model: mistral-embedd"):
        embedder.embed(["hello"])


def test_422_detail_is_reported(emu: MistralEmulator) -> None:
    detail = [{"loc": ["body", "input"], "msg": "Input should be a valid list", "type": "x"}]
    emu.fail(422, body={"detail": detail})
    embedder, _ = make(emu)
    with pytest.raises(InputError, match="body.input: Input should be a valid list"):
        embedder.embed(["hello"])


def test_slow_reply_times_out_then_backend_unavailable(emu: MistralEmulator) -> None:
    emu.delay_s = 0.6
    embedder, sleeps = make(emu, retries=1, timeout_s=0.15)
    with pytest.raises(BackendUnavailableError, match="Timeout"):
        embedder.embed(["hello"])
    assert len(sleeps) == 1


def test_connection_refused_is_transient_then_unavailable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    embedder = MistralEmbedder(
        api_key=KEY,
        server_url=f"http://127.0.0.1:{port}",
        retry=RetryPolicy(max_retries=1, base_delay=0.001),
        sleep=lambda _s: None,
    )
    with pytest.raises(BackendUnavailableError, match="127.0.0.1"):
        embedder.embed(["hello"])
    assert embedder.stats.requests == 2


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "mistralai" or m.startswith("mistralai.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mistralai", None)  # makes every import of it fail
    with pytest.raises(MissingDependencyError, match=r"indexcheck\[mistral\]"):
        MistralEmbedder(api_key=KEY)


def test_repr_hides_credentials_in_server_url() -> None:
    embedder = MistralEmbedder(api_key=KEY, server_url="http://user:pw-secret@127.0.0.1:9")
    assert "pw-secret" not in repr(embedder) and KEY not in repr(embedder)
    assert "127.0.0.1:9" in repr(embedder)


def test_pacing_comes_as_one_value_or_keyword_by_keyword() -> None:
    from indexcheck.remote.waiting import Pacing

    policy, nap = RetryPolicy(max_retries=1), (lambda _s: None)
    one = MistralEmbedder(api_key=KEY, pacing=Pacing(retry=policy, timeout=3.0, sleep=nap))
    each = MistralEmbedder(api_key=KEY, retry=policy, timeout_s=3.0, sleep=nap)
    for e in (one, each):
        assert e.retry is policy and e.timeout_s == 3.0 and e._sleep is nap
