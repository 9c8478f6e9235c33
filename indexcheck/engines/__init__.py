"""Where the embed-and-compare blocks and exact ground-truth blocks run: here, or on Ray.

An engine has these methods, all order-preserving generators:

- ``embed_blocks(embedder, blocks)``: float32 ``(len(block), d)`` per block of texts;
- ``read_on_workers(embedder, source, block)``: None when the chunks must be read here,
  else ``(ids, text digests uint64 (m, 2), float32 (m, d))`` per block read and embedded
  elsewhere (:class:`~.ray.engine.RayEngine` on a Ray Data pipeline);
- ``map(fn, items)``: ``fn(item)`` for each item (``fn`` and items must pickle for Ray).

:class:`LocalEngine` runs them in this process; :class:`~.ray.engine.RayEngine` on a Ray
cluster, the embedder opened once per worker from its spec (:mod:`.ray.worker`). Ray is
imported only when a RayEngine is made.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, closing
from typing import Any, TypeVar

import numpy as np

from ..errors import InputError
from .ray.engine import RAY_ERRORS, RayEngine

T = TypeVar("T")
R = TypeVar("R")


class LocalEngine:
    """Everything in this process, one block after another."""

    name = "local"

    def embed_blocks(self, embedder: Any, blocks: Iterable[list[str]]) -> Iterator[np.ndarray]:
        for texts in blocks:
            yield embedder.embed(texts)

    def read_on_workers(self, embedder: Any, source: Any, block: int) -> None:
        """None: the chunks are read in this process."""
        return None

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        for item in items:
            yield fn(item)

    def close(self) -> None:
        return None


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


__all__ = ["RAY_ERRORS", "LocalEngine", "RayEngine", "entered_engine", "open_engine"]
