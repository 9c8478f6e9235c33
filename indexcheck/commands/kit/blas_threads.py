"""One BLAS thread for the matrix products that run beside indexcheck's own threads.

OpenBLAS starts a thread per core and its threads spin while they wait for one. When the
command's own threads already keep the cores busy (diff-index's band pass decodes the two
vector columns on two threads while the main thread keys and compares), each product waits
for spinning threads; one BLAS thread during the run avoids that (figures on
docs/performance.md). The limit is the process's, so it is shared: the first block to enter
sets it, the last to leave gives the previous limits back (two diffs on two threads of one
process), also from another thread than the first (threadpoolctl 3.6+ lets only the thread
that set OpenBLAS's limit change it; that hold is released for the restore). A BLAS built on
OpenMP (faiss's) keeps a limit per thread: it is set for the thread that enters first, the
one doing the products when a single diff runs.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_lock = threading.Lock()
_inside = 0
_limiter: Any = None


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS limited to one thread in the block (the caller's own threads are the
    parallelism); the previous limits come back when the last such block ends, also when
    it raises."""
    global _inside, _limiter
    from threadpoolctl import threadpool_limits

    with _lock:
        if _inside == 0:
            _release_control()  # a limit another thread set earlier would make this one a no-op
            _limiter = threadpool_limits(limits=1, user_api="blas")
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0:
                _release_control()
                _limiter.restore_original_limits()
                _limiter = None


def _release_control() -> None:
    """Let this thread set or restore OpenBLAS's limit though another one set it."""
    from threadpoolctl import OpenBLASController

    clear = getattr(OpenBLASController, "clear_controlling_thread", None)
    if clear is not None:  # threadpoolctl 3.6+
        clear(force=True)


__all__ = ["one_blas_thread"]
