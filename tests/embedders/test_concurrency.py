"""--concurrency N for hosted embedders: never more than N requests in flight; 429s honoured."""

from __future__ import annotations

import time

import numpy as np

from indexcheck.embedders.base import RetryPolicy
from indexcheck.embedders.mistral.embedder import MistralEmbedder
from tests.emulators.mistral_emulator import MistralEmulator, expected_vector

KEY = "test-mistral-key"
TEXTS = [f"paragraph {i} about library cards and loans" for i in range(96)]


def _embedder(emu: MistralEmulator, n: int, sleeps: list[float]) -> MistralEmbedder:
    def sleep(s: float) -> None:
        sleeps.append(s)
        time.sleep(min(s, 0.2))

    e = MistralEmbedder(
        api_key=KEY,
        server_url=emu.url,
        batch_size=4,
        retry=RetryPolicy(max_retries=6, base_delay=0.001, max_delay=5.0),
        sleep=sleep,
    )
    e.concurrency = n
    return e


def test_no_more_than_n_requests_in_flight_and_rows_stay_in_order() -> None:
    with MistralEmulator(api_key=KEY) as emu:
        emu.delay_s = 0.05
        out = _embedder(emu, 3, []).embed(TEXTS)
        assert emu.max_in_flight == 3  # 24 batches of 4: the bound is reached, never passed
    for i in (0, 37, 95):
        np.testing.assert_allclose(out[i], expected_vector(TEXTS[i]), atol=1e-6)


def test_a_429_with_retry_after_holds_every_worker() -> None:
    with MistralEmulator(api_key=KEY) as emu:
        emu.delay_s = 0.02
        emu.fail(429, times=2, retry_after=0.15)
        sleeps: list[float] = []
        e = _embedder(emu, 4, sleeps)
        out = e.embed(TEXTS[:32])
        assert emu.max_in_flight <= 4
        assert e.stats.retries == 2 and e.stats.texts == 32
        assert any(abs(s - 0.15) < 1e-9 for s in sleeps)  # the server's Retry-After, not a guess
        np.testing.assert_allclose(out[31], expected_vector(TEXTS[31]), atol=1e-6)


def test_sequential_by_default() -> None:
    with MistralEmulator(api_key=KEY) as emu:
        emu.delay_s = 0.01
        _embedder(emu, 1, []).embed(TEXTS[:16])
        assert emu.max_in_flight == 1
