"""One BLAS thread for the matrix products that run beside indexcheck's own threads.

OpenBLAS starts a thread per core and its threads spin while they wait for one. When the
command's own threads already keep the cores busy (the diff-index band pass decodes the
two vector columns on two threads while the main thread keys and compares), each product
waits for spinning threads: on this 2-core machine the LSH product of 1.6M x 384 rows took
4.1 s beside the readers against 0.8 s alone, and the run spent 5 s in the kernel. With one
BLAS thread during the run, diff-index of that pair went from 15.5 s to 10.0 s.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS limited to one thread in the block (the caller's own threads are the
    parallelism); the previous limits come back after it, also when it raises."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


__all__ = ["one_blas_thread"]
