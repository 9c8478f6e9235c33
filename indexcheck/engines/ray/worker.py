"""What runs on a Ray worker: the embedder opened once per worker from its spec, and the
one named actor that paces a hosted embedder across the cluster.

:class:`EmbedWorker` is the callable class of the ``map_batches`` stage (and of the actor
pool the driver feeds when it reads the blocks itself). Its constructor opens the embedder
from the spec the driver sends (never a pickled model: an OpenVINO or onnxruntime session
does not pickle); a failure there is kept and raised with the first block, as a
:class:`WorkerFailure` the driver maps (:func:`indexcheck.engines.ray.engine.raised`).

:class:`RateGate` holds ``--concurrency`` slots for the whole cluster and one Retry-After
deadline: every request of every worker takes a slot first and waits out the deadline.
"""

from __future__ import annotations

import asyncio
import os
import time
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

from ...errors import IndexcheckError, TransientError
from ...inputs.chunk_stream import text_digests

_COST = ("requests", "tokens", "texts", "seconds", "retries")


class WorkerFailure(Exception):
    """What went wrong on a worker, in plain strings (an indexcheck error class may not
    pickle): ``kind`` is ``indexcheck`` (its ``cls`` and message), ``import`` (a module the
    worker cannot import) or ``bug`` (anything else, with the worker's traceback)."""

    def __init__(self, kind: str, cls: str, message: str, trace: str) -> None:
        super().__init__(kind, cls, message, trace)
        self.kind, self.cls, self.message, self.trace = kind, cls, message, trace

    def __str__(self) -> str:
        return f"{self.cls}: {self.message}"


def failure_of(exc: BaseException) -> WorkerFailure:
    """``exc`` raised on a worker, as a :class:`WorkerFailure`."""
    trace = "".join(traceback.format_exception(exc))
    cls = f"{type(exc).__module__}.{type(exc).__qualname__}"
    if isinstance(exc, IndexcheckError):
        return WorkerFailure("indexcheck", cls, str(exc), trace)
    if isinstance(exc, ImportError):
        return WorkerFailure("import", cls, str(exc), trace)
    return WorkerFailure("bug", cls, f"{exc}", trace)


class RateGate:
    """``slots`` requests in flight across the cluster; a 429's Retry-After (``hold``)
    stops every new request until it has passed (on this actor's clock only)."""

    def __init__(self, slots: int) -> None:
        self.slots = asyncio.Semaphore(max(1, slots))
        self.until = 0.0

    async def acquire(self) -> None:
        await self.slots.acquire()
        while (wait := self.until - time.time()) > 0:
            await asyncio.sleep(wait)

    async def release(self) -> None:
        self.slots.release()

    async def hold(self, seconds: float) -> None:
        self.until = max(self.until, time.time() + seconds)


def _base(embedder: Any) -> Any:
    """The provider under prefix and cache wrappers (the one that sends requests)."""
    while not hasattr(embedder, "_request") and hasattr(embedder, "inner"):
        embedder = embedder.inner
    return embedder


def gate_requests(embedder: Any, gate: Any, get: Callable[[Any], Any]) -> None:
    """Send every request of ``embedder``'s provider through ``gate`` (a RateGate actor
    handle; ``get`` is ``ray.get``): a slot first, a 429's Retry-After told to the gate
    before the slot is given back."""
    target = _base(embedder)
    plain = target._request

    def request(texts: list[Any]) -> Any:
        get(gate.acquire.remote())
        try:
            return plain(texts)
        except TransientError as exc:
            if exc.rate_limited and exc.retry_after is not None:
                get(gate.hold.remote(min(target.retry.max_delay, exc.retry_after)))
            raise
        finally:
            get(gate.release.remote())

    target._request = request


