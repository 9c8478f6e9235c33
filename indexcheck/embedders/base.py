"""The Embedder Protocol, and the one base class that does batching, retries and accounting.

Providers subclass :class:`BaseEmbedder` and implement ``_embed_batch`` for one request;
a hosted one names its SDK's rows of the one error table (``errors``), through which the base
translates what a request raises: a 429 or a transient 5xx becomes a
:class:`~indexcheck.errors.TransientError`, retried with exponential backoff; auth and bad
input the matching :class:`~indexcheck.errors.IndexcheckError`, not retried; nor is a
TransientError whose cause no retry can fix (:func:`indexcheck.remote.http.cannot_succeed`: a
malformed request, a 400/401/403/404/422), whatever the provider called it.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from ..errors import BackendUnavailableError, EmbedderOutputError, TransientError
from ..remote.retry import CallStats, RetryHooks, RetryPolicy
from ..remote.translate import ErrorMap, translating
from ..vectors import normalize_rows

#: Row-normalise float32 (n, d); re-exported for providers.
l2_normalize = normalize_rows


@dataclass
class EmbedStats(CallStats):
    """Cost accounting: requests sent (retries included), tokens billed, texts embedded,
    seconds spent inside embedding calls, and retries made."""

    requests: int = 0
    tokens: int = 0
    texts: int = 0
    seconds: float = 0.0
    retries: int = 0


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into float32 vectors ``(n, dimension)``."""

    model_id: str
    """Identity of the model, part of every cache key (e.g. ``minilm:all-MiniLM-L6-v2-int8``)."""

    dimension: int

    @property
    def stats(self) -> EmbedStats:
        """Requests, tokens, texts and seconds spent so far."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class BaseEmbedder:
    """Batching, retries with backoff, and request/token accounting, written once.

    Subclasses set ``model_id``, ``dimension`` and ``batch_size`` and implement
    ``_embed_batch(items) -> (vectors float32 (n, d), tokens int)`` for one request.
    """

    model_id: str = ""
    dimension: int = 0
    batch_size: int = 64
    #: the SDK's rows of the error table; None: what ``_embed_batch`` raises propagates
    errors: ClassVar[ErrorMap | None] = None

    def __init__(
        self,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self.stats = EmbedStats()
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self._rng = random.Random(0)
        self.progress = progress

    def _embed_batch(self, texts: list[Any]) -> tuple[np.ndarray, int]:
        """One request: ``texts`` (or prepared items) -> (float32 (n, d), tokens billed)."""
        raise TypeError(f"{type(self).__name__} must implement _embed_batch")

    def _error_fields(self) -> dict[str, Any]:
        """Fields the messages of ``errors`` use (who, server, key_env, ...); none by default."""
        return {}

    def _request(self, texts: list[Any]) -> tuple[np.ndarray, int]:
        """One ``_embed_batch``, what it raises translated once by ``errors``."""
        with translating(self.errors, "embedding", **self._error_fields()):
            return self._embed_batch(texts)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` in batches; returns float32 ``(len(texts), dimension)``."""
        return self._batched(list(texts))

    #: requests in flight at once (hosted APIs; ``--concurrency``); 1 sends them in turn
    concurrency: int = 1
    #: requests go to a hosted API (paced across a Ray cluster by one gate)
    hosted: ClassVar[bool] = False

    def _batched(self, items: list[Any]) -> np.ndarray:
        """Run ``_embed_batch`` over ``items`` in batches of ``batch_size``, with retries;
        up to ``concurrency`` batches in flight, rows always in input order."""
        out = np.empty((len(items), self.dimension), dtype=np.float32)
        starts = range(0, len(items), self.batch_size)
        if self.concurrency > 1 and len(starts) > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
                jobs = [
                    pool.submit(self._with_retries, items[s : s + self.batch_size]) for s in starts
                ]
                for s, job in zip(starts, jobs, strict=True):
                    rows = job.result()
                    out[s : s + rows.shape[0]] = rows
                    if self.progress is not None:
                        self.progress(rows.shape[0])
            return out
        for start in starts:
            chunk = items[start : start + self.batch_size]
            out[start : start + len(chunk)] = self._with_retries(chunk)
            if self.progress is not None:
                self.progress(len(chunk))
        return out

    def _wait_for_gate(self) -> None:
        """Hold a request while a 429's Retry-After, seen by any worker, still runs."""
        gate = getattr(self, "_gate", 0.0)
        wait = gate - time.monotonic()
        if wait > 0:
            self._sleep(wait)

    def _hold_gate(self, exc: TransientError) -> None:
        """A 429 that says when to come back holds every worker until then."""
        if exc.rate_limited and exc.retry_after is not None:
            until = time.monotonic() + min(self.retry.max_delay, exc.retry_after)
            self._gate = max(getattr(self, "_gate", 0.0), until)

    def _with_retries(self, texts: list[Any]) -> np.ndarray:
        vectors, tokens = self.retry.run(
            lambda: self._request(texts),
            who=self.model_id,
            rate_fix="try again later (embeddings already cached with --cache are not "
            "requested again)",
            hooks=RetryHooks(
                sleep=self._sleep,
                rng=self._rng,
                stats=self.stats,
                before=self._wait_for_gate if self.concurrency > 1 else None,
                on_transient=self._hold_gate,
            ),
        )
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.shape != (len(texts), self.dimension):
            raise BackendUnavailableError(
                f"{self.model_id}: returned vectors of shape {vectors.shape} for "
                f"{len(texts)} texts of dimension {self.dimension}"
            )
        bad = ~np.isfinite(vectors).all(axis=1) | ~vectors.any(axis=1)
        if bad.any():
            first = int(np.argmax(bad))
            raise EmbedderOutputError(
                f"{self.model_id} returned NaN, infinite or all-zero vectors for "
                f"{int(bad.sum())} of {len(texts)} texts (first: text {first} of its "
                "batch); no verdict on the index can rest on them: fix the embedder"
            )
        self.stats.tokens += int(tokens)
        self.stats.texts += len(texts)
        return vectors
