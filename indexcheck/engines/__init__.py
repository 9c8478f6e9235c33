"""Where the embed-and-compare blocks and exact ground-truth blocks run: here, or on Ray.

An engine has two methods, both order-preserving generators:

- ``embed_blocks(embedder, blocks)``: float32 ``(len(block), d)`` per block of texts;
- ``map(fn, items)``: ``fn(item)`` for each item (``fn`` and items must pickle for Ray).

:class:`LocalEngine` runs them in this process. :class:`RayEngine` sends them to a Ray
cluster as tasks, at most ``2 * CPUs`` in flight; the hash-keyed cache stays on the
driver (looked up before a block is sent, written as each block comes back), so a killed
run keeps what finished. Ray is imported only when a RayEngine is made.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, closing
from typing import Any, TypeVar

import numpy as np

from ..errors import BackendUnavailableError, InputError, MissingDependencyError
from ..remote.translate import ErrorMap, Rule, doing

T = TypeVar("T")
R = TypeVar("R")

#: Ray's rows of the error table: a head that does not answer the probe, or ray.init's refusal
RAY_ERRORS = ErrorMap(
    Rule(
        OSError,
        BackendUnavailableError,
        "cannot reach the Ray cluster at {address}: {reason}; check --ray-address (or "
        "RAY_ADDRESS): a head started with `ray start --head` listens on port 6379",
        when=doing("probing"),
    ),
    Rule(
        ConnectionError,
        BackendUnavailableError,
        "cannot reach the Ray cluster at {address}: {text}; check --ray-address",
        when=doing("connecting"),
    ),
    fields=lambda c: {"reason": getattr(c.exc, "strerror", None) or c.text},
    service="ray",
)


class LocalEngine:
    """Everything in this process, one block after another."""

    name = "local"

    def embed_blocks(self, embedder: Any, blocks: Iterable[list[str]]) -> Iterator[np.ndarray]:
        for texts in blocks:
            yield embedder.embed(texts)

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        for item in items:
            yield fn(item)

    def close(self) -> None:
        return None


_COST = ("requests", "tokens", "texts", "seconds", "retries")


def _embed_remote(embedder: Any, texts: list[str]) -> tuple[np.ndarray, dict[str, Any], set[str]]:
    """On a worker: the vectors, what they cost (the worker's copy of the stats starts
    where the driver's was), and the hashes of texts the model could not read whole."""
    stats = getattr(embedder, "stats", None)
    before = {k: getattr(stats, k, 0) for k in _COST}
    vectors = np.asarray(embedder.embed(texts), np.float32)
    cost = {k: getattr(stats, k, 0) - before[k] for k in _COST}
    return vectors, cost, set(getattr(embedder, "truncated", None) or ())


def _account(embedder: Any, cost: dict[str, Any], truncated: set[str]) -> None:
    """Add a worker's cost and truncated texts to the driver's embedder, so the manifest
    and the truncated-text warning are the same on Ray as locally."""
    stats = getattr(embedder, "stats", None)
    if stats is not None:
        for key, value in cost.items():
            setattr(stats, key, getattr(stats, key) + value)
    cut = getattr(embedder, "truncated", None)
    if truncated and isinstance(cut, set):
        cut.update(truncated)


def _call(fn: Callable[[Any], Any], item: Any) -> Any:
    return fn(item)


def _refuse_unreachable(address: str | None) -> None:
    """Exit 3 at once when nothing listens at a ``host:port`` (or ``ray://host:port``) Ray
    address: ray.init would wait minutes for the head's GCS before it gives up. Other forms
    ("auto", "local", None) are left to Ray."""
    import re
    import socket

    m = re.fullmatch(r"(?:ray://)?\[?([\w.\-:]+?)\]?:(\d+)", address or "")
    if m is None:
        return
    with RAY_ERRORS.mapping("probing", address=address):
        socket.create_connection((m.group(1), int(m.group(2))), timeout=5).close()


class RayEngine:
    """Blocks as Ray tasks on the cluster at ``address`` (None: RAY_ADDRESS, else a new
    local cluster)."""

    name = "ray"

    def __init__(self, address: str | None = None, inflight: int | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise MissingDependencyError("--engine ray", "ray") from None
        self.ray = ray
        address = address or os.environ.get("RAY_ADDRESS") or None
        self._owns = False
        if not ray.is_initialized():
            _refuse_unreachable(address)
            with RAY_ERRORS.mapping("connecting", address=address):
                ray.init(address=address, include_dashboard=False, log_to_driver=False)
            self._owns = True
        cpus = int(ray.cluster_resources().get("CPU", 1))  # type: ignore[no-untyped-call]
        self.inflight = inflight or max(2, 2 * cpus)
        self._embed = ray.remote(_embed_remote)
        self._call = ray.remote(_call)

    def _ordered(self, submit: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        """submit(item) for each item with at most ``inflight`` outstanding, in order."""
        queue: deque[Any] = deque()
        for item in items:
            queue.append(submit(item))
            if len(queue) >= self.inflight:
                yield queue.popleft()
        while queue:
            yield queue.popleft()

    def embed_blocks(self, embedder: Any, blocks: Iterable[list[str]]) -> Iterator[np.ndarray]:
        from ..embedders.cache import CachedEmbedder

        cached = isinstance(embedder, CachedEmbedder)
        inner = embedder.inner if cached else embedder
        ref = self.ray.put(inner)

        def submit(texts: list[str]) -> Any:
            if not cached:
                return texts, {}, [], self._embed.remote(ref, texts)
            known, todo = embedder.split(texts)
            return texts, known, todo, self._embed.remote(ref, todo) if todo else None

        for texts, known, todo, job in self._ordered(submit, blocks):
            fresh = None
            if job is not None:
                fresh, cost, truncated = self.ray.get(job)
                _account(inner, cost, truncated)
            if not cached:
                assert fresh is not None
                yield fresh
            else:
                yield embedder.merge(texts, known, todo, fresh)

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        ref = self.ray.put(fn)
        for job in self._ordered(lambda item: self._call.remote(ref, item), items):
            yield self.ray.get(job)

    def close(self) -> None:
        if self._owns:
            self.ray.shutdown()


def open_engine(name: str, address: str | None = None) -> LocalEngine | RayEngine:
    """``local`` or ``ray``; raises InputError for another name, MissingDependencyError
    (exit 2, with the pip line) when Ray is not installed."""
    if name == "local":
        return LocalEngine()
    if name == "ray":
        return RayEngine(address)
    raise InputError(f"unknown --engine '{name}'; use local or ray")


def entered_engine(stack: ExitStack, engine: Any, address: str | None = None) -> Any:
    """``engine`` as given, or opened from its name ("local", "ray") and closed with
    ``stack``."""
    if not isinstance(engine, str):
        return engine
    return stack.enter_context(closing(open_engine(engine, address)))
