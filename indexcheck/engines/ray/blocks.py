"""What the Ray engine leaves on the cluster, and the actors the driver feeds itself.

:class:`RemoteFresh` reads the unit fresh vectors a compared dataset holds by position, or
runs a function where their blocks are (only what it returns travels). :class:`ActorPool`
is the pool of :class:`~.worker.EmbedWorker` actors the driver sends the blocks it
reads to; a lost actor's blocks go to the others.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ...errors import BackendUnavailableError
from .worker import EmbedWorker


class ActorPool:
    """``size`` EmbedWorker actors the driver feeds in turn. An actor lost with its
    process or node (``RayActorError``) leaves the pool and the block it held goes to
    the next one; a pool left with none is exit 3."""

    def __init__(self, ray: Any, kwargs: dict[str, Any], size: int) -> None:
        self.ray = ray
        remote = ray.remote(num_cpus=1, max_restarts=0)(EmbedWorker)
        self.actors = [remote.remote(**kwargs) for _ in range(size)]
        self.turn = 0

    def submit(self, texts: list[str]) -> tuple[Any, Any]:
        if not self.actors:
            raise BackendUnavailableError("every Ray worker embedding the blocks was lost")
        actor = self.actors[self.turn % len(self.actors)]
        self.turn += 1
        return actor, actor.embed.remote(texts)

    def get(self, job: tuple[Any, Any], texts: list[str]) -> Any:
        """The job's result; sent again to another actor while its actor is lost."""
        from ray.exceptions import RayActorError

        while True:
            actor, ref = job
            try:
                return self.ray.get(ref)
            except RayActorError:
                if actor in self.actors:
                    self.actors.remove(actor)
                job = self.submit(texts)

    def close(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor)


def _rows_in(block: Any) -> int:
    return int(block.num_rows)


def _rows_at(vectors: np.ndarray, start: int, positions: np.ndarray) -> np.ndarray:
    """float32 (k, d): the rows of a block (first position ``start``) at ``positions``."""
    return np.ascontiguousarray(vectors[np.asarray(positions, np.int64) - start])


def _on_block(block: Any, d: int, start: int, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(unit fresh vectors float32 (m, d), start, *args)`` on a compared block, where
    the block is."""
    from ray.data.block import BlockAccessor

    vectors = np.asarray(BlockAccessor.for_block(block).to_numpy("fresh"), np.float32)
    return fn(vectors.reshape(-1, d), start, *args)


class RemoteFresh:
    """The unit fresh vectors of a compared dataset, read by position like the scratch
    file of the local engine (``n``, ``d``, ``read``, ``take``): the blocks that hold them
    are fetched from the object store, the last few kept."""

    KEEP = 4

    def __init__(self, ray: Any, done: Any, d: int) -> None:
        self.ray, self.d = ray, d
        self.refs = done.to_arrow_refs()
        rows = ray.get([ray.remote(num_cpus=0)(_rows_in).remote(r) for r in self.refs])
        self.starts = np.concatenate([[0], np.cumsum(rows, dtype=np.int64)])
        self.n = int(self.starts[-1])
        self._kept: dict[int, np.ndarray] = {}

    def _block(self, j: int) -> np.ndarray:
        if j not in self._kept:
            from ray.data.block import BlockAccessor

            table = self.ray.get(self.refs[j])
            vectors = BlockAccessor.for_block(table).to_numpy("fresh")
            if len(self._kept) >= self.KEEP:
                self._kept.pop(next(iter(self._kept)))
            self._kept[j] = np.asarray(vectors, np.float32).reshape(-1, self.d)
        return self._kept[j]

    def read(self, start: int, stop: int) -> np.ndarray:
        """float32 (stop - start, d): the unit fresh vectors at positions start..stop-1."""
        parts = []
        j = int(np.searchsorted(self.starts, start, "right")) - 1
        while start < stop:
            lo = int(self.starts[j])
            hi = min(stop, int(self.starts[j + 1]))
            parts.append(self._block(j)[start - lo : hi - lo])
            start, j = hi, j + 1
        if not parts:
            return np.zeros((0, self.d), np.float32)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def map_blocks(
        self, fn: Callable[..., Any], *args: Any, lo: int = 0, hi: int | None = None
    ) -> Iterator[tuple[int, Any]]:
        """(first position, ``fn(vectors, first position, *args)``) per block that holds a
        position in ``lo..hi-1`` (every block by default), in order, each run as a Ray task
        where the block is (the vectors never come here); ``args`` are sent once. At most
        ``2 x cluster CPUs`` blocks in flight."""
        ray = self.ray
        task = ray.remote(num_cpus=1)(_on_block)
        shared = [ray.put(a) for a in args]
        window = max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
        queue: deque[tuple[int, Any]] = deque()
        first = int(np.searchsorted(self.starts, lo, "right")) - 1
        last = len(self.refs) if hi is None else int(np.searchsorted(self.starts, hi, "left"))
        for j in range(max(0, first), min(len(self.refs), last)):
            ref, start = self.refs[j], int(self.starts[j])
            queue.append((start, task.remote(ref, self.d, start, fn, *shared)))
            if len(queue) >= window:
                at, job = queue.popleft()
                yield at, ray.get(job)
        while queue:
            at, job = queue.popleft()
            yield at, ray.get(job)

    def take(self, positions: np.ndarray) -> np.ndarray:
        """float32 (len(positions), d), in the order asked: each block that holds some
        picks them where it is, so only the rows asked travel."""
        positions = np.asarray(positions, np.int64)
        out = np.empty((len(positions), self.d), np.float32)
        if not len(positions):
            return out
        block_of = np.searchsorted(self.starts, positions, "right") - 1
        task = self.ray.remote(num_cpus=1)(_on_block)
        jobs = []
        for j in np.unique(block_of).tolist():
            at = block_of == j
            start = int(self.starts[j])
            jobs.append((at, task.remote(self.refs[j], self.d, start, _rows_at, positions[at])))
        for at, job in jobs:
            out[at] = self.ray.get(job)
        return out

    def close(self) -> None:
        self._kept.clear()
        self.refs = []


__all__ = ["ActorPool", "RemoteFresh"]