class EmbedWorker:
    """One per worker: the embedder opened from ``spec`` (or ``pickled``, an embedder the
    caller built as an object, cloudpickled), ``concurrency`` requests at once, through the
    RateGate named ``gate`` when there is one; ``env`` set before it opens."""

    def __init__(
        self,
        spec: str | None,
        pickled: bytes | None = None,
        concurrency: int = 1,
        gate: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.failure: WorkerFailure | None = None
        self.embedder: Any = None
        try:
            os.environ.update(env or {})
            if pickled is not None:
                import cloudpickle

                self.embedder = cloudpickle.loads(pickled)
            else:
                from ...embedders import open_embedder

                self.embedder = open_embedder(spec)
            base = _base(self.embedder)
            if concurrency > 1 and hasattr(base, "_request"):
                base.concurrency = concurrency
            if gate is not None and hasattr(base, "_request"):
                import ray

                gate_requests(self.embedder, ray.get_actor(gate), ray.get)
        except BaseException as exc:  # raised with the first block, where Ray reports it
            self.failure = failure_of(exc)

    def embed(self, texts: list[str]) -> tuple[np.ndarray, dict[str, Any], list[str]]:
        """float32 (n, d) vectors of ``texts``, what they cost, the hashes of texts cut."""
        if self.failure is not None:
            raise self.failure
        try:
            stats = getattr(self.embedder, "stats", None)
            before = {k: getattr(stats, k, 0) for k in _COST}
            vectors = np.asarray(self.embedder.embed(texts), np.float32)
            cost = {k: getattr(stats, k, 0) - before[k] for k in _COST}
            cut = getattr(self.embedder, "truncated", None) or ()
            return vectors, cost, sorted(cut)
        except BaseException as exc:
            raise failure_of(exc) from None

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The ``map_batches`` stage: ``id``/``text`` columns in, ``id``, ``digest``
        (uint64 (n, 2), the texts' xxh3-128), ``vector`` float32 (n, d) and ``cost`` out."""
        texts = [str(t) for t in batch["text"]]
        vectors, cost, cut = self.embed(texts)
        n = len(texts)
        meta = np.full(n, "", object)
        if n:
            import json

            meta[0] = json.dumps({"cost": cost, "truncated": cut, "rows": n})
        return {
            "id": np.asarray([str(i) for i in batch["id"]], object),
            "digest": text_digests(texts),
            "vector": vectors,
            "meta": meta,
        }


class CompareWorker(EmbedWorker):
    """The ``map_batches`` stage that also compares: the embedder and the store opened once
    per worker (``compare`` is the command's picklable comparison: it opens the store and
    compares a block, see :class:`indexcheck.commands.check_index.stream.compare.StoredCompare`)."""

    def __init__(self, compare: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.compare = compare
        self.store: Any = None
        if self.failure is None:
            try:
                self.store = compare.opened()
            except BaseException as exc:
                self.failure = failure_of(exc)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``id``/``text`` in; ``id``, ``digest``, ``status`` uint8, ``cosine`` float32,
        ``dim`` int32 (stored lengths), ``low`` (the unit stored vector's bytes of a LOW
        row, else empty), ``near`` int32 (a LOW row's nearest match in its window within
        this batch, as an offset; 0: none), ``fresh`` float32 (n, d) unit vectors, ``meta``
        (the first row's: cost, texts cut, the batch's rows) out."""
        from ...vectors import normalize_rows

        out = super().__call__(batch)
        ids = [str(i) for i in out["id"]]
        fresh = normalize_rows(np.asarray(out["vector"], np.float32))
        try:
            st, cos, dims, low_at, low = self.compare(self.store, ids, fresh)
            near = self.compare.near(fresh, low_at, low)
        except BaseException as exc:
            raise failure_of(exc) from None
        lows = np.full(len(ids), b"", object)
        for r, row in zip(low_at.tolist(), low, strict=True):
            lows[r] = row.tobytes()
        del out["vector"]
        return {**out, "status": st, "cosine": cos, "dim": dims, "low": lows, "near": near,
                "fresh": fresh}  # fmt: skip


__all__ = [
    "CompareWorker", "EmbedWorker", "RateGate", "WorkerFailure", "failure_of", "gate_requests",
]  # fmt: skip
